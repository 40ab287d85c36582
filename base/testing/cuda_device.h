// Tests only: SKIP_WITHOUT_CUDA_DEVICE() ends the current test as skipped, with CUDA's own reason,
// when device 0 cannot be used (no GPU, no driver, a driver too old), as every GPU test does.
#ifndef INFERD_BASE_TESTING_CUDA_DEVICE_H_
#define INFERD_BASE_TESTING_CUDA_DEVICE_H_

#include "base/cuda_status.h"
#include "gtest/gtest.h"

#define SKIP_WITHOUT_CUDA_DEVICE()                                \
  do {                                                            \
    if (absl::Status s = ::inferd::CheckCudaDevice(0); !s.ok()) { \
      GTEST_SKIP() << s.message();                                \
    }                                                             \
  } while (0)

#endif  // INFERD_BASE_TESTING_CUDA_DEVICE_H_

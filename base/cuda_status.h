// CUDA runtime errors as absl::Status, and whether a CUDA device is there. Built only with
// --config=cuda. Thread-safe: every function only reads the driver's state.
//
// Example:
//   INFERD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream));
//   kernel<<<grid, block, 0, stream>>>(...);
//   INFERD_RETURN_IF_ERROR(CudaLaunchStatus("binary Add"));
//
//   if (absl::Status s = CheckCudaDevice(0); !s.ok()) GTEST_SKIP() << s.message();
#ifndef INFERD_BASE_CUDA_STATUS_H_
#define INFERD_BASE_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace inferd {

// OK for cudaSuccess; otherwise "<what>: <cudaErrorName>: <description>" with a code a caller can
// act on: RESOURCE_EXHAUSTED for out-of-memory, FAILED_PRECONDITION for no device or driver,
// INVALID_ARGUMENT for invalid values, INTERNAL for the rest.
absl::Status CudaStatus(cudaError_t error, absl::string_view what);

// The error of the last kernel launch on this thread (cudaGetLastError, which also clears it).
absl::Status CudaLaunchStatus(absl::string_view what);

// The number of CUDA devices; FAILED_PRECONDITION "no CUDA device: <reason>" when the driver
// cannot be asked or has none.
absl::StatusOr<int> CudaDeviceCount();

// OK when device `ordinal` exists; otherwise FAILED_PRECONDITION, its message starting with
// "no CUDA device" (tests skip themselves with it).
absl::Status CheckCudaDevice(int ordinal);

}  // namespace inferd

// Returns from the calling function with CudaStatus(expr, "<expr>") unless it is cudaSuccess.
#define INFERD_CUDA_RETURN_IF_ERROR(expr) \
  INFERD_RETURN_IF_ERROR(::inferd::CudaStatus((expr), #expr))

#endif  // INFERD_BASE_CUDA_STATUS_H_

#include "kernels/cpu/testing/kernel_runner.h"

#include "engine/testing/kernel_tester.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::kernels::cpu::testing {
const engine::KernelRegistry& CpuRegistry() {
  static const engine::KernelRegistry* const kRegistry = [] {
    auto* r = new engine::KernelRegistry();
    absl::Status s = RegisterCpuKernels(*r);
    if (!s.ok()) ADD_FAILURE() << s;
    return r;
  }();
  return *kRegistry;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  int reported = 0;
  for (size_t i = 0; i < actual.size() && reported < 5; ++i) {
    const bool both_nan = std::isnan(actual[i]) && std::isnan(expected[i]);
    if (!both_nan && !(std::abs(actual[i] - expected[i]) <= tolerance)) {
      ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected " << expected[i]
                    << " (tolerance " << tolerance << ")";
      ++reported;
    }
  }
}

}  // namespace inferd::kernels::cpu::testing

// MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool on CUDA against the CPU kernels on
// fresh random inputs: strides, explicit and automatic pads (asymmetric ones included),
// dilations, ceil_mode (windows reaching past the padding), count_include_pad, 1-D to 3-D.
// Skips without a GPU.
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"
#include "kernels/cuda/testing/pool_cases.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;
using V = std::vector<int64_t>;

using testing::PoolCase;
using testing::PoolWindows;

void ExpectMatchesCpu(const char* op, const std::vector<PoolCase>& cases, float tolerance,
                      const std::function<void(KernelTester&)>& extra = nullptr) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  for (const PoolCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(op, " ", c.label, ": x ", c.x.ToString()));
    const TestTensor x = TestTensor::Of<float>(c.x, RandomFloats(c.x.NumElements(), -4, 4, next++));
    KernelTester t(op, 19);
    c.attrs(t);
    if (extra) extra(t);
    t.Input(x);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x});
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, tolerance);
  }
  compare.Record();
}

TEST(CudaPoolTest, MaxPoolMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  std::vector<PoolCase> cases = PoolWindows();
  cases.push_back(
      {"dilations 2", {1, 2, 12, 12}, [](KernelTester& t) {
         t.Attr("kernel_shape", V{3, 3}).Attr("dilations", V{2, 2}).Attr("pads", V{1, 1, 1, 1});
       }});
  ExpectMatchesCpu("MaxPool", cases, 0.0f);  // a max is exact
}

TEST(CudaPoolTest, AveragePoolMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  // Sums of at most 18 values in [-4, 4) in another order, then one division.
  ExpectMatchesCpu("AveragePool", PoolWindows(), 1e-5f);
}

TEST(CudaPoolTest, AveragePoolIncludingPadMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  ExpectMatchesCpu("AveragePool", PoolWindows(), 1e-5f,
                   [](KernelTester& t) { t.Attr("count_include_pad", int64_t{1}); });
}

TEST(CudaPoolTest, GlobalPoolsMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const std::vector<PoolCase> cases = {
      {"2-D", {2, 3, 7, 7}, [](KernelTester&) {}},
      {"1-D", {2, 5, 100}, [](KernelTester&) {}},
      {"3-D", {1, 4, 3, 4, 5}, [](KernelTester&) {}},
      {"one element", {3, 2, 1, 1}, [](KernelTester&) {}},
      {"large plane", {1, 2, 256, 256}, [](KernelTester&) {}},
      {"many planes", {32, 512, 7, 7}, [](KernelTester&) {}},
  };
  ExpectMatchesCpu("GlobalMaxPool", cases, 0.0f);
  // A mean of up to 65536 values in [-4, 4): float32 sums in two orders.
  ExpectMatchesCpu("GlobalAveragePool", cases, 2e-5f);
}

}  // namespace
}  // namespace inferd::kernels::cuda

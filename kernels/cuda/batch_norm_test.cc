// BatchNormalization (inference) on CUDA against the CPU kernel on fresh random inputs: ranks 2
// to 5, the per-element parameters of spatial = 0 (opsets 6-8), a large tensor. Skips without a
// GPU.
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;

TEST(CudaBatchNormTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  struct Case {
    Shape x;
    int opset;
    bool per_element;  // spatial = 0 with [C, D...] parameters
    float epsilon;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4, 5}, 15, false, 1e-5f}, {{4, 6}, 15, false, 1e-3f},
      {{2, 5, 17}, 9, false, 1e-5f},    {{1, 3, 4, 5, 6}, 14, false, 1e-5f},
      {{2, 3, 4, 5}, 7, true, 1e-5f},   {{8, 64, 32, 32}, 15, false, 1e-5f},
      {{0, 3, 4}, 15, false, 1e-5f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("x ", c.x.ToString(), " opset ", c.opset,
                              c.per_element ? " spatial = 0" : ""));
    const TestTensor x = TestTensor::Of<float>(c.x, RandomFloats(c.x.NumElements(), -4, 4, next++));
    const Shape p = c.per_element ? Shape(c.x.dims().subspan(1)) : Shape{c.x[1]};
    const int64_t n = p.NumElements();
    const TestTensor scale = TestTensor::Of<float>(p, RandomFloats(n, -2, 2, next++));
    const TestTensor bias = TestTensor::Of<float>(p, RandomFloats(n, -1, 1, next++));
    const TestTensor mean = TestTensor::Of<float>(p, RandomFloats(n, -1, 1, next++));
    const TestTensor var = TestTensor::Of<float>(p, RandomFloats(n, 0.1f, 2, next++));
    KernelTester t("BatchNormalization", c.opset);
    t.Attr("epsilon", c.epsilon);
    if (c.per_element) t.Attr("spatial", int64_t{0});
    t.Input(x)
        .Input(scale, true, true)
        .Input(bias, true, true)
        .Input(mean, true, true)
        .Input(var, true, true);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x, &scale, &bias, &mean, &var});
    ASSERT_TRUE(out.ok()) << out.status();
    // |y| < 5 * 2 / sqrt(0.1) + 1 ~ 33: a few float32 roundings of that.
    compare.ExpectNear(*out, 2e-5f);
  }
  compare.Record();
}

}  // namespace
}  // namespace inferd::kernels::cuda

// Softmax and LogSoftmax on CUDA against the CPU kernels on fresh random inputs: both axis forms
// (opsets 11 and 13), negative axes, non-last axes (the column kernel), rows long enough for the
// 1024-thread block, size-1 dims, scalars and empty tensors. Skips without a GPU.
#include <cstdint>
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

struct Case {
  Shape shape;
  int64_t axis;
};

TEST(CudaSoftmaxTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  const std::vector<Case> cases = {
      {{2, 3, 17}, -1}, {{2, 3, 17}, 1},     {{2, 3, 17}, 0},  {{2, 3, 17}, -3}, {{4, 1000}, 1},
      {{3, 20000}, -1}, {{1, 1, 5}, 2},      {{7, 1}, 1},      {{5}, 0},         {{0, 8}, 1},
      {{4, 0}, 1},      {{64, 12, 128}, -1}, {{2, 5, 3, 4}, 2}};
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int opset : {11, 13}) {
      for (const Case& c : cases) {
        SCOPED_TRACE(absl::StrCat(op, "-", opset, " ", c.shape.ToString(), " axis ", c.axis));
        std::vector<float> x = RandomFloats(c.shape.NumElements(), -8, 8, next++);
        if (x.size() > 2) x[1] = 60.0f;  // exp overflows without the max shift
        const TestTensor in = TestTensor::Of<float>(c.shape, x);
        KernelTester t(op, opset);
        t.Input(in).Attr("axis", c.axis);
        absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&in});
        ASSERT_TRUE(out.ok()) << out.status();
        compare.ExpectNear(*out, 1e-5f);
      }
    }
  }
  // A scalar and the default axes.
  const TestTensor scalar = TestTensor::Of<float>({}, {3.0f});
  for (int opset : {11, 13}) {
    KernelTester t("Softmax", opset);
    t.Input(scalar);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&scalar});
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, 0.0f);
  }
  compare.Record();
}

TEST(CudaSoftmaxTest, AxisOutOfRangeIsRefused) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const TestTensor in = TestTensor::Of<float>({2, 3}, RandomFloats(6, -1, 1, 1));
  KernelTester t("Softmax", 13);
  t.Input(in).Attr("axis", int64_t{2}).DeviceType(engine::DeviceKind::kCuda);
  auto kernel = t.Create(testing::CudaRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = testing::RunCudaKernel(**kernel, {&in}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cuda

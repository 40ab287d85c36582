// MatMul and Gemm on CUDA (cuBLAS) against the CPU kernels (oneDNN) on fresh random inputs:
// every batch layout MatMul distinguishes, 1-D operands, and Gemm's transposes, alpha, beta and
// C broadcasts. Skips without a GPU.
#include <cmath>
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

// Float32 sums of k products of values in [-1, 1) in two summation orders.
float Tolerance(int64_t k) { return 2e-6f * static_cast<float>(k) + 1e-5f; }

TEST(CudaMatMulTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 5}, {5, 3}},  // one GEMM
      {{64, 256}, {256, 96}},
      {{2, 3, 7, 5}, {5, 4}},        // one B: the batch folds into M
      {{4, 7, 5}, {4, 5, 6}},        // same batches: strided batched
      {{7, 5}, {3, 5, 6}},           // one A: strided batched, A's stride 0
      {{2, 1, 7, 5}, {1, 3, 5, 6}},  // a general broadcast: one GEMM per output matrix
      {{5}, {5, 6}},                 // 1-D A
      {{2, 7, 5}, {5}},              // 1-D B
      {{5}, {5}},                    // dot product
      {{3, 0}, {0, 4}},              // K = 0: zeros
      {{0, 5}, {5, 4}},              // M = 0
  };
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(absl::StrCat(sa.ToString(), " x ", sb.ToString()));
    const TestTensor a = TestTensor::Of<float>(sa, RandomFloats(sa.NumElements(), -1, 1, next++));
    const TestTensor b = TestTensor::Of<float>(sb, RandomFloats(sb.NumElements(), -1, 1, next++));
    KernelTester t("MatMul", 13);
    t.Input(a).Input(b);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&a, &b});
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, Tolerance(sa[sa.rank() - 1]));
  }
  compare.Record();
}

TEST(CudaGemmTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  const int64_t m = 13, k = 37, n = 11;
  const std::vector<Shape> c_shapes = {Shape{},     Shape{n},    Shape{1, n},
                                       Shape{m, 1}, Shape{m, n}, Shape{1}};
  for (int trans_a : {0, 1}) {
    for (int trans_b : {0, 1}) {
      for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {  // the last: no C
        const bool has_c = ci < c_shapes.size();
        const float alpha = 0.5f + static_cast<float>(next % 7) / 4;
        const float beta = has_c && ci % 2 == 0 ? 0.0f : -1.25f;
        SCOPED_TRACE(absl::StrCat("transA ", trans_a, " transB ", trans_b, " C ",
                                  has_c ? c_shapes[ci].ToString() : "none", " alpha ", alpha,
                                  " beta ", beta));
        const Shape sa = trans_a ? Shape{k, m} : Shape{m, k};
        const Shape sb = trans_b ? Shape{n, k} : Shape{k, n};
        const TestTensor a = TestTensor::Of<float>(sa, RandomFloats(m * k, -1, 1, next++));
        const TestTensor b = TestTensor::Of<float>(sb, RandomFloats(k * n, -1, 1, next++));
        TestTensor c;
        if (has_c) {
          c = TestTensor::Of<float>(c_shapes[ci],
                                    RandomFloats(c_shapes[ci].NumElements(), -1, 1, next++));
        }
        KernelTester t("Gemm", 13);
        t.Attr("transA", int64_t{trans_a})
            .Attr("transB", int64_t{trans_b})
            .Attr("alpha", alpha)
            .Attr("beta", beta)
            .Input(a)
            .Input(b);
        std::vector<const TestTensor*> inputs = {&a, &b};
        if (has_c) {
          t.Input(c);
          inputs.push_back(&c);
        }
        absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(out->cuda[0].shape, (Shape{m, n}));
        compare.ExpectNear(*out, Tolerance(k) * alpha + 1e-5f);
      }
    }
  }
  compare.Record();
}

TEST(CudaMatMulTest, InnerDimensionsThatDifferAreRefused) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const TestTensor a = TestTensor::Of<float>({2, 3}, RandomFloats(6, -1, 1, 1));
  const TestTensor b = TestTensor::Of<float>({4, 2}, RandomFloats(8, -1, 1, 2));
  KernelTester t("MatMul", 13);
  t.Input(a).Input(b).DeviceType(engine::DeviceKind::kCuda);
  auto kernel = t.Create(testing::CudaRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = testing::RunCudaKernel(**kernel, {&a, &b}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cuda

// LayerNormalization, SimplifiedLayerNormalization and com.microsoft SkipLayerNormalization /
// SkipSimplifiedLayerNormalization on CUDA against the CPU kernels on fresh random inputs: every
// axis (negative too), with and without bias, the statistics outputs, a skip broadcast over the
// batch, rows long enough for the 512-thread block, rows with a large mean. Skips without a GPU.
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
using testing::MaxAbsDiff;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;

// Every output of `out` within `tolerance`, output 0 recorded in `compare`.
void ExpectAllNear(const testing::CpuAndCuda& out, float tolerance,
                   testing::CpuComparison& compare) {
  compare.ExpectNear(out, tolerance);
  ASSERT_EQ(out.cuda.size(), out.cpu.size());
  for (size_t i = 1; i < out.cpu.size(); ++i) {
    if (out.cpu[i].bytes.empty() && out.cuda[i].bytes.empty()) continue;
    EXPECT_EQ(out.cuda[i].shape, out.cpu[i].shape) << "output " << i;
    EXPECT_LE(MaxAbsDiff(out.cuda[i].values<float>(), out.cpu[i].values<float>()), tolerance)
        << "output " << i;
  }
}

TEST(CudaLayerNormTest, LayerNormalizationMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  struct Case {
    Shape shape;
    int64_t axis;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 16}, -1},
                                         {{2, 3, 16}, 1},
                                         {{2, 3, 16}, 0},
                                         {{2, 3, 16}, -2},
                                         {{8, 4096}, -1},
                                         {{3, 1}, 1},
                                         {{0, 8}, 1}}) {
    for (bool bias : {false, true}) {
      SCOPED_TRACE(absl::StrCat(c.shape.ToString(), " axis ", c.axis, bias ? " bias" : ""));
      const int64_t axis = c.axis < 0 ? c.axis + c.shape.rank() : c.axis;
      const Shape normalized(c.shape.dims().subspan(axis));
      std::vector<float> xv = RandomFloats(c.shape.NumElements(), -3, 3, next++);
      for (size_t i = 0; i < xv.size() / 2; ++i) xv[i] += 100.0f;  // a large mean
      const TestTensor x = TestTensor::Of<float>(c.shape, xv);
      const TestTensor scale = TestTensor::Of<float>(
          normalized, RandomFloats(normalized.NumElements(), 0.5f, 2, next++));
      const TestTensor b =
          TestTensor::Of<float>(normalized, RandomFloats(normalized.NumElements(), -1, 1, next++));
      KernelTester t("LayerNormalization", 17);
      t.Input(x).Input(scale);
      std::vector<const TestTensor*> inputs = {&x, &scale};
      if (bias) {
        t.Input(b);
        inputs.push_back(&b);
      }
      t.Attr("axis", c.axis).Attr("epsilon", 1e-5f).Outputs(3);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs, 3);
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectAllNear(*out, 5e-4f, compare);
    }
  }
  compare.Record();
}

TEST(CudaLayerNormTest, SimplifiedAndSkipFormsMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  // SimplifiedLayerNormalization (RMS), with its inv_std_var output.
  for (int64_t axis : {-1, 1}) {
    const Shape shape = {4, 6, 32};
    const int64_t d = axis == -1 ? 32 : 6 * 32;
    const TestTensor x =
        TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), -2, 2, next++));
    const TestTensor scale = TestTensor::Of<float>({d}, RandomFloats(d, 0.5f, 2, next++));
    KernelTester t("SimplifiedLayerNormalization", 1);
    t.Input(x).Input(scale).Attr("axis", axis).Outputs(2);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x, &scale}, 2);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectAllNear(*out, 1e-5f, compare);
  }
  // Skip forms: [B, S, H] and [N, H], skip full or broadcast over the batch, optional beta and
  // bias, all four outputs.
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    const bool simplified = std::string(op) == "SkipSimplifiedLayerNormalization";
    for (const Shape& shape : {Shape{2, 5, 64}, Shape{7, 3000}}) {
      const int64_t h = shape[shape.rank() - 1];
      for (bool broadcast_skip : {false, true}) {
        for (bool extras : {false, true}) {
          SCOPED_TRACE(absl::StrCat(op, " ", shape.ToString(), broadcast_skip ? " skip[S,H]" : "",
                                    extras ? " beta/bias" : ""));
          Shape skip_shape = shape;
          if (broadcast_skip) skip_shape = Shape(shape.dims().subspan(1));
          const TestTensor x =
              TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), -2, 2, next++));
          const TestTensor skip = TestTensor::Of<float>(
              skip_shape, RandomFloats(skip_shape.NumElements(), -2, 2, next++));
          const TestTensor gamma = TestTensor::Of<float>({h}, RandomFloats(h, 0.5f, 2, next++));
          const TestTensor beta = TestTensor::Of<float>({h}, RandomFloats(h, -1, 1, next++));
          const TestTensor bias = TestTensor::Of<float>({h}, RandomFloats(h, -1, 1, next++));
          KernelTester t(op, 1, "com.microsoft");
          t.Input(x).Input(skip).Input(gamma);
          std::vector<const TestTensor*> inputs = {&x, &skip, &gamma};
          if (extras) {
            if (!simplified) {
              t.Input(beta);
              inputs.push_back(&beta);
            }
            t.Input(bias);
            inputs.push_back(&bias);
          }
          t.Attr("epsilon", 1e-6f).Outputs(4);
          absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs, 4);
          ASSERT_TRUE(out.ok()) << out.status();
          ExpectAllNear(*out, 2e-5f, compare);
        }
      }
    }
  }
  compare.Record();
}

}  // namespace
}  // namespace inferd::kernels::cuda

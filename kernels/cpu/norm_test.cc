// BatchNormalization (inference; opset 7 spatial = 0, 9, 15) and InstanceNormalization against
// naive references; training mode and statistics outputs refused at load; bad parameter shapes;
// 1 vs 2 threads.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

// Parameters indexed by channel, or (spatial = 0) by channel and position in the sample.
std::vector<float> RefBatchNorm(const std::vector<float>& x, const Shape& s,
                                const std::vector<float>& scale, const std::vector<float>& bias,
                                const std::vector<float>& mean, const std::vector<float>& var,
                                float epsilon, bool per_element) {
  const int64_t n = s[0], c = s[1], plane = s.SizeFrom(2);
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t q = per_element ? ch * plane + p : ch;
        const int64_t at = (i * c + ch) * plane + p;
        y[at] = static_cast<float>(
            (x[at] - mean[q]) / std::sqrt(double(var[q]) + epsilon) * scale[q] + bias[q]);
      }
  return y;
}

std::vector<float> RunBatchNorm(int opset, const Shape& s, const std::vector<float>& x,
                                const Shape& ps, const std::vector<float>* params, float epsilon,
                                std::optional<int64_t> spatial, int threads = 1) {
  KernelTester t("BatchNormalization", opset);
  t.Attr("epsilon", epsilon).Input<float>(s, x).Threads(threads);
  if (spatial) t.Attr("spatial", *spatial);
  for (int i = 0; i < 4; ++i) t.Input<float>(ps, params[i], /*constant=*/true);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), s);
  return Values<float>((*out)[0]);
}

TEST(BatchNormTest, PerChannelAcrossOpsets) {
  const Shape s{2, 3, 4, 5};
  const auto x = RandomFloats(s.NumElements(), 1, -3.0f, 3.0f);
  const std::vector<float> params[4] = {RandomFloats(3, 2), RandomFloats(3, 3), RandomFloats(3, 4),
                                        RandomFloats(3, 5, 0.1f, 2.0f)};
  const auto expected =
      RefBatchNorm(x, s, params[0], params[1], params[2], params[3], 1e-3f, false);
  for (int opset : {6, 7, 9, 14, 15}) {
    SCOPED_TRACE(opset);
    ExpectNear(RunBatchNorm(opset, s, x, {3}, params, 1e-3f, std::nullopt), expected, 1e-5f);
  }
  EXPECT_EQ(RunBatchNorm(15, s, x, {3}, params, 1e-3f, std::nullopt, 2),
            RunBatchNorm(15, s, x, {3}, params, 1e-3f, std::nullopt, 1));
  // Rank 2 ([N, C]) works too.
  const std::vector<float> x2 = RandomFloats(6, 6);
  ExpectNear(RunBatchNorm(15, {2, 3}, x2, {3}, params, 1e-3f, std::nullopt),
             RefBatchNorm(x2, {2, 3}, params[0], params[1], params[2], params[3], 1e-3f, false),
             1e-5f);
}

TEST(BatchNormTest, SpatialZeroInOpset7) {
  const Shape s{2, 3, 4};
  const auto x = RandomFloats(s.NumElements(), 7);
  const std::vector<float> params[4] = {RandomFloats(12, 8), RandomFloats(12, 9),
                                        RandomFloats(12, 10), RandomFloats(12, 11, 0.1f, 2.0f)};
  ExpectNear(RunBatchNorm(7, s, x, {3, 4}, params, 1e-5f, 0),
             RefBatchNorm(x, s, params[0], params[1], params[2], params[3], 1e-5f, true), 1e-5f);
}

TEST(BatchNormTest, TrainingModeUsesBatchStatistics) {
  // X [2, 2, 2]: channel 0 holds {1, 2, 5, 6} (mean 3.5, variance 4.25), channel 1 {3, 4, 7, 8}
  // (mean 5.5, variance 4.25).
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  KernelTester t("BatchNormalization", 15);
  t.Attr("training_mode", int64_t{1}).Attr("momentum", 0.75f).Attr("epsilon", 0.0f);
  t.Input<float>({2, 2, 2}, x)
      .Input<float>({2}, {1, 2})   // scale
      .Input<float>({2}, {0, 1})   // B
      .Input<float>({2}, {0, 10})  // input_mean
      .Input<float>({2}, {1, 2})   // input_var
      .Outputs(3);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const double sd = std::sqrt(4.25);
  const double mean[2] = {3.5, 5.5}, scale[2] = {1, 2}, bias[2] = {0, 1};
  const std::vector<float> y = Values<float>((*out)[0]);
  for (int i = 0; i < 8; ++i) {
    const int c = (i / 2) % 2;
    EXPECT_NEAR(y[i], (x[i] - mean[c]) / sd * scale[c] + bias[c], 1e-5) << i;
  }
  ExpectNear(Values<float>((*out)[1]), {0.75f * 0 + 0.25f * 3.5f, 0.75f * 10 + 0.25f * 5.5f},
             1e-6f);
  ExpectNear(Values<float>((*out)[2]), {0.75f * 1 + 0.25f * 4.25f, 0.75f * 2 + 0.25f * 4.25f},
             1e-6f);
}

TEST(BatchNormTest, RefusedAndBadShapes) {
  KernelTester stats("BatchNormalization", 9);
  stats.Input<float>({1, 2}, {1, 2}).Outputs(3);
  for (int i = 0; i < 4; ++i) stats.Input<float>({2}, {1, 1});
  auto out = stats.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();

  KernelTester bad("BatchNormalization", 15);
  bad.Input<float>({1, 2, 2}, {1, 2, 3, 4});
  for (int i = 0; i < 4; ++i) bad.Input<float>({3}, {1, 1, 1});
  out = bad.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_BatchNormalization' (BatchNormalization): scale (input 1) has shape [3], "
            "expected 2 values ([C])");
}

TEST(InstanceNormTest, AgainstReference) {
  const Shape s{2, 3, 7, 9};
  const auto x = RandomFloats(s.NumElements(), 12, -2.0f, 4.0f);
  const auto scale = RandomFloats(3, 13), bias = RandomFloats(3, 14);
  std::vector<float> expected(x.size());
  const int64_t plane = 63;
  for (int64_t nc = 0; nc < 6; ++nc) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < plane; ++i) sum += x[nc * plane + i];
    const double mean = sum / plane;
    for (int64_t i = 0; i < plane; ++i)
      sq += (x[nc * plane + i] - mean) * (x[nc * plane + i] - mean);
    const double inv = 1.0 / std::sqrt(sq / plane + 1e-2);
    for (int64_t i = 0; i < plane; ++i) {
      expected[nc * plane + i] =
          static_cast<float>((x[nc * plane + i] - mean) * inv * scale[nc % 3] + bias[nc % 3]);
    }
  }
  for (int threads : {1, 2}) {
    KernelTester t("InstanceNormalization", 6);
    t.Attr("epsilon", 1e-2f).Input<float>(s, x).Input<float>({3}, scale).Input<float>({3}, bias);
    t.Threads(threads);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
  }
  KernelTester bad("InstanceNormalization", 6);
  bad.Input<float>(s, x).Input<float>({2}, {1, 1}).Input<float>({3}, bias);
  auto out = bad.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("scale (input 1) has shape [2]"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

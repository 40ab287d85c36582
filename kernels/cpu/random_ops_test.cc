// The random operators' statistics (sample means within a few standard errors on large samples)
// and reproducibility (a seed gives the same values in every run, no seed different ones), and
// Dropout in training mode. Each check fails by chance with probability well below 1e-6.
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

constexpr int64_t kN = 200000;

struct Moments {
  double mean = 0, var = 0;
};

Moments Of(const std::vector<float>& v) {
  Moments m;
  for (float x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (float x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

std::vector<float> RunUniform(bool seeded, float seed = 3.0f) {
  KernelTester t("RandomUniform", 1);
  t.Attr("shape", std::vector<int64_t>{kN}).Attr("low", -1.0f).Attr("high", 3.0f);
  if (seeded) t.Attr("seed", seed);
  t.OutputType(0, DataType::kFloat32);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), DataType::kFloat32);
  return Values<float>((*out)[0]);
}

TEST(RandomOps, UniformMomentsAndRange) {
  const std::vector<float> v = RunUniform(true);
  ASSERT_EQ(v.size(), static_cast<size_t>(kN));
  for (float x : v) ASSERT_TRUE(x >= -1.0f && x < 3.0f) << x;
  const Moments m = Of(v);
  const double var = 16.0 / 12.0;  // (high - low)^2 / 12
  EXPECT_NEAR(m.mean, 1.0, 5 * std::sqrt(var / kN));
  EXPECT_NEAR(m.var, var, 0.02 * var);
}

TEST(RandomOps, SeedReproducesNoSeedDiffers) {
  EXPECT_EQ(RunUniform(true), RunUniform(true));
  EXPECT_NE(RunUniform(true, 3.0f), RunUniform(true, 4.0f));
  EXPECT_NE(RunUniform(false), RunUniform(false));
}

TEST(RandomOps, NormalLikeMoments) {
  KernelTester t("RandomNormalLike", 1);
  t.Input<double>({kN}, std::vector<double>(kN, 0.0))
      .Attr("mean", 2.0f)
      .Attr("scale", 0.5f)
      .Attr("seed", 7.0f)
      .Attr("dtype", int64_t{1});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DataType::kFloat32);
  const Moments m = Of(Values<float>((*out)[0]));
  EXPECT_NEAR(m.mean, 2.0, 5 * std::sqrt(0.25 / kN));
  EXPECT_NEAR(m.var, 0.25, 0.02 * 0.25);
}

TEST(RandomOps, BernoulliFrequency) {
  KernelTester t("Bernoulli", 15);
  std::vector<float> p(kN);
  for (int64_t i = 0; i < kN; ++i) p[i] = i % 2 == 0 ? 0.3f : 0.9f;
  t.Input<float>({kN}, p).Attr("seed", 1.0f);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  double ones[2] = {0, 0};
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(y[i] == 0.0f || y[i] == 1.0f) << y[i];
    ones[i % 2] += y[i];
  }
  const double half = kN / 2.0;
  EXPECT_NEAR(ones[0] / half, 0.3, 5 * std::sqrt(0.3 * 0.7 / half));
  EXPECT_NEAR(ones[1] / half, 0.9, 5 * std::sqrt(0.9 * 0.1 / half));
}

TEST(RandomOps, BernoulliRefusesNonProbabilities) {
  KernelTester t("Bernoulli", 15);
  t.Input<float>({2}, {0.5f, 1.5f});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("probability"), std::string::npos) << out.status();
}

TEST(RandomOps, MultinomialFrequency) {
  KernelTester t("Multinomial", 7);
  t.Input<float>({2, 3}, {std::log(0.2f), std::log(0.3f), std::log(0.5f), 0.0f, -100.0f, 0.0f})
      .Attr("sample_size", kN)
      .Attr("dtype", int64_t{7})
      .Attr("seed", 5.0f);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (engine::Shape{2, kN}));
  const std::vector<int64_t> y = Values<int64_t>((*out)[0]);
  double count[2][3] = {};
  for (int r = 0; r < 2; ++r) {
    for (int64_t s = 0; s < kN; ++s) {
      const int64_t c = y[r * kN + s];
      ASSERT_TRUE(c >= 0 && c < 3) << c;
      count[r][c] += 1;
    }
  }
  const double probs[2][3] = {{0.2, 0.3, 0.5}, {0.5, 0.0, 0.5}};
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) {
      const double p = probs[r][c];
      EXPECT_NEAR(count[r][c] / kN, p, 5 * std::sqrt(p * (1 - p) / kN) + 1e-9) << r << "," << c;
    }
  }
}

TEST(RandomOps, DropoutTrainingMaskAndScale) {
  std::vector<float> x(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = 1.0f + static_cast<float>(i % 7);
  engine::testing::TestTensor training;  // a bool scalar true (std::vector<bool> has no data())
  training.type = DataType::kBool;
  training.bytes = {1};
  KernelTester t("Dropout", 13);
  t.Input<float>({kN}, x).Input<float>({}, {0.25f}).Input(training).Outputs(2).Attr("seed", 2.0f);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  const std::vector<bool> mask = [&] {
    std::vector<bool> m;
    for (uint8_t b : Values<uint8_t>((*out)[1])) m.push_back(b != 0);
    return m;
  }();
  double kept = 0;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(y[i], mask[i] ? x[i] / 0.75f : 0.0f) << i;
    kept += mask[i];
  }
  EXPECT_NEAR(kept / kN, 0.75, 5 * std::sqrt(0.75 * 0.25 / kN));
}

}  // namespace
}  // namespace inferd::kernels::cpu

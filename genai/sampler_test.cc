#include "genai/sampler.h"

#include <cmath>
#include <map>
#include <vector>

#include "gtest/gtest.h"

namespace inferd::genai {
namespace {

TEST(SamplerTest, GreedyTakesTheArgmaxLowestIdOnTies) {
  Sampler s(SamplingParams{}, 5);
  std::vector<float> logits = {0.f, 3.f, 1.f, 3.f, -2.f};
  EXPECT_EQ(s.Sample(absl::MakeSpan(logits), {}), 1);
}

TEST(SamplerTest, RepetitionPenaltyAsHuggingFace) {
  SamplingParams p;
  p.repetition_penalty = 2.f;
  Sampler s(p, 4);
  std::vector<float> logits = {4.f, 3.f, -1.f, 0.5f};
  const std::vector<int32_t> seen = {0, 2, 0};
  EXPECT_EQ(s.Sample(absl::MakeSpan(logits), seen), 1);  // 4 / 2 = 2 < 3
  EXPECT_FLOAT_EQ(logits[0], 2.f);
  EXPECT_FLOAT_EQ(logits[2], -2.f);  // negative: multiplied, once despite two occurrences
  EXPECT_FLOAT_EQ(logits[3], 0.5f);
}

// Sampling frequencies follow softmax(logits / T) restricted to top-k / top-p.
TEST(SamplerTest, TopKTopPAndTemperatureFrequencies) {
  const std::vector<float> base = {2.f, 1.f, 0.f, -1.f, -8.f};
  SamplingParams p;
  p.temperature = 0.5f;
  p.top_k = 3;
  p.seed = 7;
  Sampler s(p, 5);
  std::map<int32_t, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    std::vector<float> logits = base;
    ++counts[s.Sample(absl::MakeSpan(logits), {})];
  }
  double z = 0;
  for (int i = 0; i < 3; ++i) z += std::exp(base[i] / 0.5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(counts[i] / static_cast<double>(n), std::exp(base[i] / 0.5) / z, 0.015) << i;
  }
  EXPECT_EQ(counts.count(3) + counts.count(4), 0u);
  // top_p 0.8 of {0.86, 0.12, ...} at T=0.5 keeps only the first.
  p.top_k = 0;
  p.top_p = 0.8f;
  Sampler nucleus(p, 5);
  for (int i = 0; i < 100; ++i) {
    std::vector<float> logits = base;
    EXPECT_EQ(nucleus.Sample(absl::MakeSpan(logits), {}), 0);
  }
}

TEST(SamplerTest, SameSeedSameTokens) {
  SamplingParams p;
  p.temperature = 1.f;
  p.seed = 42;
  Sampler a(p, 50), b(p, 50);
  for (int i = 0; i < 100; ++i) {
    std::vector<float> la(50), lb(50);
    for (int k = 0; k < 50; ++k) la[k] = lb[k] = std::sin(k * 0.7f + i);
    EXPECT_EQ(a.Sample(absl::MakeSpan(la), {}), b.Sample(absl::MakeSpan(lb), {}));
  }
}

TEST(SamplerTest, BadParametersAreRefused) {
  SamplingParams p;
  p.temperature = -1.f;
  EXPECT_FALSE(ValidateSamplingParams(p).ok());
  p = SamplingParams{};
  p.top_p = 0.f;
  EXPECT_FALSE(ValidateSamplingParams(p).ok());
  p = SamplingParams{};
  p.top_k = -3;
  EXPECT_FALSE(ValidateSamplingParams(p).ok());
  p = SamplingParams{};
  p.repetition_penalty = 0.f;
  EXPECT_FALSE(ValidateSamplingParams(p).ok());
  EXPECT_TRUE(ValidateSamplingParams(SamplingParams{}).ok());
}

}  // namespace
}  // namespace inferd::genai

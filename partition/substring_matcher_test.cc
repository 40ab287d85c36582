#include "partition/substring_matcher.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace inferd::partition {
namespace {

SubstringMatcher Make(absl::string_view rules) {
  absl::StatusOr<LayeringRules> r = ParseLayeringRules(rules, RuleMode::kName);
  EXPECT_TRUE(r.ok()) << r.status();
  return SubstringMatcher(*r);
}

// The priority examples of docs/partitioner.md ("Matching").
TEST(SubstringMatcherTest, SingleMatch) {
  SubstringMatcher m = Make("cuda:0(layers.0/); cpu(embed_tokens)");
  EXPECT_EQ(m.Match("/model/layers.0/self_attn/q_proj/MatMul"), 0u);
  EXPECT_EQ(m.Match("/model/embed_tokens/Gather"), 1u);
}

TEST(SubstringMatcherTest, LongerPatternWins) {
  SubstringMatcher m = Make("cpu:0(layers.1); cuda:0(layers.10)");
  EXPECT_EQ(m.Match("/model/layers.10/mlp/up_proj/MatMul"), 1u);
  EXPECT_EQ(m.Match("/model/layers.1/mlp/up_proj/MatMul"), 0u);
  // Order in the config does not matter for different lengths.
  SubstringMatcher reversed = Make("cuda:0(layers.10); cpu:0(layers.1)");
  EXPECT_EQ(reversed.Match("/model/layers.10/mlp/up_proj/MatMul"), 0u);
  EXPECT_EQ(reversed.Match("/model/layers.1/mlp/up_proj/MatMul"), 1u);
}

TEST(SubstringMatcherTest, EqualLengthGoesToTheFirstRule) {
  SubstringMatcher m = Make("cuda:0(self_attn); cpu:1(layers.3/)");  // both 9 characters
  EXPECT_EQ(m.Match("/model/layers.3/self_attn/MatMul"), 0u);
  SubstringMatcher swapped = Make("cpu:1(layers.3/); cuda:0(self_attn)");
  EXPECT_EQ(swapped.Match("/model/layers.3/self_attn/MatMul"), 0u);
  // The same pattern in two rules: the first rule keeps it.
  SubstringMatcher dup = Make("cuda:0(mlp); cpu:1(mlp)");
  EXPECT_EQ(dup.Match("/model/layers.3/mlp/up_proj/MatMul"), 0u);
  EXPECT_EQ(dup.num_patterns(), 1u);
}

TEST(SubstringMatcherTest, NoMatchGoesToFallback) {
  SubstringMatcher m = Make("cuda:0(layers.[0-15]/)");
  EXPECT_EQ(m.Match("/model/norm/LayerNormalization"), std::nullopt);
  EXPECT_EQ(m.Match(""), std::nullopt);
}

TEST(SubstringMatcherTest, SeparatorKeepsLayerOneOutOfLayerTen) {
  SubstringMatcher m = Make("cuda:0(layers.1/)");
  EXPECT_EQ(m.Match("/model/layers.1/mlp/MatMul"), 0u);
  for (int n = 10; n <= 19; ++n) {
    EXPECT_EQ(m.Match("/model/layers." + std::to_string(n) + "/mlp/MatMul"), std::nullopt) << n;
  }
  // Over a range: each layer goes to its own rule.
  SubstringMatcher split = Make("cuda:0(layers.[0-9]/); cpu:1(layers.[10-19]/)");
  EXPECT_EQ(split.Match("/model/layers.1/mlp/MatMul"), 0u);
  EXPECT_EQ(split.Match("/model/layers.10/mlp/MatMul"), 1u);
  EXPECT_EQ(split.Match("/model/layers.19/mlp/MatMul"), 1u);
}

TEST(SubstringMatcherTest, FusedNamesKeepMatching) {
  SubstringMatcher m = Make("cuda:0(layers.5/)");
  EXPECT_EQ(m.Match("/model/layers.5/mlp/up_proj/MatMul/MatMulAddFusion"), 0u);
}

TEST(SubstringMatcherTest, GenericFusedNameOnlyCaughtByABroadPattern) {
  SubstringMatcher layers = Make("cuda:0(layers.[0-31]/)");
  EXPECT_EQ(layers.Match("Attention"), std::nullopt);
  EXPECT_EQ(layers.Match("Attention_token_3"), std::nullopt);
  SubstringMatcher broad = Make("cuda:0(layers.[0-31]/); cpu:1(Attention)");
  EXPECT_EQ(broad.Match("Attention"), 1u);
  EXPECT_EQ(broad.Match("Attention_token_3"), 1u);
  EXPECT_EQ(broad.Match("/model/layers.2/self_attn/MatMul"), 0u);
}

TEST(SubstringMatcherTest, ReportsWhichPatternMatched) {
  SubstringMatcher m = Make("cpu:1(layers.[0-3]/); cpu:0(norm)");
  std::optional<PatternMatch> p = m.MatchPattern("/model/layers.2/mlp/MatMul");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->rule, 0u);
  EXPECT_EQ(p->pattern, 2u);
  p = m.MatchPattern("/model/norm/LayerNormalization");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->rule, 1u);
  EXPECT_EQ(p->pattern, 0u);
}

}  // namespace
}  // namespace inferd::partition

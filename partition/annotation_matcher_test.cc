#include "partition/annotation_matcher.h"

#include <optional>

#include "gtest/gtest.h"

namespace inferd::partition {
namespace {

AnnotationMatcher Make(absl::string_view rules) {
  absl::StatusOr<LayeringRules> r = ParseLayeringRules(rules, RuleMode::kAnnotation);
  EXPECT_TRUE(r.ok()) << r.status();
  return AnnotationMatcher(*r);
}

TEST(AnnotationMatcherTest, PrefixMatch) {
  AnnotationMatcher m = Make("cuda:0(encoder); cpu(embed)");
  EXPECT_EQ(m.Match("encoder.layer3"), 0u);
  EXPECT_EQ(m.Match("encoder"), 0u);
  EXPECT_EQ(m.Match("embed"), 1u);
  // Prefix, not substring.
  EXPECT_EQ(m.Match("my_encoder"), std::nullopt);
  EXPECT_EQ(m.Match(""), std::nullopt);
}

TEST(AnnotationMatcherTest, ExactMatchWithEquals) {
  AnnotationMatcher m = Make("cuda:0(=encoder.layer1); cpu:1(encoder)");
  EXPECT_EQ(m.Match("encoder.layer1"), 0u);
  EXPECT_EQ(m.Match("encoder.layer10"), 1u);  // = does not match a longer annotation
  EXPECT_EQ(m.Match("encoder.layer"), 1u);
  AnnotationMatcher only_exact = Make("cuda:0(=head)");
  EXPECT_EQ(only_exact.Match("head"), 0u);
  EXPECT_EQ(only_exact.Match("head.0"), std::nullopt);
}

TEST(AnnotationMatcherTest, LongestMatchWins) {
  AnnotationMatcher m = Make("cpu:1(enc); cuda:0(encoder.l)");
  EXPECT_EQ(m.Match("encoder.layer2"), 1u);
  EXPECT_EQ(m.Match("enc.x"), 0u);
  // An exact match is as long as the annotation: it beats any shorter prefix.
  AnnotationMatcher exact = Make("cpu:1(encoder); cuda:0(=encoder.layer2)");
  EXPECT_EQ(exact.Match("encoder.layer2"), 1u);
}

TEST(AnnotationMatcherTest, TiesGoToTheEarlierRule) {
  AnnotationMatcher prefixes = Make("cuda:0(enc); cpu:1(enc)");
  EXPECT_EQ(prefixes.Match("enc.1"), 0u);
  AnnotationMatcher exact_first = Make("cuda:0(=enc); cpu:1(enc)");
  EXPECT_EQ(exact_first.Match("enc"), 0u);
  AnnotationMatcher prefix_first = Make("cpu:1(enc); cuda:0(=enc)");
  EXPECT_EQ(prefix_first.Match("enc"), 0u);
  AnnotationMatcher exacts = Make("cpu:1(=enc); cuda:0(=enc)");
  EXPECT_EQ(exacts.Match("enc"), 0u);
}

TEST(AnnotationMatcherTest, ReportsWhichPatternMatched) {
  AnnotationMatcher m = Make("cpu:1(a, =b.[0-2]); cpu:0(c)");
  std::optional<PatternMatch> p = m.MatchPattern("b.2");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->rule, 0u);
  EXPECT_EQ(p->pattern, 3u);
}

}  // namespace
}  // namespace inferd::partition

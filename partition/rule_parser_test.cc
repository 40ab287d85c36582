#include "partition/rule_parser.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace inferd::partition {
namespace {

using Patterns = std::vector<std::string>;

std::string ErrorOf(absl::string_view text, RuleMode mode = RuleMode::kName) {
  absl::StatusOr<LayeringRules> r = ParseLayeringRules(text, mode);
  if (r.ok()) return "OK";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

TEST(RuleParserTest, ParsesRulesInOrder) {
  absl::StatusOr<LayeringRules> r =
      ParseLayeringRules("cuda:0(layers.0/, layers.1/); cpu(embed)", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rules.size(), 2u);
  EXPECT_EQ(r->rules[0].device, "cuda:0");
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"layers.0/", "layers.1/"}));
  EXPECT_EQ(r->rules[1].device, "cpu:0");
  EXPECT_EQ(r->rules[1].patterns, (Patterns{"embed"}));
  EXPECT_EQ(r->rules[1].column, 31);
  EXPECT_EQ(r->num_patterns(), 3u);
}

TEST(RuleParserTest, WhitespaceAndTrailingSemicolon) {
  absl::StatusOr<LayeringRules> r =
      ParseLayeringRules("  cpu:1 ( a ,b/c d ,\n c )  ;\t cpu:0(e);  ", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rules.size(), 2u);
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"a", "b/c d", "c"}));
  EXPECT_EQ(r->rules[1].patterns, (Patterns{"e"}));
}

TEST(RuleParserTest, ExpandsRanges) {
  absl::StatusOr<LayeringRules> r = ParseLayeringRules("cpu:1(layers.[0-3]/)", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"layers.0/", "layers.1/", "layers.2/", "layers.3/"}));

  r = ParseLayeringRules("cpu:1(layers.[ 14 - 16 ]/)", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"layers.14/", "layers.15/", "layers.16/"}));

  r = ParseLayeringRules("cpu:1([7-7])", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"7"}));
}

TEST(RuleParserTest, SeveralRangesExpandAsAProduct) {
  absl::StatusOr<LayeringRules> r =
      ParseLayeringRules("cuda:0(enc.[0-1]/blk.[2-4]/)", RuleMode::kName);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"enc.0/blk.2/", "enc.0/blk.3/", "enc.0/blk.4/",
                                            "enc.1/blk.2/", "enc.1/blk.3/", "enc.1/blk.4/"}));
}

TEST(RuleParserTest, RangeErrorsPointAtTheRange) {
  EXPECT_EQ(ErrorOf("cpu:1(layers.[5-2]/)"),
            "rule 1, column 14: range [5-2] is reversed (5 > 2); write [2-5]");
  EXPECT_EQ(ErrorOf("cpu:0(a); cpu:1(x[0-99]y[0-99])"),
            "rule 2, column 17: pattern 'x[0-99]y[0-99]' expands to more than 4096 names; split "
            "it or use a broader pattern");
  EXPECT_EQ(ErrorOf("cpu:1(layers.[a-2]/)"),
            "rule 1, column 15: expected a number in a range such as [0-15]");
  EXPECT_EQ(ErrorOf("cpu:1(layers.[1 2]/)"),
            "rule 1, column 17: expected '-' in a range such as [0-15]");
  EXPECT_EQ(ErrorOf("cpu:1(layers.[1-2/)"), "rule 1, column 18: expected ']' to close the range");
  EXPECT_EQ(ErrorOf("cpu:1(layers.1]/)"), "rule 1, column 15: unexpected ']' outside a range");
  EXPECT_EQ(ErrorOf("cpu:1(l[0-1234567890])"),
            "rule 1, column 11: range bound too large (at most 9 digits)");
  // Exactly at the limit is fine.
  EXPECT_EQ(ErrorOf("cpu:1(x[0-63]y[0-63])"), "OK");
}

TEST(RuleParserTest, SyntaxErrorsPointAtTheCharacter) {
  EXPECT_EQ(ErrorOf("cpu:0(a); cpu:1(b"), "rule 2, column 18: expected ')'");
  EXPECT_EQ(ErrorOf("cpu:0(a; cpu:1(b)"), "rule 1, column 8: expected ')'");
  EXPECT_EQ(ErrorOf("cpu:0(a) cpu:1(b)"), "rule 1, column 10: expected ';' between rules");
  EXPECT_EQ(ErrorOf("cpu:0 a"), "rule 1, column 7: expected '(' after device 'cpu:0'");
  EXPECT_EQ(ErrorOf("cpu:0()"), "rule 1, column 7: expected a pattern");
  EXPECT_EQ(ErrorOf("cpu:0(a,)"), "rule 1, column 9: expected a pattern");
  EXPECT_EQ(ErrorOf("cpu:0(a(b))"), "rule 1, column 8: expected ',' or ')'");
  EXPECT_EQ(ErrorOf("(a)"), "rule 1, column 1: expected a device (cpu, cpu:N or cuda:N)");
  EXPECT_EQ(ErrorOf("gpu:0(a)"),
            "rule 1, column 1: unknown device 'gpu:0': expected cpu, cpu:N or cuda:N");
  EXPECT_EQ(ErrorOf("   "), "rule 1, column 4: expected a rule such as cpu:1(layers.[0-15]/)");
  EXPECT_EQ(ErrorOf("cpu:0(a);;"), "rule 2, column 10: expected a device (cpu, cpu:N or cuda:N)");
}

TEST(RuleParserTest, MultiLineTextsReportLineAndColumn) {
  EXPECT_EQ(ErrorOf("cpu:0(a);\ncpu:1(b"), "rule 2, line 2, column 8: expected ')'");
}

TEST(RuleParserTest, ExactMatchOnlyInAnnotationMode) {
  EXPECT_EQ(ErrorOf("cpu:0(=a)"),
            "rule 1, column 7: '=' (exact match) is only for annotation rules; name rules match "
            "substrings");
  absl::StatusOr<LayeringRules> r =
      ParseLayeringRules("cpu:0(=enc.[0-1], dec)", RuleMode::kAnnotation);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rules[0].patterns, (Patterns{"=enc.0", "=enc.1", "dec"}));
  EXPECT_EQ(ErrorOf("cpu:0(=)", RuleMode::kAnnotation),
            "rule 1, column 8: expected a pattern after '='");
}

}  // namespace
}  // namespace inferd::partition

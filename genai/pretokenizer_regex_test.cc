#include "genai/pretokenizer_regex.h"

#include <string>
#include <vector>

#include "genai/unicode.h"
#include "gtest/gtest.h"

namespace inferd::genai {
namespace {

constexpr char kLlama3[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> SplitAll(const PretokenizerRegex& re, const std::string& text) {
  const std::u32string cps = DecodeUtf8(text);
  std::vector<std::string> out;
  size_t pos = 0, b, e;
  while (re.Find(cps, pos, &b, &e)) {
    out.push_back(EncodeUtf8(std::u32string_view(cps).substr(b, e - b)));
    pos = e > b ? e : b + 1;
    if (pos > cps.size()) break;
  }
  return out;
}

TEST(PretokenizerRegexTest, Llama3SplitsAsTheReference) {
  auto re = PretokenizerRegex::Compile(kLlama3);
  ASSERT_TRUE(re.ok()) << re.status();
  // Lookahead: the last space of a run goes with the next word; digits in groups of three.
  EXPECT_EQ(SplitAll(*re, "Hello   world 12345 IT'S"),
            (std::vector<std::string>{"Hello", "  ", " world", " ", "123", "45", " IT", "'S"}));
  EXPECT_EQ(SplitAll(*re, "a\n\n  b"), (std::vector<std::string>{"a", "\n\n", " ", " b"}));
  EXPECT_EQ(SplitAll(*re, "\xE6\x97\xA5\xE6\x9C\xAC!!"),
            (std::vector<std::string>{"\xE6\x97\xA5\xE6\x9C\xAC", "!!"}));
}

TEST(PretokenizerRegexTest, QuantifiersClassesAndAnchors) {
  auto re = PretokenizerRegex::Compile(R"(^a{2,3}?b|[x-z]+|\d+(?=c)|\P{L})");
  ASSERT_TRUE(re.ok()) << re.status();
  size_t b, e;
  const std::u32string t = DecodeUtf8("aab");
  ASSERT_TRUE(re->Find(t, 0, &b, &e));
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(e, 3u);
  EXPECT_TRUE(re->FullMatch(DecodeUtf8("xyzzy")));
  EXPECT_FALSE(re->FullMatch(DecodeUtf8("12")));  // no 'c' after the digits: not \d+(?=c)
  EXPECT_TRUE(re->FullMatch(DecodeUtf8("7")));    // \P{L}
}

TEST(PretokenizerRegexTest, LongRunsCostNoStack) {
  auto re = PretokenizerRegex::Compile(R"(\s+(?!\S)|\s+)");
  ASSERT_TRUE(re.ok());
  const std::u32string spaces(2000000, U' ');
  size_t b, e;
  ASSERT_TRUE(re->Find(spaces, 0, &b, &e));
  EXPECT_EQ(e - b, spaces.size());
}

TEST(PretokenizerRegexTest, BadPatternsAreRefusedWithTheReason) {
  for (const char* bad :
       {"(abc", "abc)", "[abc", "a{3,1}", R"(\p{NoSuchThing})", "*a", R"((?<=a)b)", R"(\q)"}) {
    auto re = PretokenizerRegex::Compile(bad);
    EXPECT_FALSE(re.ok()) << bad;
    if (!re.ok()) EXPECT_NE(re.status().message().find("regex"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace inferd::genai

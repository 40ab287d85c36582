// PretokenizerRegex: the regular expressions tokenizer.json pre-tokenizers and normalizers use
// (GPT-2's, Llama 3's and Qwen2's splitting patterns among them), matched with Perl / Oniguruma
// semantics (leftmost-first alternation, greedy or lazy quantifiers, backtracking) over code
// points. RE2 cannot run these patterns: they use lookahead (`\s+(?!\S)`).
//
// Supported: literals and escapes (\r \n \t \f \v \xHH \x{H..} \uHHHH), `.`, classes
// `[...]` / `[^...]` with ranges, \p{Name} / \P{Name} (general categories and scripts, from ICU),
// \s \S \d \D \w \W, groups `(...)` `(?:...)` `(?i:...)`, lookahead `(?=...)` `(?!...)`,
// quantifiers `? * + {m} {m,} {m,n}` (lazy with a trailing `?`), anchors `^ $`, alternation.
// Repetition of a single character or class runs without recursion, so a run of a million
// spaces costs no stack; nested repetition of groups is bounded by a depth limit.
// Immutable after Compile; Find is const and thread-safe.
//
// Example:
//   auto re = PretokenizerRegex::Compile(R"(\p{L}+|\s+(?!\S)|\s+)");
//   size_t b, e;
//   std::u32string text = DecodeUtf8("hi  there");
//   while (re->Find(text, pos, &b, &e)) { ...; pos = e; }
#ifndef INFERD_GENAI_PRETOKENIZER_REGEX_H_
#define INFERD_GENAI_PRETOKENIZER_REGEX_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "genai/unicode.h"

namespace inferd::genai {

class PretokenizerRegex {
 public:
  static absl::StatusOr<PretokenizerRegex> Compile(absl::string_view pattern);

  // The leftmost match starting at or after `start` (code point indices): [*begin, *end).
  // False when there is none. An empty match is reported as such (begin == end).
  bool Find(std::u32string_view text, size_t start, size_t* begin, size_t* end) const;
  // True when the whole of `text` matches.
  bool FullMatch(std::u32string_view text) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct ClassItem {
    enum Kind { kRange, kProperty, kSpace, kDigit, kWord } kind = kRange;
    char32_t lo = 0, hi = 0;
    UnicodeProperty property;
    bool negated = false;  // \P{..}, \S, \D, \W inside a class
  };
  struct Node {
    enum Kind { kChar, kClass, kAny, kConcat, kAlt, kRepeat, kLookahead, kStart, kEnd } kind;
    char32_t ch = 0;
    bool icase = false;
    std::vector<ClassItem> items;  // kClass
    bool negated = false;          // kClass: [^...]; kLookahead: (?!...)
    std::vector<int> children;
    int min = 0, max = -1;  // kRepeat; max -1 = unbounded
    bool greedy = true;
  };
  using Cont = absl::FunctionRef<bool(size_t)>;
  class Parser;

  bool MatchesChar(const Node& n, char32_t c) const;
  bool Match(int node, std::u32string_view text, size_t pos, int depth, Cont k) const;
  bool MatchSeq(const Node& n, size_t index, std::u32string_view text, size_t pos, int depth,
                Cont k) const;
  bool MatchRepeat(const Node& n, int count, std::u32string_view text, size_t pos, int depth,
                   Cont k) const;

  std::string pattern_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace inferd::genai

#endif  // INFERD_GENAI_PRETOKENIZER_REGEX_H_

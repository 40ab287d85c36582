#include "partition/rule_parser.h"

#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "partition/device.h"

namespace inferd::partition {
namespace {

constexpr size_t kMaxBoundDigits = 9;

// One piece of a pattern: literal text, or a range [lo-hi].
struct Segment {
  std::string literal;
  bool is_range = false;
  int64_t lo = 0, hi = 0;
};

bool IsPatternEnd(char c) { return c == ',' || c == ')' || c == '(' || c == ';'; }

class Parser {
 public:
  Parser(absl::string_view text, RuleMode mode) : text_(text), mode_(mode) {}

  absl::StatusOr<LayeringRules> Parse() {
    LayeringRules out;
    SkipSpace();
    if (AtEnd()) {
      rule_ = 1;
      return Error(pos_, "expected a rule such as cpu:1(layers.[0-15]/)");
    }
    while (true) {
      SkipSpace();
      if (AtEnd()) break;  // after a trailing ';'
      ++rule_;
      absl::StatusOr<LayeringRule> rule = ParseRule();
      if (!rule.ok()) return rule.status();
      out.rules.push_back(std::move(*rule));
      SkipSpace();
      if (AtEnd()) break;
      if (Peek() != ';') return Error(pos_, "expected ';' between rules");
      ++pos_;
    }
    return out;
  }

 private:
  absl::StatusOr<LayeringRule> ParseRule() {
    LayeringRule rule;
    rule.column = static_cast<int>(pos_) + 1;
    // device
    const size_t device_start = pos_;
    while (!AtEnd() && !IsPatternEnd(Peek()) && !absl::ascii_isspace(Peek())) ++pos_;
    const absl::string_view device = text_.substr(device_start, pos_ - device_start);
    if (device.empty()) return Error(device_start, "expected a device (cpu, cpu:N or cuda:N)");
    absl::StatusOr<std::string> normalised = NormalizeDeviceName(device);
    if (!normalised.ok()) return Error(device_start, normalised.status().message());
    rule.device = *std::move(normalised);
    SkipSpace();
    if (AtEnd() || Peek() != '(') {
      return Error(pos_, absl::StrCat("expected '(' after device '", device, "'"));
    }
    ++pos_;
    // patterns
    while (true) {
      SkipSpace();
      absl::Status st = ParsePattern(rule.patterns);
      if (!st.ok()) return st;
      SkipSpace();
      if (AtEnd() || Peek() == ';') return Error(pos_, "expected ')'");
      if (Peek() == ')') {
        ++pos_;
        return rule;
      }
      if (Peek() != ',') return Error(pos_, "expected ',' or ')'");
      ++pos_;
    }
  }

  // Reads one pattern at pos_ and appends its expansions to `out`.
  absl::Status ParsePattern(std::vector<std::string>& out) {
    const size_t start = pos_;
    bool exact = false;
    if (!AtEnd() && Peek() == '=') {
      if (mode_ == RuleMode::kName) {
        return Error(pos_,
                     "'=' (exact match) is only for annotation rules; name rules match "
                     "substrings");
      }
      exact = true;
      ++pos_;
    }
    std::vector<Segment> segments;
    Segment literal;
    while (!AtEnd() && !IsPatternEnd(Peek())) {
      const char c = Peek();
      if (c == ']') return Error(pos_, "unexpected ']' outside a range");
      if (c != '[') {
        literal.literal.push_back(c);
        ++pos_;
        continue;
      }
      if (!literal.literal.empty()) segments.push_back(std::move(literal));
      literal = Segment();
      absl::StatusOr<Segment> range = ParseRange();
      if (!range.ok()) return range.status();
      segments.push_back(*std::move(range));
    }
    // Trailing whitespace belongs to the separator, not the pattern.
    while (!literal.literal.empty() && absl::ascii_isspace(literal.literal.back())) {
      literal.literal.pop_back();
    }
    if (!literal.literal.empty()) segments.push_back(std::move(literal));
    if (segments.empty()) {
      return Error(pos_, exact ? "expected a pattern after '='" : "expected a pattern");
    }
    // Expansion count, saturating past the limit.
    size_t count = 1;
    for (const Segment& s : segments) {
      if (!s.is_range) continue;
      count *= static_cast<size_t>(s.hi - s.lo + 1);
      if (count > kMaxPatternExpansions) {
        return Error(start, absl::StrCat("pattern '", text_.substr(start, pos_ - start),
                                         "' expands to more than ", kMaxPatternExpansions,
                                         " names; split it or use a broader pattern"));
      }
    }
    std::vector<std::string> expanded = {exact ? "=" : ""};
    for (const Segment& s : segments) {
      std::vector<std::string> next;
      next.reserve(expanded.size() * (s.is_range ? s.hi - s.lo + 1 : 1));
      for (const std::string& prefix : expanded) {
        if (!s.is_range) {
          next.push_back(absl::StrCat(prefix, s.literal));
          continue;
        }
        for (int64_t i = s.lo; i <= s.hi; ++i) next.push_back(absl::StrCat(prefix, i));
      }
      expanded = std::move(next);
    }
    for (std::string& p : expanded) out.push_back(std::move(p));
    return absl::OkStatus();
  }

  // At '[': reads `[lo-hi]`.
  absl::StatusOr<Segment> ParseRange() {
    const size_t open = pos_;
    ++pos_;
    Segment s;
    s.is_range = true;
    absl::Status st = ParseBound(&s.lo);
    if (!st.ok()) return st;
    SkipSpace();
    if (AtEnd() || Peek() != '-') return Error(pos_, "expected '-' in a range such as [0-15]");
    ++pos_;
    st = ParseBound(&s.hi);
    if (!st.ok()) return st;
    SkipSpace();
    if (AtEnd() || Peek() != ']') return Error(pos_, "expected ']' to close the range");
    ++pos_;
    if (s.lo > s.hi) {
      return Error(open, absl::StrCat("range [", s.lo, "-", s.hi, "] is reversed (", s.lo, " > ",
                                      s.hi, "); write [", s.hi, "-", s.lo, "]"));
    }
    return s;
  }

  absl::Status ParseBound(int64_t* out) {
    SkipSpace();
    const size_t start = pos_;
    int64_t value = 0;
    while (!AtEnd() && absl::ascii_isdigit(Peek())) {
      if (pos_ - start >= kMaxBoundDigits) {
        return Error(start,
                     absl::StrCat("range bound too large (at most ", kMaxBoundDigits, " digits)"));
      }
      value = value * 10 + (Peek() - '0');
      ++pos_;
    }
    if (pos_ == start) return Error(pos_, "expected a number in a range such as [0-15]");
    *out = value;
    return absl::OkStatus();
  }

  absl::Status Error(size_t pos, absl::string_view what) const {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    const size_t column = pos - line_start + 1;
    const bool multi_line = text_.find('\n') != absl::string_view::npos;
    return absl::InvalidArgumentError(
        multi_line ? absl::StrCat("rule ", rule_, ", line ", line, ", column ", column, ": ", what)
                   : absl::StrCat("rule ", rule_, ", column ", column, ": ", what));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && absl::ascii_isspace(Peek())) ++pos_;
  }

  const absl::string_view text_;
  const RuleMode mode_;
  size_t pos_ = 0;
  int rule_ = 0;
};

}  // namespace

size_t LayeringRules::num_patterns() const {
  size_t n = 0;
  for (const LayeringRule& r : rules) n += r.patterns.size();
  return n;
}

absl::StatusOr<LayeringRules> ParseLayeringRules(absl::string_view text, RuleMode mode) {
  return Parser(text, mode).Parse();
}

const char* RuleModeName(RuleMode mode) { return mode == RuleMode::kName ? "name" : "annotation"; }

}  // namespace inferd::partition

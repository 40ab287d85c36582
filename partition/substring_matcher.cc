#include "partition/substring_matcher.h"

#include <algorithm>
#include <unordered_set>

namespace inferd::partition {

SubstringMatcher::SubstringMatcher(const LayeringRules& rules) {
  std::unordered_set<std::string> seen;
  for (size_t r = 0; r < rules.rules.size(); ++r) {
    const std::vector<std::string>& patterns = rules.rules[r].patterns;
    for (size_t p = 0; p < patterns.size(); ++p) {
      if (!seen.insert(patterns[p]).second) continue;
      patterns_.push_back(Entry{patterns[p], PatternMatch{r, p}});
    }
  }
  std::stable_sort(patterns_.begin(), patterns_.end(), [](const Entry& a, const Entry& b) {
    return a.pattern.size() > b.pattern.size();
  });
}

std::optional<size_t> SubstringMatcher::Match(absl::string_view node_name) const {
  std::optional<PatternMatch> m = MatchPattern(node_name);
  if (!m) return std::nullopt;
  return m->rule;
}

std::optional<PatternMatch> SubstringMatcher::MatchPattern(absl::string_view node_name) const {
  for (const Entry& e : patterns_) {
    if (node_name.find(e.pattern) != absl::string_view::npos) return e.where;
  }
  return std::nullopt;
}

}  // namespace inferd::partition

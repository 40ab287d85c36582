#include "partition/annotation_matcher.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace inferd::partition {

AnnotationMatcher::AnnotationMatcher(const LayeringRules& rules) {
  for (size_t r = 0; r < rules.rules.size(); ++r) {
    const std::vector<std::string>& patterns = rules.rules[r].patterns;
    for (size_t p = 0; p < patterns.size(); ++p) {
      absl::string_view pattern = patterns[p];
      if (absl::ConsumePrefix(&pattern, "=")) {
        exact_.emplace(std::string(pattern), PatternMatch{r, p});  // keeps the first
      } else {
        prefixes_.push_back(Entry{std::string(pattern), PatternMatch{r, p}});
      }
    }
  }
  std::stable_sort(prefixes_.begin(), prefixes_.end(), [](const Entry& a, const Entry& b) {
    return a.prefix.size() > b.prefix.size();
  });
}

std::optional<size_t> AnnotationMatcher::Match(absl::string_view annotation) const {
  std::optional<PatternMatch> m = MatchPattern(annotation);
  if (!m) return std::nullopt;
  return m->rule;
}

std::optional<PatternMatch> AnnotationMatcher::MatchPattern(absl::string_view annotation) const {
  if (annotation.empty()) return std::nullopt;
  std::optional<PatternMatch> exact;
  if (auto it = exact_.find(std::string(annotation)); it != exact_.end()) exact = it->second;
  for (const Entry& e : prefixes_) {
    if (!absl::StartsWith(annotation, e.prefix)) continue;
    // The longest prefix; it ties with an exact match only when it is the whole annotation.
    if (exact && e.prefix.size() == annotation.size() && e.where.rule > exact->rule) {
      return exact;
    }
    if (exact && e.prefix.size() < annotation.size()) return exact;
    return e.where;
  }
  return exact;
}

}  // namespace inferd::partition

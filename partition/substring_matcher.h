// SubstringMatcher: name-based rule matching. A node belongs to the rule of the longest pattern
// that occurs anywhere in its name; patterns of equal length go to the rule written first; no
// pattern found: no rule (the node goes to the fallback device).
//
// Write patterns with their separator: `layers.1/` never matches `/model/layers.10/...`, while
// `layers.1` would, were it not for `layers.10` being longer. Fused nodes keep matching because
// the engine names them after the node they replace (`<original>/MatMulAddFusion`); a fusion
// that makes a generic name (`Attention`) is matched only by a pattern for that name.
//
// Match is a find() loop over the patterns sorted longest first: with ~64 patterns and names of
// < 200 characters it costs microseconds per graph (partition/matcher_bench.cc measures it).
// Immutable after construction; thread-safe.
//
// Example:
//   SubstringMatcher m(*ParseLayeringRules("cpu:1(layers.1/); cpu:0(layers.10/)",
//                                          RuleMode::kName));
//   m.Match("/model/layers.10/mlp/up_proj/MatMul");  // 1
//   m.Match("/model/embed_tokens/Gather");            // nullopt
#ifndef INFERD_PARTITION_SUBSTRING_MATCHER_H_
#define INFERD_PARTITION_SUBSTRING_MATCHER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "partition/rule_parser.h"

namespace inferd::partition {

class SubstringMatcher {
 public:
  explicit SubstringMatcher(const LayeringRules& rules);

  // The index of the rule whose pattern wins for `node_name`, or nullopt.
  std::optional<size_t> Match(absl::string_view node_name) const;
  // The same, with which of the rule's patterns matched.
  std::optional<PatternMatch> MatchPattern(absl::string_view node_name) const;

  size_t num_patterns() const { return patterns_.size(); }

 private:
  struct Entry {
    std::string pattern;
    PatternMatch where;
  };
  // Longest first; equal lengths in rule order. Duplicates of an earlier pattern are dropped
  // (they could never win).
  std::vector<Entry> patterns_;
};

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_SUBSTRING_MATCHER_H_

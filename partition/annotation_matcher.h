// AnnotationMatcher: annotation-based rule matching against a node's `layer_ann` metadata.
// A pattern matches an annotation it is a prefix of; a pattern written with a leading `=`
// matches only the annotation equal to the rest of it. The longest match wins (an exact match
// has the annotation's full length); equal lengths go to the rule written first. An empty
// annotation matches nothing (LayeringIndex then applies inheritance).
// Immutable after construction; thread-safe.
//
// Example:
//   AnnotationMatcher m(*ParseLayeringRules("cuda:0(encoder); cpu(=encoder.head)",
//                                           RuleMode::kAnnotation));
//   m.Match("encoder.layer3");  // 0 (prefix)
//   m.Match("encoder.head");    // 1 (exact, longer than "encoder")
//   m.Match("decoder");         // nullopt
#ifndef INFERD_PARTITION_ANNOTATION_MATCHER_H_
#define INFERD_PARTITION_ANNOTATION_MATCHER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/string_view.h"
#include "partition/rule_parser.h"

namespace inferd::partition {

class AnnotationMatcher {
 public:
  explicit AnnotationMatcher(const LayeringRules& rules);

  std::optional<size_t> Match(absl::string_view annotation) const;
  std::optional<PatternMatch> MatchPattern(absl::string_view annotation) const;

 private:
  struct Entry {
    std::string prefix;
    PatternMatch where;
  };
  std::unordered_map<std::string, PatternMatch> exact_;  // the first rule's entry per value
  std::vector<Entry> prefixes_;  // longest first; equal lengths in rule order
};

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_ANNOTATION_MATCHER_H_

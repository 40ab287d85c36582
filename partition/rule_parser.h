// Partition rules: the grammar `device(pattern, pattern, ...); device(...)` parsed into
// LayeringRules, an ordered list of (device, patterns). The same grammar serves both rule modes:
// name rules (patterns are substrings of node names) and annotation rules (patterns are prefixes
// of a node's `layer_ann` metadata, or exact values when they start with `=`).
//
//   rules   := rule { ';' rule } [ ';' ]          whitespace is allowed between all tokens
//   rule    := device '(' pattern { ',' pattern } ')'
//   device  := 'cpu' | 'cpu:' N | 'cuda:' N       ('cpu' is cpu:0)
//   pattern := [ '=' ] { char | range }           annotation rules only may start with '='
//   range   := '[' N '-' N ']'                    N decimal, low <= high
//
// A pattern is every character up to the next ',', ')' or '(' outside a range, trimmed of
// whitespace at both ends. Ranges expand in place: `layers.[0-2]/` -> `layers.0/`, `layers.1/`,
// `layers.2/`; several ranges in one pattern expand as a product, the leftmost varying slowest.
// One pattern may expand to at most kMaxPatternExpansions names. `[` always opens a range, so a
// pattern cannot hold a literal bracket.
//
// Errors are INVALID_ARGUMENT and point at the character: "rule 2, column 14: expected ')'"
// (columns count from 1 in the whole text; "line L, column C" when the text spans lines).
// Pure functions; thread-safe.
//
// Example:
//   absl::StatusOr<LayeringRules> r =
//       ParseLayeringRules("cuda:0(layers.[0-15]/); cpu(layers.[16-31]/)", RuleMode::kName);
//   // r->rules[0].device == "cuda:0", r->rules[0].patterns == {"layers.0/", ..., "layers.15/"}
#ifndef INFERD_PARTITION_RULE_PARSER_H_
#define INFERD_PARTITION_RULE_PARSER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::partition {

enum class RuleMode { kName, kAnnotation };

inline constexpr size_t kMaxPatternExpansions = 4096;

struct LayeringRule {
  std::string device;                 // normalised: "cpu:0", "cuda:1"
  std::vector<std::string> patterns;  // after range expansion, in written order
  int column = 0;                     // where the rule starts in the text (1-based), for messages
};

struct LayeringRules {
  std::vector<LayeringRule> rules;  // in written order: earlier rules win ties
  size_t num_patterns() const;
};

// Which rule, and which of its patterns, matched a node.
struct PatternMatch {
  size_t rule = 0;
  size_t pattern = 0;
  bool operator==(const PatternMatch& o) const { return rule == o.rule && pattern == o.pattern; }
};

// Parses `text` (see the grammar above). Empty or blank text is an error: callers treat "no
// rules" before calling.
absl::StatusOr<LayeringRules> ParseLayeringRules(absl::string_view text, RuleMode mode);

// "name" / "annotation", for messages.
const char* RuleModeName(RuleMode mode);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_RULE_PARSER_H_

// LayeringIndex: maps every node of a graph to the partition rule that claims it (or none), in
// one of two mutually exclusive modes:
//   - name mode: a SubstringMatcher over node names. Names are dense, so every node is matched
//     on its own, with no inheritance.
//   - annotation mode: an AnnotationMatcher over the node's `layer_ann` metadata. Annotations
//     are sparse: a node without one (or whose annotation matches no rule) takes the rule of its
//     subgraph parent, the control-flow node whose subgraph holds it. inferd's IR keeps subgraphs
//     inside their node, so callers pass the parent relation explicitly (empty: no nesting).
// Setting both modes is INVALID_ARGUMENT: they disagree on inheritance, and mixing them would
// make a node's device depend on which rule happened to be checked first.
//
// LayerDetector: a node's layer from its name: the first path component of the form
// `<prefix>.<N>` for a prefix of a configurable list (default layers, layer, h, blocks), e.g.
// "/model/layers.5/mlp/up_proj/MatMul" -> "layers.5"; the prefix must start the name or follow
// a non-alphanumeric character, and N must end there or before one. Used by budget-only mode to
// move whole layers and by the plan report's per-layer lines.
//
// Both are immutable after construction; thread-safe.
//
// Example:
//   absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("cpu:1(layers.[0-15]/)", "");
//   absl::StatusOr<std::vector<std::optional<PatternMatch>>> rules = index->Assign(graph);
#ifndef INFERD_PARTITION_LAYERING_INDEX_H_
#define INFERD_PARTITION_LAYERING_INDEX_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/graph.h"
#include "partition/annotation_matcher.h"
#include "partition/rule_parser.h"
#include "partition/substring_matcher.h"

namespace inferd::partition {

inline constexpr char kLayerAnnotationKey[] = "layer_ann";

class LayeringIndex {
 public:
  // Parses the rules of the one mode that is set. Neither set: an index without rules (no node
  // matches). Parse errors are prefixed with the mode ("name rules: rule 2, column 14: ...").
  static absl::StatusOr<LayeringIndex> Create(absl::string_view name_rules,
                                              absl::string_view annotation_rules);

  bool has_rules() const { return !rules_.rules.empty(); }
  RuleMode mode() const { return mode_; }
  const LayeringRules& rules() const { return rules_; }

  // The rule (and pattern) of each node, by node index; nullopt: no rule. `subgraph_parent`
  // (annotation mode; ignored in name mode): for node i, the index of the node whose subgraph
  // holds it, or -1; empty for a graph without nesting. A parent index out of range or a cycle
  // of parents is INVALID_ARGUMENT.
  absl::StatusOr<std::vector<std::optional<PatternMatch>>> Assign(
      const engine::Graph& graph, absl::Span<const int> subgraph_parent = {}) const;

 private:
  LayeringIndex() = default;

  RuleMode mode_ = RuleMode::kName;
  LayeringRules rules_;
  // Exactly one is set when there are rules. shared_ptr keeps the index copyable.
  std::shared_ptr<const SubstringMatcher> names_;
  std::shared_ptr<const AnnotationMatcher> annotations_;
};

struct LayerId {
  std::string key;     // "layers.5"
  int64_t number = 0;  // 5
};

std::vector<std::string> DefaultLayerPrefixes();  // {"layers", "layer", "h", "blocks"}

class LayerDetector {
 public:
  explicit LayerDetector(std::vector<std::string> prefixes = DefaultLayerPrefixes());
  // The layer the name shows (the leftmost one), or nullopt.
  std::optional<LayerId> Detect(absl::string_view node_name) const;

 private:
  std::vector<std::string> prefixes_;
};

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_LAYERING_INDEX_H_

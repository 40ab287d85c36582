#include "partition/layering_index.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace inferd::partition {
namespace {

constexpr size_t kMaxLayerDigits = 9;

absl::Status Prefixed(const absl::Status& s, absl::string_view what) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

bool IsBlank(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isspace(c)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<LayeringIndex> LayeringIndex::Create(absl::string_view name_rules,
                                                    absl::string_view annotation_rules) {
  const bool names = !IsBlank(name_rules), annotations = !IsBlank(annotation_rules);
  if (names && annotations) {
    return absl::InvalidArgumentError(
        "partition: name rules and annotation rules are both set; use one mode: name rules "
        "match node names by substring, annotation rules match the layer_ann metadata");
  }
  LayeringIndex index;
  if (names) {
    absl::StatusOr<LayeringRules> rules = ParseLayeringRules(name_rules, RuleMode::kName);
    if (!rules.ok()) return Prefixed(rules.status(), "name rules");
    index.mode_ = RuleMode::kName;
    index.rules_ = *std::move(rules);
    index.names_ = std::make_shared<SubstringMatcher>(index.rules_);
  } else if (annotations) {
    absl::StatusOr<LayeringRules> rules =
        ParseLayeringRules(annotation_rules, RuleMode::kAnnotation);
    if (!rules.ok()) return Prefixed(rules.status(), "annotation rules");
    index.mode_ = RuleMode::kAnnotation;
    index.rules_ = *std::move(rules);
    index.annotations_ = std::make_shared<AnnotationMatcher>(index.rules_);
  }
  return index;
}

absl::StatusOr<std::vector<std::optional<PatternMatch>>> LayeringIndex::Assign(
    const engine::Graph& graph, absl::Span<const int> subgraph_parent) const {
  const size_t n = graph.nodes.size();
  std::vector<std::optional<PatternMatch>> out(n);
  if (!has_rules()) return out;
  if (names_ != nullptr) {
    for (size_t i = 0; i < n; ++i) out[i] = names_->MatchPattern(graph.nodes[i].name);
    return out;
  }
  if (!subgraph_parent.empty() && subgraph_parent.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("subgraph parents: ", subgraph_parent.size(), " entries for ", n, " nodes"));
  }
  // pass 1: each node's own annotation.
  for (size_t i = 0; i < n; ++i) {
    const auto& meta = graph.nodes[i].metadata;
    auto it = meta.find(kLayerAnnotationKey);
    if (it != meta.end()) out[i] = annotations_->MatchPattern(it->second);
  }
  if (subgraph_parent.empty()) return out;
  // pass 2: unmatched nodes take their nearest matched ancestor's rule. The walk up a chain is
  // bounded by n steps; more means a cycle.
  std::vector<std::optional<PatternMatch>> own = out;
  for (size_t i = 0; i < n; ++i) {
    if (own[i]) continue;
    int p = subgraph_parent[i];
    for (size_t steps = 0; p >= 0; ++steps) {
      if (static_cast<size_t>(p) >= n) {
        return absl::InvalidArgumentError(absl::StrCat(
            "subgraph parent ", p, " of node '", graph.nodes[i].name, "' is not a node index"));
      }
      if (steps > n) {
        return absl::InvalidArgumentError(
            absl::StrCat("subgraph parents form a cycle through node '", graph.nodes[i].name, "'"));
      }
      if (own[p]) {
        out[i] = own[p];
        break;
      }
      p = subgraph_parent[p];
    }
  }
  return out;
}

std::vector<std::string> DefaultLayerPrefixes() { return {"layers", "layer", "h", "blocks"}; }

LayerDetector::LayerDetector(std::vector<std::string> prefixes) : prefixes_(std::move(prefixes)) {}

std::optional<LayerId> LayerDetector::Detect(absl::string_view name) const {
  std::optional<LayerId> best;
  size_t best_pos = absl::string_view::npos;
  for (const std::string& prefix : prefixes_) {
    const std::string needle = absl::StrCat(prefix, ".");
    for (size_t pos = name.find(needle); pos != absl::string_view::npos && pos < best_pos;
         pos = name.find(needle, pos + 1)) {
      if (pos > 0 && (absl::ascii_isalnum(name[pos - 1]) || name[pos - 1] == '_')) continue;
      size_t end = pos + needle.size();
      int64_t number = 0;
      while (end < name.size() && absl::ascii_isdigit(name[end]) &&
             end - pos - needle.size() < kMaxLayerDigits) {
        number = number * 10 + (name[end] - '0');
        ++end;
      }
      if (end == pos + needle.size()) continue;                           // no digits
      if (end < name.size() && absl::ascii_isalnum(name[end])) continue;  // "layers.5a"
      best = LayerId{std::string(name.substr(pos, end - pos)), number};
      best_pos = pos;
      break;
    }
  }
  return best;
}

}  // namespace inferd::partition

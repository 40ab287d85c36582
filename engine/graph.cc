#include "engine/graph.h"

#include <queue>

#include "absl/strings/str_cat.h"

namespace inferd::engine {

int Graph::FindValue(absl::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

int Graph::AddValue(Value v) {
  const int index = static_cast<int>(values.size());
  by_name_[v.name] = index;
  values.push_back(std::move(v));
  return index;
}

void Graph::RenameValue(int v, std::string name) {
  by_name_.erase(values[v].name);
  by_name_[name] = v;
  values[v].name = std::move(name);
}

void Graph::RebuildEdges() {
  for (Value& v : values) {
    v.producer = -1;
    v.producer_slot = -1;
    v.consumers.clear();
  }
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    const Node& node = nodes[n];
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      if (node.inputs[i] >= 0) values[node.inputs[i]].consumers.emplace_back(n, i);
    }
    for (int k = 0; k < static_cast<int>(node.implicit_inputs.size()); ++k) {
      values[node.implicit_inputs[k]].consumers.emplace_back(n, node.inputs.size() + k);
    }
    for (int o = 0; o < static_cast<int>(node.outputs.size()); ++o) {
      if (node.outputs[o] >= 0) {
        values[node.outputs[o]].producer = n;
        values[node.outputs[o]].producer_slot = o;
      }
    }
  }
}

absl::Status Graph::TopologicalSort() {
  RebuildEdges();
  const int n = static_cast<int>(nodes.size());
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i) {
    for (int v : nodes[i].inputs) {
      if (v >= 0 && values[v].producer >= 0) ++pending[i];
    }
    for (int v : nodes[i].implicit_inputs) {
      if (values[v].producer >= 0) ++pending[i];
    }
  }
  // Kahn's algorithm with a min-heap on the original position keeps sorted graphs unchanged.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int v : nodes[i].outputs) {
      if (v < 0) continue;
      for (const auto& [consumer, input_index] : values[v].consumers) {
        if (--pending[consumer] == 0) ready.push(consumer);
      }
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("the graph has a cycle (or an input produced by no node) through node '",
                         nodes[i].name, "' (", nodes[i].op_type, ")"));
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  RebuildEdges();
  return absl::OkStatus();
}

void Graph::RemoveNodes(const std::vector<bool>& keep) {
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
  RebuildEdges();
}

absl::Status Graph::Validate() const {
  std::vector<bool> defined(values.size(), false);
  for (size_t v = 0; v < values.size(); ++v) {
    if (values[v].is_graph_input || values[v].initializer != nullptr) defined[v] = true;
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    std::vector<int> reads = node.inputs;
    reads.insert(reads.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    for (int v : reads) {
      if (v >= static_cast<int>(values.size())) {
        return absl::InternalError(absl::StrCat("node '", node.name, "' has a bad input index"));
      }
      if (v >= 0 && !defined[v]) {
        return absl::InternalError(absl::StrCat("node '", node.name, "' reads '", values[v].name,
                                                "' before it is produced"));
      }
    }
    for (int v : node.outputs) {
      if (v < 0) continue;
      if (defined[v]) {
        return absl::InternalError(absl::StrCat("value '", values[v].name,
                                                "' is produced twice (node '", node.name, "')"));
      }
      if (values[v].producer != static_cast<int>(n)) {
        return absl::InternalError(
            absl::StrCat("value '", values[v].name, "' has a stale producer"));
      }
      defined[v] = true;
    }
  }
  for (int v : outputs) {
    if (!defined[v]) {
      return absl::InternalError(
          absl::StrCat("graph output '", values[v].name, "' is produced by no node"));
    }
  }
  return absl::OkStatus();
}

std::string FusedNodeName(absl::string_view original, absl::string_view fusion_suffix) {
  return absl::StrCat(original, fusion_suffix);
}

absl::string_view OriginalNodeName(absl::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == absl::string_view::npos ? absl::string_view() : name.substr(0, slash);
}

}  // namespace inferd::engine

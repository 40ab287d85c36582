#include "engine/precision_widening.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"

namespace inferd::engine {

std::string WideningReport::Summary() const {
  if (!any_half()) return "no float16/bfloat16 compute";
  std::string s = absl::StrCat("widened ", widened_nodes, " nodes to float32 (", casts_to_float,
                               " casts in, ", casts_to_half, " out; ", converted_weights,
                               " weights converted, ", converted_weight_bytes, " bytes)");
  if (half_weights > 0) {
    absl::StrAppend(&s, "; ", half_weights, " weights kept half for their products (",
                    half_weight_bytes, " bytes)");
  }
  if (half_nodes > 0) absl::StrAppend(&s, "; ", half_nodes, " nodes run in half precision");
  return s;
}

namespace {

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

DataType Widened(DataType t) { return IsHalf(t) ? DataType::kFloat32 : t; }

DataType TypeOf(const Graph& g, int v) { return v < 0 ? DataType::kUndefined : g.values[v].type; }

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == kOnnxDomain; }

bool HasHalfValue(const Graph& g, const Node& n) {
  for (int v : n.inputs)
    if (IsHalf(TypeOf(g, v))) return true;
  for (int v : n.outputs)
    if (IsHalf(TypeOf(g, v))) return true;
  return false;
}

// Whether the node's element types follow its inputs (no attribute fixes an output type), so
// that reading float32 twins makes it write float32.
bool TypesFollowInputs(const Graph& g, const Node& n) {
  if (!n.subgraphs.empty()) return false;
  if (IsDefaultDomain(n.domain) && (n.op_type == "Cast" || n.op_type == "CastLike")) return false;
  for (const onnx::AttributeProto& a : n.attributes) {
    if (a.name() == "to" || a.name() == "dtype" || a.name() == "output_dtype") return false;
  }
  for (int v : n.inputs)
    if (IsHalf(TypeOf(g, v))) return true;
  return false;
}

const KernelDef* FindKernel(const Graph& g, const Node& n, const KernelRegistry& registry,
                            bool widened) {
  std::vector<DataType> in, out;
  for (int v : n.inputs) in.push_back(widened ? Widened(TypeOf(g, v)) : TypeOf(g, v));
  for (int v : n.outputs) out.push_back(widened ? Widened(TypeOf(g, v)) : TypeOf(g, v));
  return registry.Find(n.domain, n.op_type, n.opset, DeviceKind::kCpu, in, out);
}

bool HasKernel(const Graph& g, const Node& n, const KernelRegistry& registry, bool widened) {
  return FindKernel(g, n, registry, widened) != nullptr;
}

// Whether widened node `n` reads its input `k`, a half weight, as it is: its float32 kernel
// declares the input a half-weight input (KernelDef::half_weight_inputs) and the weight is 2-D.
bool KeepsHalfWeight(const Graph& g, const Node& n, size_t k, const KernelRegistry& registry) {
  const Tensor* w = g.values[n.inputs[k]].initializer;
  if (w == nullptr || w->shape().rank() != 2) return false;
  const KernelDef* def = FindKernel(g, n, registry, /*widened=*/true);
  if (def == nullptr) return false;
  for (int i : def->half_weight_inputs)
    if (static_cast<size_t>(i) == k) return true;
  return false;
}

onnx::AttributeProto ToAttribute(DataType t) {
  onnx::AttributeProto a;
  a.set_name("to");
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(static_cast<int64_t>(t));
  return a;
}

class Widener {
 public:
  Widener(Graph& g, const KernelRegistry& registry, DerivedWeights& weights, WideningReport& report,
          bool keep_half_weights)
      : g_(g),
        registry_(registry),
        weights_(weights),
        report_(report),
        keep_half_weights_(keep_half_weights) {}

  absl::Status Run() {
    g_.RebuildEdges();
    cast_opset_ = 13;
    for (const Node& n : g_.nodes) {
      if (IsDefaultDomain(n.domain)) {
        cast_opset_ = n.opset;
        break;
      }
    }
    // pass 1: subgraphs first, each on its own.
    for (Node& n : g_.nodes) {
      for (auto& [attribute, sub] : n.subgraphs) {
        Graph copy = *sub;
        WideningReport sub_report;
        Widener w(copy, registry_, weights_, sub_report, keep_half_weights_);
        INFERD_RETURN_IF_ERROR(w.Run());
        Add(sub_report);
        if (sub_report.widened_nodes > 0) sub = std::make_shared<const Graph>(std::move(copy));
      }
    }
    // pass 2: choose the nodes to widen, in topological order: those with a float32 kernel but
    // none for their half types, then those with both whose half inputs are all weights or
    // already float32 (at least one made by a widened node).
    const size_t num_nodes = g_.nodes.size();
    std::vector<bool> widen(num_nodes, false);
    std::vector<bool> wide_value(g_.values.size(), false);  // made in float32 by a widened node
    for (size_t i = 0; i < num_nodes; ++i) {
      const Node& n = g_.nodes[i];
      if (!HasHalfValue(g_, n)) continue;
      if (TypesFollowInputs(g_, n) && HasKernel(g_, n, registry_, /*widened=*/true)) {
        if (!HasKernel(g_, n, registry_, /*widened=*/false)) {
          widen[i] = true;
        } else {
          bool all_wide = true, any_made = false;
          for (int v : n.inputs) {
            if (!IsHalf(TypeOf(g_, v))) continue;
            const bool weight = g_.values[v].initializer != nullptr;
            any_made = any_made || wide_value[v];
            all_wide = all_wide && (weight || wide_value[v]);
          }
          widen[i] = all_wide && any_made;
        }
      }
      if (!widen[i]) {
        ++report_.half_nodes;
        continue;
      }
      ++report_.widened_nodes;
      for (int v : n.outputs)
        if (v >= 0 && IsHalf(g_.values[v].type)) wide_value[v] = true;
    }
    bool any_widened = false;
    for (bool w : widen) any_widened = any_widened || w;
    if (!any_widened) return absl::OkStatus();
    // Readers of each value, before the rewrite changes them.
    std::vector<bool> needs_half(g_.values.size(), false);
    for (size_t v = 0; v < g_.values.size(); ++v) {
      if (!wide_value[v]) continue;
      const Value& value = g_.values[v];
      bool needed = value.is_graph_output;
      for (const auto& [node, slot] : value.consumers) needed = needed || !widen[node];
      needs_half[v] = needed;
    }
    // pass 3: rewrite the widened nodes: half outputs become float32 twins, half inputs read
    // twins (weights converted, other values cast on entry).
    std::vector<Node> added;
    for (size_t i = 0; i < num_nodes; ++i) {
      if (!widen[i]) continue;
      for (size_t k = 0; k < g_.nodes[i].outputs.size(); ++k) {
        const int v = g_.nodes[i].outputs[k];
        if (v < 0 || !IsHalf(g_.values[v].type)) continue;
        const int twin = AddTwin(v);
        g_.nodes[i].outputs[k] = twin;
        if (needs_half[v]) {
          added.push_back(CastNode(twin, v, v, g_.values[v].type, "/FromFloat32", g_.nodes[i]));
          ++report_.casts_to_half;
        }
      }
    }
    std::set<int> kept;  // half weights read as they are
    for (size_t i = 0; i < num_nodes; ++i) {
      if (!widen[i]) continue;
      for (size_t k = 0; k < g_.nodes[i].inputs.size(); ++k) {
        const int v = g_.nodes[i].inputs[k];
        if (v < 0 || !IsHalf(g_.values[v].type)) continue;
        if (keep_half_weights_ && KeepsHalfWeight(g_, g_.nodes[i], k, registry_)) {
          if (kept.insert(v).second) {
            ++report_.half_weights;
            report_.half_weight_bytes = SaturatingAdd<uint64_t>(report_.half_weight_bytes,
                                                                g_.values[v].initializer->bytes());
          }
          continue;
        }
        INFERD_ASSIGN_OR_RETURN(const int twin, InputTwin(v, g_.nodes[i], added));
        g_.nodes[i].inputs[k] = twin;
      }
    }
    for (Node& n : added) g_.nodes.push_back(std::move(n));
    g_.RebuildEdges();
    INFERD_RETURN_IF_ERROR(g_.TopologicalSort());
    return g_.Validate();
  }

 private:
  void Add(const WideningReport& r) {
    report_.widened_nodes += r.widened_nodes;
    report_.half_nodes += r.half_nodes;
    report_.casts_to_float += r.casts_to_float;
    report_.casts_to_half += r.casts_to_half;
    report_.converted_weights += r.converted_weights;
    report_.converted_weight_bytes =
        SaturatingAdd(report_.converted_weight_bytes, r.converted_weight_bytes);
    report_.half_weights += r.half_weights;
    report_.half_weight_bytes = SaturatingAdd(report_.half_weight_bytes, r.half_weight_bytes);
  }

  std::string UniqueValueName(const std::string& base) {
    std::string name = absl::StrCat(base, "/float32");
    for (int k = 1; g_.FindValue(name) >= 0; ++k) name = absl::StrCat(base, "/float32_", k);
    return name;
  }

  // A float32 value shaped as half value `v`, recorded as its twin.
  int AddTwin(int v) {
    Value w;
    w.name = UniqueValueName(g_.values[v].name);
    w.type = DataType::kFloat32;
    w.shape = g_.values[v].shape;
    const int index = g_.AddValue(std::move(w));
    twin_[v] = index;
    return index;
  }

  // The twin a widened node reads for half value `v`: made by a widened node already, a
  // converted weight, or the output of a Cast inserted on entry.
  absl::StatusOr<int> InputTwin(int v, const Node& reader, std::vector<Node>& added) {
    auto it = twin_.find(v);
    if (it != twin_.end()) return it->second;
    const Tensor* half = g_.values[v].initializer;
    if (half != nullptr) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* wide, weights_.Widen(*half));
      const int twin = AddTwin(v);
      g_.values[twin].initializer = wide;
      ++report_.converted_weights;
      report_.converted_weight_bytes =
          SaturatingAdd<uint64_t>(report_.converted_weight_bytes, wide->bytes());
      return twin;
    }
    const int twin = AddTwin(v);
    added.push_back(CastNode(v, twin, v, DataType::kFloat32, "/ToFloat32", reader));
    ++report_.casts_to_float;
    return twin;
  }

  // Cast(from) -> to, named after half value `half`.
  Node CastNode(int from, int to, int half, DataType type, absl::string_view suffix,
                const Node& near) {
    Node n;
    n.name = absl::StrCat(g_.values[half].name, suffix);
    n.op_type = "Cast";
    n.opset = cast_opset_;
    n.inputs = {from};
    n.outputs = {to};
    n.attributes.push_back(ToAttribute(type));
    n.metadata = near.metadata;
    n.device = near.device;
    return n;
  }

  Graph& g_;
  const KernelRegistry& registry_;
  DerivedWeights& weights_;
  WideningReport& report_;
  const bool keep_half_weights_;
  int cast_opset_ = 13;
  std::map<int, int> twin_;  // half value -> its float32 twin
};

}  // namespace

absl::StatusOr<WideningReport> WidenHalfPrecision(Graph& graph, const KernelRegistry& registry,
                                                  DerivedWeights& weights, bool keep_half_weights) {
  WideningReport report;
  Widener w(graph, registry, weights, report, keep_half_weights);
  INFERD_RETURN_IF_ERROR(w.Run());
  return report;
}

}  // namespace inferd::engine

#include "engine/rewrite_util.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"

namespace inferd::engine::rewrite {

int SoleConsumer(const Graph& g, int value) {
  const Value& v = g.values[value];
  if (v.is_graph_output || v.consumers.size() != 1) return -1;
  return v.consumers[0].first;
}

bool IsOnnxOp(const Node& n, absl::string_view op) { return n.domain.empty() && n.op_type == op; }

Node Fused(const Node& first, const Node& second, absl::string_view op, absl::string_view suffix) {
  Node f;
  f.name = FusedNodeName(first.name, suffix);
  f.op_type = std::string(op);
  f.domain = kInferdDomain;
  f.opset = 1;
  f.outputs = second.outputs;
  f.metadata = first.metadata;
  f.device = first.device;
  return f;
}

absl::Status Replace(Graph& g, const std::vector<bool>& keep,
                     std::vector<std::pair<size_t, Node>>& replacements) {
  if (replacements.empty()) return absl::OkStatus();
  std::vector<Node> nodes;
  size_t r = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (r < replacements.size() && replacements[r].first == i) {
      nodes.push_back(std::move(replacements[r++].second));
    }
    if (keep[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  INFERD_RETURN_IF_ERROR(g.TopologicalSort());
  return g.Validate();
}

const onnx::AttributeProto* FindAttribute(const Node& n, absl::string_view name) {
  for (const onnx::AttributeProto& a : n.attributes) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

float FloatAttribute(const Node& n, absl::string_view name, float fallback) {
  const onnx::AttributeProto* a = FindAttribute(n, name);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}

const Tensor* FloatWeight(const Graph& g, int value, int64_t n) {
  if (value < 0) return nullptr;
  const Tensor* t = g.values[value].initializer;
  if (t == nullptr || t->dtype() != DataType::kFloat32 || t->NumElements() != n) return nullptr;
  return t;
}

int OtherInput(const Node& n, int value) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == value) return n.inputs[1];
  return n.inputs[1] == value ? n.inputs[0] : -1;
}

int64_t IntAttribute(const Node& n, absl::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttribute(n, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}

int AddWeight(Graph& g, const std::string& name, const Tensor* t) {
  Value v;
  v.name = name;
  for (int k = 1; g.FindValue(v.name) >= 0; ++k) v.name = absl::StrCat(name, "_", k);
  v.type = t->dtype();
  v.shape = ShapeInfo::FromShape(t->shape());
  v.initializer = t;
  return g.AddValue(std::move(v));
}

bool SameShape(const ShapeInfo& a, const ShapeInfo& b) {
  if (!a.rank_known || !b.rank_known || a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const DimInfo &x = a.dims[i], &y = b.dims[i];
    if (x.known() != y.known()) return false;
    if (x.known() ? x.value != y.value : (x.symbol.empty() || x.symbol != y.symbol)) return false;
  }
  return true;
}

std::vector<bool> ImplicitlyRead(const Graph& g) {
  std::vector<bool> implicit(g.values.size(), false);
  for (const Node& n : g.nodes) {
    for (int v : n.implicit_inputs) {
      if (v >= 0) implicit[v] = true;
    }
  }
  return implicit;
}

void NarrowToFixedPoint(const Graph& g, std::vector<bool>& set,
                        const std::function<bool(int value)>& producer_accepts,
                        const std::function<bool(int node, int slot)>& reader_accepts) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = 0; v < g.values.size(); ++v) {
      if (!set[v]) continue;
      bool ok = producer_accepts(static_cast<int>(v));
      for (const auto& [reader, slot] : g.values[v].consumers) {
        ok = ok && reader_accepts(reader, slot);
      }
      if (!ok) {
        set[v] = false;
        changed = true;
      }
    }
  }
}

void SetIntAttribute(Node& n, const char* name, int64_t v) {
  for (onnx::AttributeProto& a : n.attributes) {
    if (a.name() == name) {
      a.set_i(v);
      return;
    }
  }
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  n.attributes.push_back(std::move(a));
}

}  // namespace inferd::engine::rewrite

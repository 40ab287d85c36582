#include "engine/rewrites.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::engine {
namespace {

// The single node reading `value`, or -1 (none, several, or a graph output).
int SoleConsumer(const Graph& g, int value) {
  const Value& v = g.values[value];
  if (v.is_graph_output || v.consumers.size() != 1) return -1;
  return v.consumers[0].first;
}

bool IsOnnxOp(const Node& n, absl::string_view op) { return n.domain.empty() && n.op_type == op; }

// True if `bias` is a weight whose elements all lie along the last dim and number `n`.
bool IsLastDimBias(const Value& bias, int64_t n) {
  if (bias.initializer == nullptr || bias.type != DataType::kFloat32) return false;
  const Shape& s = bias.initializer->shape();
  if (s.rank() == 0 || s[s.rank() - 1] != n) return false;
  return s.NumElements() == n;
}

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

// The attribute `name` of `n`, or nullptr.
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

// A float32 weight of exactly `n` elements, or nullptr.
const Tensor* FloatWeight(const Graph& g, int value, int64_t n) {
  if (value < 0) return nullptr;
  const Tensor* t = g.values[value].initializer;
  if (t == nullptr || t->dtype() != DataType::kFloat32 || t->NumElements() != n) return nullptr;
  return t;
}

// Conv(X, W, B) -> BatchNormalization(scale, bias, mean, var) with constant float32 weights, the
// BN in inference form, folded into Conv(X, W', B'):
//   f = scale / sqrt(var + epsilon);  W'[m] = W[m] f[m];  B' = (B - mean) f + bias
// computed in double, stored as new weights in `derived` (named "<W>/ConvBatchNormFusion"). The
// Conv keeps its place and its name and takes the BN's output; the BN is dropped. Returns how
// many.
absl::StatusOr<int> FoldBatchNorms(Graph& g, DerivedWeights& derived) {
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& conv = g.nodes[i];
    if (!IsOnnxOp(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
    const int next = SoleConsumer(g, conv.outputs[0]);
    if (next < 0 || !keep[next] || g.nodes[next].device != conv.device) continue;
    const Node& bn = g.nodes[next];
    if (!IsOnnxOp(bn, "BatchNormalization") || bn.inputs.size() != 5 ||
        bn.inputs[0] != conv.outputs[0]) {
      continue;
    }
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k) extra_outputs |= bn.outputs[k] >= 0;
    const onnx::AttributeProto* training = FindAttribute(bn, "training_mode");
    if (extra_outputs || (training != nullptr && training->i() != 0)) continue;
    const Tensor* w = g.values[conv.inputs[1]].initializer;
    if (w == nullptr || w->dtype() != DataType::kFloat32 || w->shape().rank() < 3) continue;
    const int64_t m = w->shape()[0];
    if (m <= 0) continue;
    const int b_value = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
    const Tensor* b = FloatWeight(g, b_value, m);
    if (b_value >= 0 && b == nullptr) continue;
    const Tensor* scale = FloatWeight(g, bn.inputs[1], m);
    const Tensor* shift = FloatWeight(g, bn.inputs[2], m);
    const Tensor* mean = FloatWeight(g, bn.inputs[3], m);
    const Tensor* var = FloatWeight(g, bn.inputs[4], m);
    if (scale == nullptr || shift == nullptr || mean == nullptr || var == nullptr) continue;
    const double epsilon = FloatAttribute(bn, "epsilon", 1e-5f);

    float* w_data = nullptr;
    float* b_data = nullptr;
    INFERD_ASSIGN_OR_RETURN(const Tensor* new_w, derived.NewFloat32(w->shape(), &w_data));
    INFERD_ASSIGN_OR_RETURN(const Tensor* new_b, derived.NewFloat32(Shape{m}, &b_data));
    const int64_t per_filter = w->NumElements() / m;
    for (int64_t o = 0; o < m; ++o) {
      const double f =
          scale->data<float>()[o] / std::sqrt(static_cast<double>(var->data<float>()[o]) + epsilon);
      const float* src = w->data<float>() + o * per_filter;
      for (int64_t k = 0; k < per_filter; ++k) {
        w_data[o * per_filter + k] = static_cast<float>(src[k] * f);
      }
      const double bias = b != nullptr ? b->data<float>()[o] : 0.0;
      b_data[o] = static_cast<float>((bias - mean->data<float>()[o]) * f + shift->data<float>()[o]);
    }
    auto add_weight = [&](const std::string& base, const Tensor* t) {
      Value v;
      v.name = FusedNodeName(base, kConvBatchNormSuffix);
      for (int k = 1; g.FindValue(v.name) >= 0; ++k) {
        v.name = absl::StrCat(FusedNodeName(base, kConvBatchNormSuffix), "_", k);
      }
      v.type = DataType::kFloat32;
      v.shape = ShapeInfo::FromShape(t->shape());
      v.initializer = t;
      return g.AddValue(std::move(v));
    };
    const std::string w_name = g.values[conv.inputs[1]].name;
    conv.inputs.resize(3);
    conv.inputs[1] = add_weight(w_name, new_w);
    conv.inputs[2] = add_weight(absl::StrCat(w_name, "/bias"), new_b);
    conv.outputs = bn.outputs;
    conv.outputs.resize(1);
    keep[next] = false;
    ++folded;
  }
  if (folded > 0) g.RemoveNodes(keep);
  return folded;
}

// An activation FusedConv applies as a post-op: its name and parameters as FusedConv's
// `activation` / `activation_params` attributes take them, or nullopt when `act` (reading
// `conv`'s output) is not one or its parameters are not constants.
struct Activation {
  std::string op;
  std::vector<float> params;
};

std::optional<Activation> ConvActivation(const Graph& g, const Node& act) {
  if (!act.domain.empty() || act.outputs.empty() || act.outputs[0] < 0) return std::nullopt;
  const std::string& op = act.op_type;
  if (op == "Relu" || op == "HardSwish" || op == "Sigmoid" || op == "Tanh") {
    return Activation{op, {}};
  }
  if (op == "LeakyRelu") return Activation{op, {FloatAttribute(act, "alpha", 0.01f)}};
  if (op == "Elu") return Activation{op, {FloatAttribute(act, "alpha", 1.0f)}};
  if (op == "HardSigmoid") {
    return Activation{op, {FloatAttribute(act, "alpha", 0.2f), FloatAttribute(act, "beta", 0.5f)}};
  }
  if (op == "Clip") {
    float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    if (act.opset < 11) {
      lo = FloatAttribute(act, "min", lo);
      hi = FloatAttribute(act, "max", hi);
    } else {
      for (size_t k = 1; k < act.inputs.size() && k < 3; ++k) {
        if (act.inputs[k] < 0) continue;
        const Tensor* bound = FloatWeight(g, act.inputs[k], 1);
        if (bound == nullptr) return std::nullopt;  // a bound computed at run time
        (k == 1 ? lo : hi) = bound->data<float>()[0];
      }
    }
    if (!(lo <= hi)) return std::nullopt;  // ONNX leaves it undefined; keep Clip's own answer
    return Activation{op, {lo, hi}};
  }
  return std::nullopt;
}

// x * sigmoid(x) as exporters write SiLU: `v` read by exactly a Sigmoid and a Mul of `v` and the
// Sigmoid's output (either order), that output read by the Mul alone. The Mul's index (the
// Sigmoid's in *sigmoid), or -1.
int SiluMul(const Graph& g, int v, int* sigmoid) {
  const Value& value = g.values[v];
  if (value.is_graph_output || value.consumers.size() != 2) return -1;
  int sig = -1, mul = -1;
  for (const auto& [node, slot] : value.consumers) {
    const Node& n = g.nodes[node];
    if (IsOnnxOp(n, "Sigmoid") && n.outputs.size() == 1) sig = node;
    if (IsOnnxOp(n, "Mul") && n.inputs.size() == 2) mul = node;
  }
  if (sig < 0 || mul < 0) return -1;
  const int s = g.nodes[sig].outputs[0];
  const std::vector<int>& in = g.nodes[mul].inputs;
  if (s < 0 || SoleConsumer(g, s) != mul) return -1;
  if (!((in[0] == v && in[1] == s) || (in[0] == s && in[1] == v))) return -1;
  *sigmoid = sig;
  return mul;
}

// FusedConv for `conv` with `act`, writing `last`'s output, named after the Conv.
Node FusedConvNode(const Node& conv, const Node& last, const Activation& act) {
  Node f =
      Fused(conv, last, "FusedConv", act.op == "Relu" ? kConvReluSuffix : kConvActivationSuffix);
  f.inputs = conv.inputs;
  f.attributes = conv.attributes;
  onnx::AttributeProto op;
  op.set_name("activation");
  op.set_type(onnx::AttributeProto::STRING);
  op.set_s(act.op);
  f.attributes.push_back(std::move(op));
  if (!act.params.empty()) {
    onnx::AttributeProto params;
    params.set_name("activation_params");
    params.set_type(onnx::AttributeProto::FLOATS);
    for (float p : act.params) params.add_floats(p);
    f.attributes.push_back(std::move(params));
  }
  return f;
}

}  // namespace

absl::StatusOr<int> ApplyFusions(Graph& g, const KernelRegistry& registry,
                                 DerivedWeights& derived) {
  const bool matmul_add = registry.HasOp(kInferdDomain, "FusedMatMul");
  const bool conv_act = registry.HasOp(kInferdDomain, "FusedConv");
  INFERD_ASSIGN_OR_RETURN(const int folded, FoldBatchNorms(g, derived));
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;  // (position of the first node, fused node)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& first = g.nodes[i];
    if (!keep[i] || first.outputs.size() != 1 || first.outputs[0] < 0) continue;
    if (conv_act && IsOnnxOp(first, "Conv") &&
        g.values[first.outputs[0]].type == DataType::kFloat32) {
      int sigmoid = -1;
      const int mul = SiluMul(g, first.outputs[0], &sigmoid);
      if (mul >= 0 && keep[mul] && keep[sigmoid] && g.nodes[mul].device == first.device &&
          g.nodes[sigmoid].device == first.device) {
        replacements.emplace_back(i, FusedConvNode(first, g.nodes[mul], Activation{"Silu", {}}));
        keep[i] = keep[sigmoid] = keep[mul] = false;
        continue;
      }
    }
    const int next = SoleConsumer(g, first.outputs[0]);
    if (next < 0 || !keep[next] || g.nodes[next].device != first.device) continue;
    const Node& second = g.nodes[next];
    if (matmul_add && IsOnnxOp(first, "MatMul") && IsOnnxOp(second, "Add") &&
        first.inputs.size() == 2 && second.inputs.size() == 2) {
      const Value& mid = g.values[first.outputs[0]];
      if (mid.type != DataType::kFloat32 || !mid.shape.rank_known || mid.shape.dims.size() < 2) {
        continue;
      }
      const DimInfo& last = mid.shape.dims.back();
      const int bias = second.inputs[0] == first.outputs[0] ? second.inputs[1] : second.inputs[0];
      if (!last.known() || bias < 0 || !IsLastDimBias(g.values[bias], last.value)) continue;
      Node f = Fused(first, second, "FusedMatMul", kMatMulAddSuffix);
      f.inputs = {first.inputs[0], first.inputs[1], bias};
      replacements.emplace_back(i, std::move(f));
      keep[i] = keep[next] = false;
    } else if (conv_act && IsOnnxOp(first, "Conv") &&
               g.values[first.outputs[0]].type == DataType::kFloat32) {
      std::optional<Activation> act = ConvActivation(g, second);
      if (!act) continue;
      replacements.emplace_back(i, FusedConvNode(first, second, *act));
      keep[i] = keep[next] = false;
    }
  }
  if (replacements.empty()) return folded;
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
  INFERD_RETURN_IF_ERROR(g.Validate());
  return folded + static_cast<int>(replacements.size());
}

}  // namespace inferd::engine

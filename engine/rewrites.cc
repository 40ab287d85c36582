#include "engine/rewrites.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/qdq_fusion.h"
#include "engine/rewrite_util.h"

namespace inferd::engine {
namespace {

using rewrite::FindAttribute;
using rewrite::FloatAttribute;
using rewrite::FloatWeight;
using rewrite::Fused;
using rewrite::IntAttribute;
using rewrite::IsOnnxOp;
using rewrite::OtherInput;
using rewrite::Replace;
using rewrite::SoleConsumer;

// True if `bias` is a weight whose elements all lie along the last dim and number `n`.
bool IsLastDimBias(const Value& bias, int64_t n) {
  if (bias.initializer == nullptr || bias.type != DataType::kFloat32) return false;
  const Shape& s = bias.initializer->shape();
  if (s.rank() == 0 || s[s.rank() - 1] != n) return false;
  return s.NumElements() == n;
}

// Pad (constant mode, value 0, spatial dims only, constant pads) -> Conv becomes the Conv with
// those pads added to its own: exporters of TF-style "same" padding write an explicit Pad before
// each strided convolution (transformers' MobileNetV2: 17 of them, 27% of its time). The Conv
// keeps its name and reads the Pad's input; the Pad is dropped. The same for Pad ->
// DynamicQuantizeLinear -> ConvInteger (the DynamicQuantizeLinear then reads the Pad's input).
// Returns how many.
int FoldPadsIntoConvs(Graph& g) {
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& pad = g.nodes[i];
    if (!IsOnnxOp(pad, "Pad") || pad.inputs.empty() || pad.outputs.size() != 1 ||
        pad.outputs[0] < 0) {
      continue;
    }
    int next = SoleConsumer(g, pad.outputs[0]);
    if (next < 0 || !keep[next] || g.nodes[next].device != pad.device) continue;
    // Pad -> DynamicQuantizeLinear -> ConvInteger (quantize_dynamic's form of the same): the
    // range the quantization takes always holds 0, so the padded zeros change neither its
    // scale nor its zero point, and quantize to exactly the zero point, which is what
    // ConvInteger's own padding contributes.
    int dql = -1;
    if (IsOnnxOp(g.nodes[next], "DynamicQuantizeLinear") && !g.nodes[next].outputs.empty() &&
        g.nodes[next].outputs[0] >= 0) {
      dql = next;
      next = SoleConsumer(g, g.nodes[dql].outputs[0]);
      if (next < 0 || !keep[next] || g.nodes[next].device != pad.device) continue;
    }
    Node& conv = g.nodes[next];
    const int conv_x = dql >= 0 ? g.nodes[dql].outputs[0] : pad.outputs[0];
    if (!IsOnnxOp(conv, dql >= 0 ? "ConvInteger" : "Conv") || conv.inputs.empty() ||
        conv.inputs[0] != conv_x) {
      continue;
    }
    const onnx::AttributeProto* mode = FindAttribute(pad, "mode");
    if (mode != nullptr && mode->s() != "constant") continue;
    const onnx::AttributeProto* auto_pad = FindAttribute(conv, "auto_pad");
    if (auto_pad != nullptr && auto_pad->s() != "NOTSET") continue;
    // The pads: the attribute before opset 11, else a constant int64 input (no axes input).
    std::vector<int64_t> pads;
    if (pad.opset < 11) {
      const onnx::AttributeProto* a = FindAttribute(pad, "pads");
      if (a == nullptr || FloatAttribute(pad, "value", 0.0f) != 0.0f) continue;
      pads.assign(a->ints().begin(), a->ints().end());
    } else {
      if (pad.inputs.size() < 2 || pad.inputs[1] < 0 || pad.inputs.size() > 3) continue;
      const Tensor* p = g.values[pad.inputs[1]].initializer;
      if (p == nullptr || p->dtype() != DataType::kInt64) continue;
      pads.assign(p->data<int64_t>(), p->data<int64_t>() + p->NumElements());
      if (pad.inputs.size() == 3 && pad.inputs[2] >= 0) {
        const Tensor* value = g.values[pad.inputs[2]].initializer;
        if (value == nullptr || value->NumElements() != 1 || value->dtype() != DataType::kFloat32 ||
            value->data<float>()[0] != 0.0f) {
          continue;
        }
      }
    }
    const Tensor* w = conv.inputs.size() > 1 && conv.inputs[1] >= 0
                          ? g.values[conv.inputs[1]].initializer
                          : nullptr;
    const size_t rank = w != nullptr ? w->shape().rank() : 0;
    if (rank < 3 || pads.size() != 2 * rank) continue;
    const size_t spatial = rank - 2;
    bool ok = pads[0] == 0 && pads[1] == 0 && pads[rank] == 0 && pads[rank + 1] == 0;
    for (int64_t v : pads) ok = ok && v >= 0;
    if (!ok) continue;
    std::vector<int64_t> conv_pads(2 * spatial, 0);
    const onnx::AttributeProto* own = FindAttribute(conv, "pads");
    if (own != nullptr) {
      if (static_cast<size_t>(own->ints_size()) != 2 * spatial) continue;
      conv_pads.assign(own->ints().begin(), own->ints().end());
    }
    for (size_t k = 0; k < spatial; ++k) {
      conv_pads[k] += pads[2 + k];
      conv_pads[spatial + k] += pads[rank + 2 + k];
    }
    std::vector<onnx::AttributeProto> attributes;
    for (const onnx::AttributeProto& a : conv.attributes) {
      if (a.name() != "pads" && a.name() != "auto_pad") attributes.push_back(a);
    }
    onnx::AttributeProto merged;
    merged.set_name("pads");
    merged.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : conv_pads) merged.add_ints(v);
    attributes.push_back(std::move(merged));
    conv.attributes = std::move(attributes);
    if (dql >= 0) {
      // The quantized tensor now has the Pad's input's shape.
      g.nodes[dql].inputs[0] = pad.inputs[0];
      g.values[conv_x].shape = g.values[pad.inputs[0]].shape;
    } else {
      conv.inputs[0] = pad.inputs[0];
    }
    keep[i] = false;
    ++folded;
  }
  if (folded > 0) g.RemoveNodes(keep);
  return folded;
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
    const std::string w_name = g.values[conv.inputs[1]].name;
    conv.inputs.resize(3);
    conv.inputs[1] = rewrite::AddWeight(g, FusedNodeName(w_name, kConvBatchNormSuffix), new_w);
    conv.inputs[2] = rewrite::AddWeight(
        g, FusedNodeName(absl::StrCat(w_name, "/bias"), kConvBatchNormSuffix), new_b);
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

// pass 0 (before the QDQ fusion, pass 1): Identity of a weight (exporters write them for shared
// parameters: every bias of a transformers ViT export after the first layer) is dropped and its
// readers read the weight, so the fusions below see a constant. Not where the copy is a graph
// output or read inside a subgraph (found there by name). Returns how many.
int ForwardConstantIdentities(Graph& g) {
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<bool> implicit(g.values.size(), false);
  for (const Node& n : g.nodes) {
    for (int v : n.implicit_inputs) {
      if (v >= 0) implicit[v] = true;
    }
  }
  int dropped = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!IsOnnxOp(n, "Identity") || n.inputs.size() != 1 || n.outputs.size() != 1) continue;
    const int in = n.inputs[0], out = n.outputs[0];
    if (in < 0 || out < 0 || g.values[in].initializer == nullptr) continue;
    if (g.values[out].is_graph_output || implicit[out]) continue;
    for (const auto& [reader, slot] : g.values[out].consumers) g.nodes[reader].inputs[slot] = in;
    keep[i] = false;
    ++dropped;
  }
  if (dropped > 0) g.RemoveNodes(keep);
  return dropped;
}

// pass 2: the Conv + BatchNormalization folds, then the pairs (MatMul + Add, Conv + activation).
absl::StatusOr<int> FusePairs(Graph& g, const KernelRegistry& registry, DerivedWeights& derived) {
  const bool matmul_add = registry.HasOp(kInferdDomain, "FusedMatMul");
  const bool conv_act = registry.HasOp(kInferdDomain, "FusedConv");
  const int pads = FoldPadsIntoConvs(g);
  INFERD_ASSIGN_OR_RETURN(const int folded_bn, FoldBatchNorms(g, derived));
  const int folded = pads + folded_bn;
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
      // The product's last dim: from its inferred shape, else from constant B's (libonnx's
      // shape inference gives up on some exported encoders, leaving every shape unknown).
      const Value& mid = g.values[first.outputs[0]];
      if (mid.type != DataType::kFloat32) continue;
      int64_t n = -1;
      if (mid.shape.rank_known && mid.shape.dims.size() >= 2 && mid.shape.dims.back().known()) {
        n = mid.shape.dims.back().value;
      } else if (const Tensor* b = g.values[first.inputs[1]].initializer;
                 b != nullptr && b->shape().rank() >= 2) {
        n = b->shape()[b->shape().rank() - 1];
      }
      const int bias = second.inputs[0] == first.outputs[0] ? second.inputs[1] : second.inputs[0];
      if (n < 0 || bias < 0 || !IsLastDimBias(g.values[bias], n)) continue;
      Node f = Fused(first, second, "FusedMatMul", kMatMulAddSuffix);
      f.inputs = {first.inputs[0], first.inputs[1], bias};
      replacements.emplace_back(i, std::move(f));
      keep[i] = keep[next] = false;
    } else if (matmul_add && IsOnnxOp(first, "MatMul") && first.inputs.size() == 2 &&
               (IsOnnxOp(second, "Mul") || IsOnnxOp(second, "Div")) &&
               g.values[first.outputs[0]].type == DataType::kFloat32) {
      // MatMul times (or over) a scalar constant: the product's output scale (attention scores
      // scaled by 1/sqrt(d), as exporters write them after Q K^T).
      const int other = OtherInput(second, first.outputs[0]);
      const bool divides = IsOnnxOp(second, "Div");
      if (other < 0 || (divides && second.inputs[0] != first.outputs[0])) continue;
      const Tensor* c = FloatWeight(g, other, 1);
      if (c == nullptr || c->data<float>()[0] == 0.0f) continue;
      const float scale = divides ? 1.0f / c->data<float>()[0] : c->data<float>()[0];
      if (!std::isfinite(scale)) continue;
      Node f = Fused(first, second, "FusedMatMul", kMatMulScaleSuffix);
      f.inputs = {first.inputs[0], first.inputs[1]};
      onnx::AttributeProto alpha;
      alpha.set_name("alpha");
      alpha.set_type(onnx::AttributeProto::FLOAT);
      alpha.set_f(scale);
      f.attributes.push_back(std::move(alpha));
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
  INFERD_RETURN_IF_ERROR(Replace(g, keep, replacements));
  return folded + static_cast<int>(replacements.size());
}

// A scalar float32 weight within 1e-4 (relative) of `want`.
bool IsScalarNear(const Graph& g, int value, float want) {
  const Tensor* t = FloatWeight(g, value, 1);
  return t != nullptr && std::fabs(t->data<float>()[0] - want) <= 1e-4f * std::fabs(want);
}

// GELU in its erf form as exporters write it, read from `x`:
//   e = Erf(x / sqrt(2)) (or x * (1 / sqrt(2))); a = e + 1;
//   y = (x * a) * 0.5   or   y = (x * 0.5) * a
// with every intermediate read only inside the pattern. Fills `nodes` with its nodes (the last
// one writes y) and returns true when it matches.
bool MatchGeluErf(const Graph& g, int x, std::vector<int>& nodes) {
  const Value& xv = g.values[x];
  if (xv.is_graph_output || xv.consumers.size() != 2) return false;
  int scale = -1, mul = -1;
  for (const auto& [node, slot] : xv.consumers) {
    const Node& n = g.nodes[node];
    const int c = OtherInput(n, x);
    if (c < 0) return false;
    if ((IsOnnxOp(n, "Div") && slot == 0 && IsScalarNear(g, c, 1.41421356f)) ||
        (IsOnnxOp(n, "Mul") && IsScalarNear(g, c, 0.70710678f))) {
      scale = node;
    } else if (IsOnnxOp(n, "Mul")) {
      mul = node;
    }
  }
  if (scale < 0 || mul < 0 || scale == mul) return false;
  const int erf = SoleConsumer(g, g.nodes[scale].outputs[0]);
  if (erf < 0 || !IsOnnxOp(g.nodes[erf], "Erf")) return false;
  const int add = SoleConsumer(g, g.nodes[erf].outputs[0]);
  if (add < 0 || !IsOnnxOp(g.nodes[add], "Add") ||
      !IsScalarNear(g, OtherInput(g.nodes[add], g.nodes[erf].outputs[0]), 1.0f)) {
    return false;
  }
  const int a = g.nodes[add].outputs[0], m = g.nodes[mul].outputs[0];
  const int last = SoleConsumer(g, m);
  if (last < 0 || !IsOnnxOp(g.nodes[last], "Mul")) return false;
  if (OtherInput(g.nodes[mul], x) == a) {  // (x * a) * 0.5
    if (!IsScalarNear(g, OtherInput(g.nodes[last], m), 0.5f)) return false;
  } else if (IsScalarNear(g, OtherInput(g.nodes[mul], x), 0.5f)) {  // (x * 0.5) * a
    if (OtherInput(g.nodes[last], m) != a || SoleConsumer(g, a) != last) return false;
  } else {
    return false;
  }
  if (OtherInput(g.nodes[mul], x) == a && SoleConsumer(g, a) != mul) return false;
  nodes = {scale, erf, add, mul, last};
  return true;
}

// pass 3: FusedMatMul -> GELU (erf form) becomes the FusedMatMul with activation "Gelu" (oneDNN's
// gelu_erf post-op); the FusedMatMul keeps its name and takes the GELU's output. Returns how many.
absl::StatusOr<int> FuseGelu(Graph& g) {
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& mm = g.nodes[i];
    if (mm.domain != kInferdDomain || mm.op_type != "FusedMatMul" || mm.outputs.size() != 1 ||
        mm.outputs[0] < 0 || FindAttribute(mm, "activation") != nullptr) {
      continue;
    }
    std::vector<int> gelu;
    if (!MatchGeluErf(g, mm.outputs[0], gelu)) continue;
    bool free = true;
    for (int n : gelu) free = free && keep[n] && g.nodes[n].device == mm.device;
    if (!free) continue;
    mm.outputs = g.nodes[gelu.back()].outputs;
    onnx::AttributeProto act;
    act.set_name("activation");
    act.set_type(onnx::AttributeProto::STRING);
    act.set_s("Gelu");
    mm.attributes.push_back(std::move(act));
    for (int n : gelu) keep[n] = false;
    ++fused;
  }
  if (fused > 0) g.RemoveNodes(keep);
  return fused;
}

// pass 4: every GELU (erf form) left, whatever writes its input, becomes one com.microsoft Gelu
// named after its Erf: one pass over memory instead of five (an int8 BERT's GELUs, after
// MatMulInteger and its dequantizing Mul and Add, took 30% of its time as five ops).
absl::StatusOr<int> FuseStandaloneGelu(Graph& g, const KernelRegistry& registry) {
  if (!registry.HasOp(kMicrosoftDomain, "Gelu")) return 0;
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;
  for (size_t v = 0; v < g.values.size(); ++v) {
    std::vector<int> gelu;
    if (!MatchGeluErf(g, static_cast<int>(v), gelu)) continue;
    const Node& erf = g.nodes[gelu[1]];
    bool free = true;
    for (int n : gelu) free = free && keep[n] && g.nodes[n].device == erf.device;
    if (!free) continue;
    Node fused = Fused(erf, g.nodes[gelu.back()], "Gelu", kGeluSuffix);
    fused.domain = kMicrosoftDomain;
    fused.opset = 1;
    fused.inputs = {static_cast<int>(v)};
    for (int n : gelu) keep[n] = false;
    replacements.emplace_back(gelu[0], std::move(fused));
  }
  std::sort(replacements.begin(), replacements.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  INFERD_RETURN_IF_ERROR(Replace(g, keep, replacements));
  return static_cast<int>(replacements.size());
}

// Whether `value` is one float32 number: a scalar or [1] (a weight, or a shape inference said).
bool IsScalarFloat(const Graph& g, int value) {
  const Value& v = g.values[value];
  if (v.type != DataType::kFloat32) return false;
  if (v.initializer != nullptr) return v.initializer->NumElements() == 1;
  if (!v.shape.rank_known || v.shape.dims.size() > 1) return false;
  return v.shape.dims.empty() || (v.shape.dims[0].known() && v.shape.dims[0].value == 1);
}

// pass 0: what ONNX Runtime's quantize_dynamic writes for a MatMul,
//   t = MatMulInteger(A, B, a_zp, b_zp); c = Cast(t, float); y = c * (a_scale * b_scale)
//   [+ bias]
// becomes com.microsoft MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp, b_zp[, bias]) named
// "<MatMulInteger>/MatMulIntegerToFloatFusion": the int32 result is scaled (and biased) as it is
// made instead of by three more passes over it. b_scale is the constant factor of the scales'
// Mul (a scalar or one per column), a_scale the other (one number).
absl::StatusOr<int> FuseMatMulIntegerToFloat(Graph& g, const KernelRegistry& registry) {
  if (!registry.HasOp(kMicrosoftDomain, "MatMulIntegerToFloat")) return 0;
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& mm = g.nodes[i];
    if (!IsOnnxOp(mm, "MatMulInteger") || mm.outputs.size() != 1 || mm.inputs.size() < 2) continue;
    const int cast = SoleConsumer(g, mm.outputs[0]);
    if (cast < 0 || !IsOnnxOp(g.nodes[cast], "Cast") ||
        IntAttribute(g.nodes[cast], "to", 0) != static_cast<int64_t>(DataType::kFloat32)) {
      continue;
    }
    const int c = g.nodes[cast].outputs[0];
    const int mul = SoleConsumer(g, c);
    if (mul < 0 || !IsOnnxOp(g.nodes[mul], "Mul")) continue;
    const int s = OtherInput(g.nodes[mul], c);
    if (s < 0 || g.values[s].producer < 0 || SoleConsumer(g, s) != mul) continue;
    const int scales = g.values[s].producer;
    const Node& sm = g.nodes[scales];
    if (!IsOnnxOp(sm, "Mul") || sm.inputs.size() != 2) continue;
    int a_scale = sm.inputs[0], b_scale = sm.inputs[1];
    if (g.values[a_scale].initializer != nullptr && g.values[b_scale].initializer == nullptr) {
      std::swap(a_scale, b_scale);
    }
    // b_scale: one number or one per column of B; a_scale: one number.
    const Value& bv = g.values[mm.inputs[1]];
    const int64_t n = bv.shape.rank_known && !bv.shape.dims.empty() && bv.shape.dims.back().known()
                          ? bv.shape.dims.back().value
                          : -1;
    const bool b_ok =
        IsScalarFloat(g, b_scale) || (n > 0 && FloatWeight(g, b_scale, n) != nullptr &&
                                      g.values[b_scale].initializer->shape().rank() == 1);
    if (!IsScalarFloat(g, a_scale) || !b_ok) continue;
    // An Add of a constant bias [N] after it joins too.
    int last = mul, bias = -1;
    const int add = SoleConsumer(g, g.nodes[mul].outputs[0]);
    if (add >= 0 && IsOnnxOp(g.nodes[add], "Add") && n > 0) {
      const int other = OtherInput(g.nodes[add], g.nodes[mul].outputs[0]);
      if (other >= 0 && FloatWeight(g, other, n) != nullptr &&
          g.values[other].initializer->shape().rank() == 1) {
        bias = other;
        last = add;
      }
    }
    bool free = true;
    for (int node : {static_cast<int>(i), cast, mul, scales, last}) {
      free = free && keep[node] && g.nodes[node].device == mm.device;
    }
    if (!free) continue;
    Node fused = Fused(mm, g.nodes[last], "MatMulIntegerToFloat", kMatMulIntegerToFloatSuffix);
    fused.domain = kMicrosoftDomain;
    fused.opset = 1;
    auto input = [&](size_t k) { return k < mm.inputs.size() ? mm.inputs[k] : -1; };
    fused.inputs = {mm.inputs[0], mm.inputs[1], a_scale, b_scale, input(2), input(3), bias};
    while (fused.inputs.back() < 0) fused.inputs.pop_back();
    for (int node : {static_cast<int>(i), cast, mul, scales, last}) keep[node] = false;
    replacements.emplace_back(i, std::move(fused));
  }
  INFERD_RETURN_IF_ERROR(Replace(g, keep, replacements));
  return static_cast<int>(replacements.size());
}

}  // namespace

absl::StatusOr<int> ApplyFusions(Graph& g, const KernelRegistry& registry,
                                 DerivedWeights& derived) {
  ForwardConstantIdentities(g);
  INFERD_ASSIGN_OR_RETURN(const int qdq, FuseQdq(g, registry));
  INFERD_ASSIGN_OR_RETURN(const int to_float, FuseMatMulIntegerToFloat(g, registry));
  INFERD_ASSIGN_OR_RETURN(const int pairs, FusePairs(g, registry, derived));
  INFERD_ASSIGN_OR_RETURN(const int gelu, FuseGelu(g));
  INFERD_ASSIGN_OR_RETURN(const int standalone_gelu, FuseStandaloneGelu(g, registry));
  return qdq + to_float + pairs + gelu + standalone_gelu;
}

}  // namespace inferd::engine

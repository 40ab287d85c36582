#include "engine/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/rewrite_util.h"
#include "engine/rewrites.h"

namespace inferd::engine {
namespace {

using rewrite::FindAttribute;
using rewrite::FloatAttribute;
using rewrite::IntAttribute;
using rewrite::IsOnnxOp;
using rewrite::Replace;
using rewrite::SoleConsumer;

// The node producing `value` if it is an ONNX `op` on `device`, else -1.
int ProducerOp(const Graph& g, int value, absl::string_view op, const std::string& device) {
  if (value < 0) return -1;
  const int p = g.values[value].producer;
  if (p < 0 || !IsOnnxOp(g.nodes[p], op) || g.nodes[p].device != device) return -1;
  return p;
}

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// Input `i` of `n` as a constant (initializer), or nullptr (absent or not constant).
const Tensor* ConstantInput(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  return g.values[n.inputs[i]].initializer;
}

bool Present(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] >= 0; }

// A Quantize/DequantizeLinear whose scale and zero point (when present) are constants of
// `params` elements (1: per tensor), float32 scale, 8-bit data, no blocking.
bool QdqParamsOk(const Graph& g, const Node& n, int64_t params) {
  if (n.inputs.size() < 2 || IntAttribute(n, "block_size", 0) != 0) return false;
  const Tensor* scale = ConstantInput(g, n, 1);
  if (scale == nullptr || scale->dtype() != DataType::kFloat32) return false;
  if (scale->NumElements() != params || scale->shape().rank() > 1) return false;
  if (Present(n, 2)) {
    const Tensor* zp = ConstantInput(g, n, 2);
    if (zp == nullptr || !Is8Bit(zp->dtype()) || zp->NumElements() != params) return false;
    if (zp->shape().rank() > 1) return false;
  }
  return true;
}

// Whether two per-tensor Quantize/DequantizeLinear nodes have equal scales and zero points.
bool SameQuantParams(const Graph& g, const Node& a, const Node& b) {
  const float sa = ConstantInput(g, a, 1)->data<float>()[0];
  const float sb = ConstantInput(g, b, 1)->data<float>()[0];
  if (sa != sb) return false;
  const Tensor* za = ConstantInput(g, a, 2);
  const Tensor* zb = ConstantInput(g, b, 2);
  auto zp = [](const Tensor* z) -> int32_t {
    if (z == nullptr) return 0;
    return z->dtype() == DataType::kInt8 ? z->data<int8_t>()[0] : z->data<uint8_t>()[0];
  };
  return zp(za) == zp(zb);
}

// The sole reader of `op`'s output when it is a per-tensor 8-bit QuantizeLinear of `type`.
int QuantizeAfter(const Graph& g, const Node& op, DataType type) {
  if (op.outputs.size() != 1 || op.outputs[0] < 0) return -1;
  const int q = SoleConsumer(g, op.outputs[0]);
  if (q < 0 || !IsOnnxOp(g.nodes[q], "QuantizeLinear") || g.nodes[q].device != op.device) {
    return -1;
  }
  const Node& qn = g.nodes[q];
  if (qn.outputs.size() != 1 || FindAttribute(qn, "output_dtype") != nullptr ||
      !QdqParamsOk(g, qn, 1) || g.values[qn.outputs[0]].type != type) {
    return -1;
  }
  return q;
}

// A per-tensor DequantizeLinear of an 8-bit `value`'s producer, else -1.
int PerTensorDq(const Graph& g, int value, const std::string& device) {
  const int dq = ProducerOp(g, value, "DequantizeLinear", device);
  if (dq < 0 || !QdqParamsOk(g, g.nodes[dq], 1)) return -1;
  return Is8Bit(g.values[g.nodes[dq].inputs[0]].type) ? dq : -1;
}

// The per-channel axis of a DequantizeLinear of a rank-`rank` tensor, normalized.
int64_t DqAxis(const Node& dq, size_t rank) {
  int64_t axis = IntAttribute(dq, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return axis;
}

// Where a QDQ group around MatMul / Conv / Gemm is; -1 where absent.
struct QdqGroup {
  int dq_x = -1, dq_w = -1, dq_bias = -1, q = -1;
  int float_bias = -1;  // Gemm: a float32 constant bias [N], added after a float-output QGemm
};

// The fused Add of a Gemm's float bias: "<gemm>/QdqFusionBias".
constexpr char kQdqBiasSuffix[] = "/QdqFusionBias";

// Matches DQ(x) and DQ(constant W) [and DQ(constant int32 bias)] into node `i` (MatMul, Conv or
// Gemm), optionally followed by QuantizeLinear; false where the group cannot be one int8 node.
bool MatchQdq(const Graph& g, int i, QdqGroup* m) {
  const Node& op = g.nodes[i];
  const bool conv = IsOnnxOp(op, "Conv");
  const bool gemm = IsOnnxOp(op, "Gemm");
  if (op.inputs.size() < 2 || op.outputs.size() != 1 || op.outputs[0] < 0) return false;
  // Gemm: alpha and beta 1 (QGemm's int32 C has no beta; its scale must be x_scale * w_scale).
  if (gemm &&
      (FloatAttribute(op, "alpha", 1.0f) != 1.0f || FloatAttribute(op, "beta", 1.0f) != 1.0f)) {
    return false;
  }
  const bool trans_b = gemm && IntAttribute(op, "transB", 0) != 0;
  m->dq_x = ProducerOp(g, op.inputs[0], "DequantizeLinear", op.device);
  m->dq_w = ProducerOp(g, op.inputs[1], "DequantizeLinear", op.device);
  if (m->dq_x < 0 || m->dq_w < 0 || m->dq_x == m->dq_w) return false;
  const Node& dx = g.nodes[m->dq_x];
  const Node& dw = g.nodes[m->dq_w];
  // x: per tensor, 8-bit.
  if (!QdqParamsOk(g, dx, 1) || !Is8Bit(g.values[dx.inputs[0]].type)) return false;
  // W: a constant, per tensor or per output channel (MatMul: axis 1 of [K, N]; Conv: axis 0;
  // Gemm: axis 1 of [K, N], axis 0 of [N, K] with transB).
  const Tensor* w = ConstantInput(g, dw, 0);
  if (w == nullptr || !Is8Bit(w->dtype())) return false;
  const size_t rank = w->shape().rank();
  if (conv ? rank < 3 : rank != 2) return false;
  const int64_t channel_axis = conv || trans_b ? 0 : 1;
  const int64_t channels = w->shape()[channel_axis];
  if (conv) {
    // Grouped and depthwise convolutions too: QLinearConv runs them on oneDNN's int8
    // convolution (kernels/cpu/int8_conv_primitive.h). Not where an output has fewer than 8
    // products (a 1x1 over fewer than 8 channels a group), which the float Conv does as fast.
    const int64_t group = IntAttribute(op, "group", 1);
    if (group < 1 || channels % group != 0) return false;
    if (w->NumElements() / channels < 8) return false;
  }
  const Tensor* ws = ConstantInput(g, dw, 1);
  if (ws == nullptr) return false;
  if (ws->NumElements() != 1) {
    if (DqAxis(dw, rank) != channel_axis || !QdqParamsOk(g, dw, channels)) return false;
  } else if (!QdqParamsOk(g, dw, 1)) {
    return false;
  }
  // Conv's / Gemm's bias: DequantizeLinear of a constant int32 [M] with scale x_scale * w_scale.
  // A Gemm's may also be a float32 constant [N] (quantize_static leaves the bias of a last,
  // float-output Gemm so): then the QGemm's float output plus that bias, the QuantizeLinear after
  // it (if any) left as it is.
  if (gemm && Present(op, 2) && ProducerOp(g, op.inputs[2], "DequantizeLinear", op.device) < 0) {
    const Tensor* b = g.values[op.inputs[2]].initializer;
    if (b == nullptr || b->dtype() != DataType::kFloat32 || b->NumElements() != channels ||
        b->shape().rank() != 1) {
      return false;
    }
    m->float_bias = op.inputs[2];
    return true;
  }
  if ((conv || gemm) && Present(op, 2)) {
    m->dq_bias = ProducerOp(g, op.inputs[2], "DequantizeLinear", op.device);
    if (m->dq_bias < 0) return false;
    const Node& db = g.nodes[m->dq_bias];
    const Tensor* b = ConstantInput(g, db, 0);
    const Tensor* bs = ConstantInput(g, db, 1);
    if (b == nullptr || b->dtype() != DataType::kInt32 || b->NumElements() != channels ||
        b->shape().rank() != 1 || bs == nullptr || bs->dtype() != DataType::kFloat32) {
      return false;
    }
    if (Present(db, 2)) {  // a zero point, if any, is int32 zeros
      const Tensor* bz = ConstantInput(g, db, 2);
      if (bz == nullptr || bz->dtype() != DataType::kInt32) return false;
      for (int64_t e = 0; e < bz->NumElements(); ++e) {
        if (bz->data<int32_t>()[e] != 0) return false;
      }
    }
    const float xs = ConstantInput(g, dx, 1)->data<float>()[0];
    for (int64_t c = 0; c < channels; ++c) {
      const float want = xs * ws->data<float>()[ws->NumElements() == 1 ? 0 : c];
      const float got = bs->data<float>()[bs->NumElements() == 1 ? 0 : c];
      if (bs->NumElements() != 1 && bs->NumElements() != channels) return false;
      if (std::fabs(got - want) > 1e-6f * std::fabs(want)) return false;
    }
  }
  // The QuantizeLinear after it, if it is the output's only reader.
  const int next = SoleConsumer(g, op.outputs[0]);
  if (next >= 0 && IsOnnxOp(g.nodes[next], "QuantizeLinear") && g.nodes[next].device == op.device &&
      g.nodes[next].outputs.size() == 1 &&
      FindAttribute(g.nodes[next], "output_dtype") == nullptr && QdqParamsOk(g, g.nodes[next], 1) &&
      Is8Bit(g.values[g.nodes[next].outputs[0]].type)) {
    m->q = next;
  }
  return m->q >= 0 || !conv;  // a float-output Conv has no int8 node to become
}

// pass 1: MatMul / Conv / Gemm with a constant W.
absl::StatusOr<int> FuseQdqWithWeights(Graph& g, const KernelRegistry& registry) {
  const bool qmatmul = registry.HasOp(kOnnxDomain, "QLinearMatMul");
  const bool qconv = registry.HasOp(kOnnxDomain, "QLinearConv");
  const bool to_float = registry.HasOp(kMicrosoftDomain, "MatMulIntegerToFloat");
  const bool qgemm = registry.HasOp(kMicrosoftDomain, "QGemm");
  if (!qmatmul && !qconv && !to_float && !qgemm) return 0;
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;
  int fused = 0;  // groups (a float-bias Gemm makes two nodes)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& op = g.nodes[i];
    const bool conv = IsOnnxOp(op, "Conv");
    const bool gemm = IsOnnxOp(op, "Gemm");
    if (!keep[i] || (!conv && !gemm && !IsOnnxOp(op, "MatMul"))) continue;
    QdqGroup m;
    if (!MatchQdq(g, static_cast<int>(i), &m)) continue;
    const bool requant = m.q >= 0;
    if (gemm ? !qgemm : conv ? !qconv : (requant ? !qmatmul : !to_float)) continue;
    const int dqs[] = {m.dq_x, m.dq_w, m.dq_bias, m.q};
    bool free = true;
    for (int d : dqs) free = free && (d < 0 || keep[d]);
    if (!free) continue;
    const Node& dx = g.nodes[m.dq_x];
    const Node& dw = g.nodes[m.dq_w];
    auto input = [](const Node& n, size_t k) { return k < n.inputs.size() ? n.inputs[k] : -1; };
    Node f;
    f.name = FusedNodeName(op.name, kQdqSuffix);
    f.metadata = op.metadata;
    f.device = op.device;
    if (gemm && m.float_bias >= 0) {
      // QGemm with a float Y into a new value, then Add(that, bias) writes the Gemm's output.
      // The QGemm takes the slot of W's DequantizeLinear, which must go with the group.
      if (SoleConsumer(g, g.nodes[m.dq_w].outputs[0]) != static_cast<int>(i)) continue;
      Value v;
      v.name = FusedNodeName(g.values[op.outputs[0]].name, kQdqSuffix);
      while (g.FindValue(v.name) >= 0) v.name += "_";
      v.type = DataType::kFloat32;
      v.shape = g.values[op.outputs[0]].shape;
      const int product = g.AddValue(std::move(v));
      f.op_type = "QGemm";
      f.domain = kMicrosoftDomain;
      f.opset = 1;
      f.inputs = {input(dx, 0), input(dx, 1), input(dx, 2),
                  input(dw, 0), input(dw, 1), input(dw, 2)};
      for (const onnx::AttributeProto& a : op.attributes) {
        if (a.name() == "transA" || a.name() == "transB") f.attributes.push_back(a);
      }
      f.outputs = {product};
      Node add;
      add.name = FusedNodeName(op.name, kQdqBiasSuffix);
      add.metadata = op.metadata;
      add.device = op.device;
      add.op_type = "Add";
      add.domain = kOnnxDomain;
      add.opset = op.opset;
      add.inputs = {product, m.float_bias};
      add.outputs = op.outputs;
      // Two nodes: the QGemm at W's DequantizeLinear's slot (Replace sorts the graph).
      replacements.emplace_back(static_cast<size_t>(m.dq_w), std::move(f));
      replacements.emplace_back(i, std::move(add));
      ++fused;
      keep[i] = false;
      for (int d : {m.dq_x, m.dq_w}) {
        if (SoleConsumer(g, g.nodes[d].outputs[0]) == static_cast<int>(i)) keep[d] = false;
      }
      continue;
    }
    if (gemm) {
      // com.microsoft QGemm: the int32 bias as C; y_scale / y_zero_point only with the
      // QuantizeLinear (else a float Y). transA / transB carry over (alpha and beta are 1).
      f.op_type = "QGemm";
      f.domain = kMicrosoftDomain;
      f.opset = 1;
      f.inputs = {input(dx, 0),
                  input(dx, 1),
                  input(dx, 2),
                  input(dw, 0),
                  input(dw, 1),
                  input(dw, 2),
                  m.dq_bias >= 0 ? g.nodes[m.dq_bias].inputs[0] : -1};
      for (const onnx::AttributeProto& a : op.attributes) {
        if (a.name() == "transA" || a.name() == "transB") f.attributes.push_back(a);
      }
      if (requant) {
        const Node& q = g.nodes[m.q];
        f.inputs.push_back(input(q, 1));
        f.inputs.push_back(input(q, 2));
        f.outputs = q.outputs;
      } else {
        if (m.dq_bias < 0) f.inputs.pop_back();
        f.outputs = op.outputs;
      }
    } else if (requant) {
      const Node& q = g.nodes[m.q];
      f.op_type = conv ? "QLinearConv" : "QLinearMatMul";
      f.domain = kOnnxDomain;
      f.opset = op.opset;
      f.inputs = {input(dx, 0), input(dx, 1), input(dx, 2), input(dw, 0),
                  input(dw, 1), input(dw, 2), input(q, 1),  input(q, 2)};
      if (conv && m.dq_bias >= 0) f.inputs.push_back(g.nodes[m.dq_bias].inputs[0]);
      if (conv) f.attributes = op.attributes;
      f.outputs = q.outputs;
    } else {
      f.op_type = "MatMulIntegerToFloat";
      f.domain = kMicrosoftDomain;
      f.opset = 1;
      f.inputs = {input(dx, 0), input(dw, 0), input(dx, 1),
                  input(dw, 1), input(dx, 2), input(dw, 2)};
      f.outputs = op.outputs;
    }
    replacements.emplace_back(i, std::move(f));
    ++fused;
    keep[i] = false;
    if (requant) keep[m.q] = false;
    // A DequantizeLinear read only by this group goes with it.
    for (int d : {m.dq_x, m.dq_w, m.dq_bias}) {
      if (d >= 0 && SoleConsumer(g, g.nodes[d].outputs[0]) == static_cast<int>(i)) keep[d] = false;
    }
  }
  // Replace walks the positions in order (a float-bias Gemm put its QGemm at an earlier one).
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  INFERD_RETURN_IF_ERROR(Replace(g, keep, replacements));
  return fused;
}

// pass 2: the QDQ groups around elementwise and pooling ops (after pass 1, so that a
// DequantizeLinear shared with a Conv stays where the Conv did not take it):
//   DQ(a), DQ(b) -> Add -> Q  becomes com.microsoft QLinearAdd (a, b and y one 8-bit type);
//   DQ(x) -> MaxPool -> Q     becomes MaxPool(x) where Q's scale and zero point are DQ's (max
//                             commutes with a monotonic map, so the result is exact).
absl::StatusOr<int> FuseQdqElementwise(Graph& g, const KernelRegistry& registry) {
  const bool qadd = registry.HasOp(kMicrosoftDomain, "QLinearAdd");
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;
  int fused = 0;
  auto drop_dq = [&](int dq, int reader) {
    if (SoleConsumer(g, g.nodes[dq].outputs[0]) == reader) keep[dq] = false;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& op = g.nodes[i];
    const bool add = IsOnnxOp(op, "Add") && qadd;
    const bool max_pool = IsOnnxOp(op, "MaxPool") && op.opset >= 12;
    if (!add && !max_pool) continue;
    if (op.inputs.size() != (add ? 2u : 1u) || op.outputs.size() != 1) continue;
    const int me = static_cast<int>(i);
    Node f;
    f.metadata = op.metadata;
    f.device = op.device;
    if (add) {
      const int da = PerTensorDq(g, op.inputs[0], op.device);
      const int db = PerTensorDq(g, op.inputs[1], op.device);
      if (da < 0 || db < 0 || !keep[da] || !keep[db]) continue;
      const DataType type = g.values[g.nodes[da].inputs[0]].type;
      if (g.values[g.nodes[db].inputs[0]].type != type) continue;
      const int q = QuantizeAfter(g, op, type);
      if (q < 0 || !keep[q]) continue;
      auto input = [&](int n, size_t k) {
        return k < g.nodes[n].inputs.size() ? g.nodes[n].inputs[k] : -1;
      };
      f.name = FusedNodeName(op.name, kQdqSuffix);
      f.op_type = "QLinearAdd";
      f.domain = kMicrosoftDomain;
      f.opset = 1;
      f.inputs = {input(da, 0), input(da, 1), input(da, 2), input(db, 0),
                  input(db, 1), input(db, 2), input(q, 1),  input(q, 2)};
      f.outputs = g.nodes[q].outputs;
      keep[q] = false;
      drop_dq(da, me);
      if (db != da) drop_dq(db, me);
    } else {
      const int dq = PerTensorDq(g, op.inputs[0], op.device);
      if (dq < 0 || !keep[dq] || SoleConsumer(g, op.inputs[0]) != me) continue;
      const int q = QuantizeAfter(g, op, g.values[g.nodes[dq].inputs[0]].type);
      if (q < 0 || !keep[q] || !SameQuantParams(g, g.nodes[dq], g.nodes[q])) continue;
      f.name = op.name;  // the same op, on the 8-bit tensor
      f.op_type = op.op_type;
      f.domain = op.domain;
      f.opset = op.opset;
      f.attributes = op.attributes;
      f.inputs = {g.nodes[dq].inputs[0]};
      f.outputs = g.nodes[q].outputs;
      keep[q] = false;
      keep[dq] = false;
    }
    replacements.emplace_back(i, std::move(f));
    keep[i] = false;
    ++fused;
  }
  INFERD_RETURN_IF_ERROR(Replace(g, keep, replacements));
  return fused;
}

// pass 3: the DequantizeLinear nodes that several fused groups read (a residual block's input,
// read by its first Conv and by its shortcut Conv or Add) outlive them all, read by no one.
absl::Status RemoveUnreadDequantize(Graph& g) {
  g.RebuildEdges();
  std::vector<Node> nodes;
  for (Node& n : g.nodes) {
    const bool unread = IsOnnxOp(n, "DequantizeLinear") && n.outputs.size() == 1 &&
                        n.outputs[0] >= 0 && g.values[n.outputs[0]].consumers.empty() &&
                        !g.values[n.outputs[0]].is_graph_output;
    if (!unread) nodes.push_back(std::move(n));
  }
  if (nodes.size() == g.nodes.size()) {
    g.nodes = std::move(nodes);
    return absl::OkStatus();
  }
  g.nodes = std::move(nodes);
  g.RebuildEdges();
  return g.Validate();
}

}  // namespace

absl::StatusOr<int> FuseQdq(Graph& g, const KernelRegistry& registry) {
  INFERD_ASSIGN_OR_RETURN(const int around_weights, FuseQdqWithWeights(g, registry));
  INFERD_ASSIGN_OR_RETURN(const int elementwise, FuseQdqElementwise(g, registry));
  INFERD_RETURN_IF_ERROR(RemoveUnreadDequantize(g));
  return around_weights + elementwise;
}

}  // namespace inferd::engine

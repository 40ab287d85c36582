#include "engine/int8_channels_last.h"

#include <vector>

#include "base/device_name.h"
#include "engine/domain.h"
#include "engine/rewrite_util.h"

namespace inferd::engine {
namespace {

using rewrite::IsOnnxOp;
using rewrite::SameShape;
using rewrite::SetIntAttribute;

bool OnCpu(const Node& n) { return DeviceIndex(n.device, "cpu") >= 0; }

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

bool IsQLinearConv(const Node& n) {
  return IsOnnxOp(n, "QLinearConv") || (n.domain == kInferdDomain && n.op_type == "QLinearConv");
}

// Input `i` of `n` as a constant, or nullptr (absent or computed).
const Tensor* Constant(const Graph& g, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  return g.values[n.inputs[i]].initializer;
}

bool Absent(const Node& n, size_t i) { return i >= n.inputs.size() || n.inputs[i] < 0; }

// A constant float32 scale of 1 (or `channels`) elements.
bool ConstantScale(const Graph& g, const Node& n, size_t i, int64_t channels) {
  const Tensor* t = Constant(g, n, i);
  return t != nullptr && t->dtype() == DataType::kFloat32 &&
         (t->NumElements() == 1 || t->NumElements() == channels);
}

// A zero point: absent, or a constant 8-bit scalar (all zeros where `zero`).
bool ConstantZeroPoint(const Graph& g, const Node& n, size_t i, bool zero) {
  if (Absent(n, i)) return true;
  const Tensor* t = Constant(g, n, i);
  if (t == nullptr || !Is8Bit(t->dtype())) return false;
  if (!zero) return t->NumElements() == 1;
  for (int64_t e = 0; e < t->NumElements(); ++e) {
    const int v = t->dtype() == DataType::kInt8 ? t->data<int8_t>()[e] : t->data<uint8_t>()[e];
    if (v != 0) return false;
  }
  return true;
}

// A 2-D QLinearConv on a CPU that the kernel requantizes by oneDNN (integer_conv.cc's direct,
// fused path): inputs x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B].
bool ChannelsLastConv(const Graph& g, const Node& n) {
  if (!IsQLinearConv(n) || !OnCpu(n) || n.inputs.size() < 8 || n.inputs[0] < 0 ||
      n.outputs.empty() || n.outputs[0] < 0) {
    return false;
  }
  const Value& x = g.values[n.inputs[0]];
  const Tensor* w = Constant(g, n, 3);
  if (!x.shape.rank_known || x.shape.dims.size() != 4 || w == nullptr ||
      w->dtype() != DataType::kInt8 || w->shape().rank() != 4) {
    return false;
  }
  const int64_t m = w->shape()[0];
  return ConstantScale(g, n, 1, 1) && ConstantScale(g, n, 4, m) && ConstantScale(g, n, 6, 1) &&
         ConstantZeroPoint(g, n, 2, false) && ConstantZeroPoint(g, n, 5, true) &&
         ConstantZeroPoint(g, n, 7, false);
}

// A com.microsoft QLinearAdd of two same-shape activations: A, B and C (which must share one
// layout) in `acts`.
bool ElementwiseAdd(const Graph& g, const Node& n, std::vector<int>& acts) {
  if (n.domain != kMicrosoftDomain || n.op_type != "QLinearAdd" || !OnCpu(n) ||
      n.inputs.size() < 7 || n.inputs[0] < 0 || n.inputs[3] < 0 || n.outputs.size() != 1 ||
      n.outputs[0] < 0) {
    return false;
  }
  const int a = n.inputs[0], b = n.inputs[3], c = n.outputs[0];
  if (!SameShape(g.values[a].shape, g.values[b].shape) ||
      !SameShape(g.values[a].shape, g.values[c].shape)) {
    return false;
  }
  acts = {a, b, c};
  return true;
}

// A 2-D MaxPool of an 8-bit tensor without its Indices output (pool.cc's own loops pool
// channels-last to channels-last): its input and output in `acts`.
bool ChannelsLastPool(const Graph& g, const Node& n, std::vector<int>& acts) {
  if (!IsOnnxOp(n, "MaxPool") || !OnCpu(n) || n.inputs.empty() || n.inputs[0] < 0 ||
      n.outputs.empty() || n.outputs[0] < 0 || (n.outputs.size() > 1 && n.outputs[1] >= 0)) {
    return false;
  }
  const Value& x = g.values[n.inputs[0]];
  if (!Is8Bit(x.type) || !x.shape.rank_known || x.shape.dims.size() != 4) return false;
  acts = {n.inputs[0], n.outputs[0]};
  return true;
}

// The activations of `n` that must share one layout (a same-shape QLinearAdd's, a MaxPool's).
bool SharedLayout(const Graph& g, const Node& n, std::vector<int>& acts) {
  return ElementwiseAdd(g, n, acts) || ChannelsLastPool(g, n, acts);
}

bool AllIn(const std::vector<int>& acts, const std::vector<bool>& last) {
  for (int a : acts) {
    if (!last[a]) return false;
  }
  return true;
}

// Whether node `reader` reads channels-last value `v` (at input `slot`) as it is.
bool ReaderAccepts(const Graph& g, int reader, int slot, const std::vector<bool>& last) {
  const Node& n = g.nodes[reader];
  if (ChannelsLastConv(g, n)) return slot == 0;
  std::vector<int> acts;
  return SharedLayout(g, n, acts) && AllIn(acts, last);
}

// Whether value `v`'s producer writes it channels-last.
bool ProducerAccepts(const Graph& g, int v, const std::vector<bool>& last) {
  const Value& value = g.values[v];
  const Node& n = g.nodes[value.producer];
  if (ChannelsLastConv(g, n)) return value.producer_slot == 0;
  std::vector<int> acts;
  return SharedLayout(g, n, acts) && AllIn(acts, last);
}

}  // namespace

int AssignInt8ChannelsLast(Graph& g, const KernelRegistry& registry) {
  if (!registry.HasOp(kInferdDomain, "QLinearConv")) return 0;
  g.RebuildEdges();
  const std::vector<bool> implicit = rewrite::ImplicitlyRead(g);
  // pass 1: the candidates, each on its own.
  std::vector<bool> last(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& value = g.values[v];
    last[v] = value.kind == ValueKind::kTensor && Is8Bit(value.type) && value.producer >= 0 &&
              !value.is_graph_input && !value.is_graph_output && !value.outer_scope &&
              value.initializer == nullptr && !implicit[v] && value.shape.rank_known &&
              value.shape.dims.size() == 4 && !value.consumers.empty();
  }
  // pass 2: drop candidates until every producer and reader accepts the rest.
  rewrite::NarrowToFixedPoint(
      g, last, [&](int v) { return ProducerAccepts(g, v, last); },
      [&](int reader, int slot) { return ReaderAccepts(g, reader, slot, last); });
  // pass 3: the convolutions at either end of a channels-last value say so.
  int count = 0;
  for (bool b : last) count += b ? 1 : 0;
  if (count == 0) return 0;
  std::vector<int> acts;
  for (Node& n : g.nodes) {
    if (ChannelsLastPool(g, n, acts) && last[acts[0]]) SetIntAttribute(n, kChannelsLastAttr, 1);
    if (!IsQLinearConv(n)) continue;
    const bool in = n.inputs[0] >= 0 && last[n.inputs[0]];
    const bool out = !n.outputs.empty() && n.outputs[0] >= 0 && last[n.outputs[0]];
    if (!in && !out) continue;
    n.domain = kInferdDomain;
    n.opset = 1;
    SetIntAttribute(n, kChannelsLastInputAttr, in ? 1 : 0);
    SetIntAttribute(n, kChannelsLastOutputAttr, out ? 1 : 0);
  }
  return count;
}

}  // namespace inferd::engine

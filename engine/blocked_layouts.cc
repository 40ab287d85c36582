#include "engine/blocked_layouts.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/device_name.h"
#include "engine/domain.h"
#include "engine/rewrite_util.h"

namespace inferd::engine {
namespace {

using rewrite::FindAttribute;
using rewrite::IntAttribute;
using rewrite::IsOnnxOp;
using rewrite::SameShape;
using rewrite::SetIntAttribute;

bool OnCpu(const Node& n) { return DeviceIndex(n.device, "cpu") >= 0; }

bool IsConv(const Node& n) {
  return IsOnnxOp(n, "Conv") || (n.domain == kInferdDomain && n.op_type == "FusedConv");
}

bool IsUnaryElementwise(const Node& n) {
  static constexpr absl::string_view kOps[] = {"Relu",        "Clip",      "LeakyRelu",
                                               "Elu",         "Sigmoid",   "Tanh",
                                               "HardSigmoid", "HardSwish", "Softplus"};
  for (absl::string_view op : kOps) {
    if (IsOnnxOp(n, op)) return true;
  }
  return false;
}

bool IsBinaryElementwise(const Node& n) {
  return IsOnnxOp(n, "Add") || IsOnnxOp(n, "Sub") || IsOnnxOp(n, "Mul") || IsOnnxOp(n, "Div");
}

// A weight of at most one element (a scalar operand or a Clip bound).
bool IsScalarWeight(const Graph& g, int v) {
  return v >= 0 && g.values[v].initializer != nullptr &&
         g.values[v].initializer->NumElements() <= 1;
}

// The value's channel count when its shape says it (rank 3-5), else -1.
int64_t Channels(const Value& v) {
  if (!v.shape.rank_known || v.shape.dims.size() < 3 || v.shape.dims.size() > 5) return -1;
  return v.shape.dims[1].value;
}

// A value that may be blocked as far as it alone is concerned (pass 1).
bool Eligible(const Graph& g, int v, const std::vector<bool>& implicit) {
  const Value& value = g.values[v];
  const int64_t c = Channels(value);
  return value.kind == ValueKind::kTensor && value.type == DataType::kFloat32 &&
         value.producer >= 0 && !value.is_graph_input && !value.is_graph_output &&
         !value.outer_scope && value.initializer == nullptr && !implicit[v] && c > 0 &&
         c % kLayoutChannelBlock == 0;
}

// The integers of an int64 or int32 weight, or false.
bool ConstantInts(const Graph& g, int v, std::vector<int64_t>& out) {
  out.clear();
  if (v < 0 || g.values[v].initializer == nullptr) return false;
  const Tensor& t = *g.values[v].initializer;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (t.dtype() == DataType::kInt64) {
      out.push_back(t.data<int64_t>()[i]);
    } else if (t.dtype() == DataType::kInt32) {
      out.push_back(t.data<int32_t>()[i]);
    } else {
      return false;
    }
  }
  return true;
}

// Slice (opset 10+) of whole channel blocks along the channel axis only, with constant starts,
// ends, axes and unit steps: per image, the kept channels are one contiguous run of elements in
// the blocked layout as in the plain one, at the same offset.
bool IsChannelBlockSlice(const Graph& g, const Node& n) {
  if (!IsOnnxOp(n, "Slice") || n.opset < 10 || n.inputs.size() < 4 || n.inputs[0] < 0) {
    return false;
  }
  const Value& x = g.values[n.inputs[0]];
  const int64_t c = Channels(x);
  if (c <= 0) return false;
  const int64_t rank = static_cast<int64_t>(x.shape.dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (!ConstantInts(g, n.inputs[1], starts) || !ConstantInts(g, n.inputs[2], ends) ||
      !ConstantInts(g, n.inputs[3], axes) || starts.size() != 1 || ends.size() != 1 ||
      axes.size() != 1 || (axes[0] != 1 && axes[0] != 1 - rank)) {
    return false;
  }
  if (n.inputs.size() > 4 && n.inputs[4] >= 0 &&
      (!ConstantInts(g, n.inputs[4], steps) || steps.size() != 1 || steps[0] != 1)) {
    return false;
  }
  auto clamp = [c](int64_t i) { return std::max<int64_t>(0, std::min(c, i < 0 ? i + c : i)); };
  const int64_t begin = clamp(starts[0]), end = clamp(ends[0]);
  return begin < end && begin % kLayoutChannelBlock == 0 && end % kLayoutChannelBlock == 0;
}

// For a layout-transparent node, its activation inputs and outputs (which must share one
// layout) in `acts`; false when the node is not transparent as used here.
bool TransparentActivations(const Graph& g, const Node& n, std::vector<int>& acts) {
  acts.clear();
  if (!OnCpu(n) || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  if (IsUnaryElementwise(n)) {
    if (n.inputs.empty() || n.inputs[0] < 0) return false;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (n.inputs[i] >= 0 && !IsScalarWeight(g, n.inputs[i])) return false;
    }
    acts = {n.inputs[0], n.outputs[0]};
    return true;
  }
  if (IsBinaryElementwise(n)) {
    if (n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
    const int a = n.inputs[0], b = n.inputs[1];
    if (IsScalarWeight(g, a) || IsScalarWeight(g, b)) {
      acts = {IsScalarWeight(g, a) ? b : a, n.outputs[0]};
    } else if (SameShape(g.values[a].shape, g.values[b].shape) &&
               SameShape(g.values[a].shape, g.values[n.outputs[0]].shape)) {
      acts = {a, b, n.outputs[0]};
    } else {
      return false;
    }
    return true;
  }
  if (IsChannelBlockSlice(g, n)) {
    acts = {n.inputs[0], n.outputs[0]};
    return true;
  }
  if (IsOnnxOp(n, "Concat")) {
    const Value& out = g.values[n.outputs[0]];
    if (!out.shape.rank_known) return false;
    const int64_t rank = static_cast<int64_t>(out.shape.dims.size());
    const int64_t axis = IntAttribute(n, "axis", 0);
    if (axis != 1 && axis != 1 - rank) return false;
    for (int in : n.inputs) {
      if (in < 0) return false;
      acts.push_back(in);
    }
    acts.push_back(n.outputs[0]);
    return true;
  }
  return false;
}

// A 2-D float MaxPool without its Indices output: it pools a blocked input into a blocked
// output (the CPU kernel's own loops), so its input and output share one layout.
bool IsBlockablePool(const Graph& g, const Node& n) {
  if (!IsOnnxOp(n, "MaxPool") || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() ||
      n.outputs[0] < 0 || (n.outputs.size() > 1 && n.outputs[1] >= 0)) {
    return false;
  }
  const Value& x = g.values[n.inputs[0]];
  return x.type == DataType::kFloat32 && x.shape.rank_known && x.shape.dims.size() == 4;
}

// GlobalAveragePool / GlobalMaxPool: read a blocked input, write their [N, C, 1...] output
// plainly (the same bytes).
bool IsGlobalPool(const Node& n) {
  return IsOnnxOp(n, "GlobalAveragePool") || IsOnnxOp(n, "GlobalMaxPool");
}

// The activations of `n` that must share one layout: a transparent op's, or a blockable
// MaxPool's input and output.
bool SharedLayoutActivations(const Graph& g, const Node& n, std::vector<int>& acts) {
  if (OnCpu(n) && IsBlockablePool(g, n)) {
    acts = {n.inputs[0], n.outputs[0]};
    return true;
  }
  return TransparentActivations(g, n, acts);
}

// Whether node `reader` reads blocked value `v` (at input `slot`) as it is.
bool ReaderAccepts(const Graph& g, int reader, int slot, const std::vector<bool>& blocked) {
  const Node& n = g.nodes[reader];
  if (!OnCpu(n)) return false;
  if (IsConv(n)) return slot == 0 && (n.inputs.size() < 2 || n.inputs[1] != n.inputs[0]);
  if (IsGlobalPool(n)) return slot == 0 && g.values[n.inputs[0]].type == DataType::kFloat32;
  std::vector<int> acts;
  if (!SharedLayoutActivations(g, n, acts)) return false;
  for (int a : acts) {
    if (!blocked[a]) return false;
  }
  return true;
}

// Whether value `v`'s producer writes it blocked.
bool ProducerAccepts(const Graph& g, int v, const std::vector<bool>& blocked) {
  const Value& value = g.values[v];
  const Node& n = g.nodes[value.producer];
  if (!OnCpu(n)) return false;
  if (IsConv(n)) {
    // A convolution of no input channels writes its bias plainly: its input's channels must be
    // known and positive.
    return value.producer_slot == 0 && !n.inputs.empty() && n.inputs[0] >= 0 &&
           Channels(g.values[n.inputs[0]]) > 0;
  }
  std::vector<int> acts;
  if (!SharedLayoutActivations(g, n, acts)) return false;
  for (int a : acts) {
    if (!blocked[a]) return false;
  }
  return true;
}

}  // namespace

int AssignBlockedLayouts(Graph& g, const KernelRegistry& registry) {
  if (!registry.HasOp(kInferdDomain, "FusedConv")) return 0;
  g.RebuildEdges();
  // Values read inside a subgraph stay plain.
  const std::vector<bool> implicit = rewrite::ImplicitlyRead(g);
  // pass 1: the candidates, each on its own.
  std::vector<bool> blocked(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    blocked[v] = Eligible(g, static_cast<int>(v), implicit);
  }
  // pass 2: drop candidates until every producer and reader accepts the rest.
  rewrite::NarrowToFixedPoint(
      g, blocked, [&](int v) { return ProducerAccepts(g, v, blocked); },
      [&](int reader, int slot) { return ReaderAccepts(g, reader, slot, blocked); });
  // pass 3: the convolutions at either end of a blocked value say so, and the pools that read
  // one.
  for (Node& n : g.nodes) {
    if ((IsGlobalPool(n) || IsBlockablePool(g, n)) && OnCpu(n) && blocked[n.inputs[0]]) {
      SetIntAttribute(n, kBlockedInputAttr, 1);
      if (!IsGlobalPool(n)) SetIntAttribute(n, kBlockedOutputAttr, 1);
      continue;
    }
    if (!IsConv(n) || !OnCpu(n) || n.inputs.empty() || n.outputs.empty()) continue;
    const bool in = n.inputs[0] >= 0 && blocked[n.inputs[0]];
    const bool out = n.outputs[0] >= 0 && blocked[n.outputs[0]];
    if (!in && !out) continue;
    if (n.domain != kInferdDomain) {
      n.domain = kInferdDomain;
      n.op_type = "FusedConv";
      n.opset = 1;
    }
    SetIntAttribute(n, kBlockedInputAttr, in ? 1 : 0);
    SetIntAttribute(n, kBlockedOutputAttr, out ? 1 : 0);
  }
  int count = 0;
  for (bool b : blocked) count += b ? 1 : 0;
  return count;
}

}  // namespace inferd::engine

#include "kernels/cpu/rnn_onednn.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {
namespace {

using dnnl::memory;
using DataType = memory::data_type;

// oneDNN's gate k is ONNX's gate GatePermutation()[k]: LSTM i, f, c~, o from i, o, f, c; GRU
// u, r, o from z, r, h (the same order); RNN's one gate.
std::vector<int> GatePermutation(RnnOp op) {
  switch (op) {
    case RnnOp::kLstm:
      return {0, 2, 3, 1};
    case RnnOp::kGru:
      return {0, 1, 2};
    case RnnOp::kRnn:
      return {0};
  }
  return {};
}

bool IsLbrGru(const RnnAttributes& a) { return a.op == RnnOp::kGru && a.linear_before_reset; }

// lbr_gru has a fourth bias (Rbh, added to R_h * H before the reset gate multiplies it).
int BiasGates(const RnnAttributes& a) { return IsLbrGru(a) ? 4 : a.gates(); }

memory::desc View(const memory::dims& dims, const memory::dims& strides) {
  return memory::desc(dims, DataType::f32, strides);
}

memory::desc Any(const memory::dims& dims) {
  return memory::desc(dims, DataType::f32, memory::format_tag::any);
}

// Direction d's rows of ONNX's W or R ([G*C, k] row-major, gates in ONNX's order) as oneDNN's
// plain ldigo [1, 1, k, G, C] in its gate order.
std::vector<float> PlainWeights(const float* onnx, int64_t k, int64_t c,
                                const std::vector<int>& perm) {
  const int64_t gates = static_cast<int64_t>(perm.size());
  std::vector<float> out(static_cast<size_t>(k * gates * c));
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t g = 0; g < gates; ++g) {
      for (int64_t o = 0; o < c; ++o)
        out[(i * gates + g) * c + o] = onnx[(perm[g] * c + o) * k + i];
    }
  }
  return out;
}

// Direction d's biases as oneDNN's ldgo [1, 1, BiasGates, C] (zeros when B is absent).
std::vector<float> PlainBias(const RnnPrimitiveSpec& spec, int d) {
  const RnnAttributes& a = spec.attrs;
  const int64_t c = spec.geometry.hidden, gc = spec.geometry.gate_width();
  const std::vector<int> perm = GatePermutation(a.op);
  std::vector<float> out(static_cast<size_t>(BiasGates(a) * c), 0.0f);
  if (spec.b == nullptr) return out;
  const float* wb = spec.b + d * 2 * gc;
  const float* rb = wb + gc;
  for (size_t g = 0; g < perm.size(); ++g) {
    for (int64_t o = 0; o < c; ++o) {
      const int64_t k = perm[g] * c + o;
      // lbr_gru: the candidate's bias is Wbh alone; Rbh is the fourth.
      out[g * c + o] = wb[k] + (IsLbrGru(a) && g == 2 ? 0.0f : rb[k]);
    }
  }
  if (IsLbrGru(a)) std::copy(rb + 2 * c, rb + 3 * c, out.begin() + 3 * c);
  return out;
}

// Direction d's peepholes as oneDNN's ldgo [1, 1, 3, C]: i, f, o from ONNX's i, o, f.
std::vector<float> PlainPeephole(const float* p, int64_t c) {
  std::vector<float> out(static_cast<size_t>(3 * c));
  const int perm[] = {0, 2, 1};
  for (int g = 0; g < 3; ++g)
    std::copy(p + perm[g] * c, p + (perm[g] + 1) * c, out.begin() + g * c);
  return out;
}

// The RNN primitive descriptor for direction d over `rows` batch rows. `hint` (may be null) is
// another kind of the same direction whose weight layouts to reuse (one prepacked copy for both).
dnnl::rnn_primitive_desc_base MakePd(const RnnPrimitiveSpec& spec, int d,
                                     const std::vector<memory::desc>& io,
                                     const dnnl::rnn_primitive_desc_base* hint,
                                     const dnnl::engine& eng) {
  const RnnAttributes& a = spec.attrs;
  const RnnGeometry& g = spec.geometry;
  const memory::dim in = g.input, c = g.hidden, gates = a.gates();
  const memory::desc wl = hint ? hint->weights_layer_desc() : Any({1, 1, in, gates, c});
  const memory::desc wi = hint ? hint->weights_iter_desc() : Any({1, 1, c, gates, c});
  const memory::desc bias = hint ? hint->bias_desc() : Any({1, 1, BiasGates(a), c});
  const dnnl::rnn_direction dir = a.reversed(d) ? dnnl::rnn_direction::unidirectional_right2left
                                                : dnnl::rnn_direction::unidirectional_left2right;
  const dnnl::prop_kind kind = dnnl::prop_kind::forward_inference;
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  // io: src_layer, src_iter, src_iter_c, dst_layer, dst_iter, dst_iter_c (RnnPrimitive::Arg).
  switch (a.op) {
    case RnnOp::kLstm: {
      if (spec.p != nullptr) {
        const memory::desc wp = hint ? hint->weights_peephole_desc() : Any({1, 1, 3, c});
        return dnnl::lstm_forward::primitive_desc(
            dnnl::lstm_forward::desc(kind, dir, io[0], io[1], io[2], wl, wi, wp, bias, io[3], io[4],
                                     io[5]),
            attr, eng);
      }
      return dnnl::lstm_forward::primitive_desc(
          dnnl::lstm_forward::desc(kind, dir, io[0], io[1], io[2], wl, wi, bias, io[3], io[4],
                                   io[5]),
          attr, eng);
    }
    case RnnOp::kGru:
      if (a.linear_before_reset) {
        return dnnl::lbr_gru_forward::primitive_desc(
            dnnl::lbr_gru_forward::desc(kind, dir, io[0], io[1], wl, wi, bias, io[3], io[4]), attr,
            eng);
      }
      return dnnl::gru_forward::primitive_desc(
          dnnl::gru_forward::desc(kind, dir, io[0], io[1], wl, wi, bias, io[3], io[4]), attr, eng);
    case RnnOp::kRnn: {
      const ActivationKind f = a.activation(d, 0).kind;
      const dnnl::algorithm alg = f == ActivationKind::kRelu ? dnnl::algorithm::eltwise_relu
                                  : f == ActivationKind::kSigmoid
                                      ? dnnl::algorithm::eltwise_logistic
                                      : dnnl::algorithm::eltwise_tanh;
      return dnnl::vanilla_rnn_forward::primitive_desc(
          dnnl::vanilla_rnn_forward::desc(kind, alg, dir, io[0], io[1], wl, wi, bias, io[3], io[4]),
          attr, eng);
    }
  }
  throw dnnl::error(dnnl_unimplemented, "unknown recurrent operator");
}

}  // namespace

bool RnnPrimitive::SupportsAttributes(const RnnAttributes& a) {
  if (a.clip || a.input_forget) return false;
  for (int d = 0; d < a.num_directions(); ++d) {
    auto is = [&](int k, ActivationKind kind) { return a.activation(d, k).kind == kind; };
    switch (a.op) {
      case RnnOp::kLstm:
        if (!is(0, ActivationKind::kSigmoid) || !is(1, ActivationKind::kTanh) ||
            !is(2, ActivationKind::kTanh)) {
          return false;
        }
        break;
      case RnnOp::kGru:
        if (!is(0, ActivationKind::kSigmoid) || !is(1, ActivationKind::kTanh)) return false;
        break;
      case RnnOp::kRnn:
        if (!is(0, ActivationKind::kTanh) && !is(0, ActivationKind::kRelu) &&
            !is(0, ActivationKind::kSigmoid)) {
          return false;
        }
        break;
    }
  }
  return true;
}

std::vector<memory::desc> RnnPrimitive::PartDescs(const RnnPrimitiveSpec& spec, int64_t rows) {
  const RnnGeometry& g = spec.geometry;
  const memory::dim t = g.seq, n = g.batch, in = g.input, c = g.hidden, d = g.dirs;
  const bool lstm = spec.attrs.op == RnnOp::kLstm;
  const bool l0 = g.layout == 0;
  // Element strides of X [T, N, I] / [N, T, I], the states [D, N, C] / [N, D, C] and
  // Y [T, D, N, C] / [N, T, D, C], seen as oneDNN's tnc and ldnc.
  const memory::desc src =
      View({t, rows, in}, l0 ? memory::dims{n * in, in, 1} : memory::dims{in, t * in, 1});
  const memory::desc state = View({1, 1, rows, c}, l0 ? memory::dims{d * n * c, n * c, c, 1}
                                                      : memory::dims{d * n * c, c, d * c, 1});
  const memory::desc dst =
      View({t, rows, c}, l0 ? memory::dims{d * n * c, c, 1} : memory::dims{d * c, t * d * c, 1});
  std::vector<memory::desc> descs(kNumArgs);
  descs[kSrcLayer] = src;
  if (spec.initial_h) descs[kSrcIter] = state;
  if (lstm && spec.initial_c) descs[kSrcIterC] = state;
  descs[kDstLayer] = dst;
  descs[kDstIter] = state;
  if (lstm) descs[kDstIterC] = state;
  return descs;
}

absl::StatusOr<RnnPrimitive::Plan> RnnPrimitive::MakePlan(const RnnPrimitiveSpec& spec, int threads,
                                                          const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  const RnnGeometry& g = spec.geometry;
  const RnnSplit split = SplitRecurrence(g, threads);
  Plan plan;
  plan.parallel = split.parallel;
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the recurrent primitive", [&]() -> absl::Status {
    ScopedOmpThreads one(1);  // parallelism is the parts'
    for (int d = 0; d < g.dirs; ++d) {
      for (int chunk = 0; chunk < split.chunks; ++chunk) {
        const int64_t begin = split.begin(g, chunk), rows = split.end(g, chunk) - begin;
        auto same = [&](const Kind& k) { return k.direction == d && k.rows == rows; };
        auto it = std::find_if(plan.kinds.begin(), plan.kinds.end(), same);
        if (it == plan.kinds.end()) {
          auto first = std::find_if(plan.kinds.begin(), plan.kinds.end(),
                                    [&](const Kind& k) { return k.direction == d; });
          const std::vector<memory::desc> io = PartDescs(spec, rows);
          Kind kind;
          kind.direction = d;
          kind.rows = rows;
          try {
            kind.pd = MakePd(spec, d, io, first == plan.kinds.end() ? nullptr : &first->pd, *eng);
          } catch (const dnnl::error&) {
            if (first == plan.kinds.end()) throw;
            kind.pd = MakePd(spec, d, io, nullptr, *eng);  // its own weight layouts
          }
          kind.scratchpad = kind.pd.scratchpad_desc().get_size();
          plan.region = std::max(plan.region, AlignUp(kind.scratchpad));
          plan.kinds.push_back(std::move(kind));
          it = plan.kinds.end() - 1;
        }
        plan.parts.push_back(Part{static_cast<int>(it - plan.kinds.begin()), d, begin});
      }
    }
    return absl::OkStatus();
  }));
  const int slots = plan.parallel ? Slots(threads, static_cast<int>(plan.parts.size())) : 1;
  const size_t state = AlignUp(static_cast<size_t>(g.dirs * g.batch * g.hidden) * sizeof(float));
  size_t at = plan.region * slots;
  plan.y = at;
  if (!spec.y_output) at += AlignUp(static_cast<size_t>(g.YShape().NumElements()) * sizeof(float));
  plan.y_h = at;
  at += state;
  plan.y_c = at;
  if (spec.attrs.op == RnnOp::kLstm) at += state;
  plan.total = at;
  return plan;
}

absl::StatusOr<size_t> RnnPrimitive::WorkspaceBytes(const RnnPrimitiveSpec& spec, int threads,
                                                    const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(Plan plan, MakePlan(spec, threads, node));
  return plan.total;
}

absl::StatusOr<std::shared_ptr<const RnnPrimitive>> RnnPrimitive::Build(
    const RnnPrimitiveSpec& spec, int threads, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  std::shared_ptr<RnnPrimitive> p(new RnnPrimitive());
  p->spec_ = spec;
  INFERD_ASSIGN_OR_RETURN(p->plan_, MakePlan(spec, threads, node));
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the recurrent primitive", [&]() -> absl::Status {
    ScopedOmpThreads one(1);
    const RnnGeometry& g = spec.geometry;
    const int64_t in = g.input, c = g.hidden, gc = g.gate_width(), gates = spec.attrs.gates();
    const std::vector<int> perm = GatePermutation(spec.attrs.op);
    std::vector<int> packed_direction;  // of each packed_ entry
    for (Kind& kind : p->plan_.kinds) {
      p->primitives_.emplace_back(kind.pd);
      const int d = kind.direction;
      // One prepacked copy per direction and layout.
      kind.packed = -1;
      for (size_t i = 0; i < p->packed_.size(); ++i) {
        const Packed& pk = p->packed_[i];
        if (packed_direction[i] == d && pk.layer.get_desc() == kind.pd.weights_layer_desc() &&
            pk.iter.get_desc() == kind.pd.weights_iter_desc() &&
            pk.bias.get_desc() == kind.pd.bias_desc()) {
          kind.packed = static_cast<int>(i);
        }
      }
      if (kind.packed >= 0) continue;
      Packed pk;
      const std::vector<float> wl = PlainWeights(spec.w + d * gc * in, in, c, perm);
      pk.layer = ReorderWeights(*eng, PlainDesc({1, 1, in, gates, c}), wl.data(),
                                kind.pd.weights_layer_desc());
      const std::vector<float> wi = PlainWeights(spec.r + d * gc * c, c, c, perm);
      pk.iter = ReorderWeights(*eng, PlainDesc({1, 1, c, gates, c}), wi.data(),
                               kind.pd.weights_iter_desc());
      const std::vector<float> bias = PlainBias(spec, d);
      pk.bias = ReorderWeights(*eng, PlainDesc({1, 1, BiasGates(spec.attrs), c}), bias.data(),
                               kind.pd.bias_desc());
      if (spec.p != nullptr) {
        const std::vector<float> peep = PlainPeephole(spec.p + d * 3 * c, c);
        pk.peephole = ReorderWeights(*eng, PlainDesc({1, 1, 3, c}), peep.data(),
                                     kind.pd.weights_peephole_desc());
      }
      kind.packed = static_cast<int>(p->packed_.size());
      p->packed_.push_back(std::move(pk));
      packed_direction.push_back(d);
    }
    std::vector<memory::desc> descs;
    for (const Part& part : p->plan_.parts) {
      const Kind& kind = p->plan_.kinds[part.kind];
      std::vector<memory::desc> io = PartDescs(spec, kind.rows);
      io[kScratch] = kind.pd.scratchpad_desc();
      descs.insert(descs.end(), io.begin(), io.end());
    }
    p->memories_ = std::make_unique<MemoryPool>(std::move(descs));
    return absl::OkStatus();
  }));
  p->spec_.w = p->spec_.r = p->spec_.b = p->spec_.p = nullptr;
  return std::shared_ptr<const RnnPrimitive>(std::move(p));
}

size_t RnnPrimitive::prepacked_bytes() const {
  size_t total = 0;
  for (const Packed& pk : packed_) {
    for (const dnnl::memory* m : {&pk.layer, &pk.iter, &pk.bias, &pk.peephole}) {
      if (*m) total += m->get_desc().get_size();
    }
  }
  return total;
}

std::string RnnPrimitive::Describe() const {
  return absl::StrCat(plan_.kinds[0].pd.impl_info_str(),
                      parts() > 1 ? absl::StrCat(" (", parts(), " parts)") : "");
}

absl::Status RnnPrimitive::RunPart(int index, const MemoryPool::Lease& mem, char* scratch,
                                   const NodeLabel& node) const {
  const Part& part = plan_.parts[index];
  const Kind& kind = plan_.kinds[part.kind];
  const Packed& pk = packed_[kind.packed];
  const int b = index * kNumArgs;
  if (kind.scratchpad != 0) INFERD_RETURN_IF_ERROR(mem.Bind(b + kScratch, scratch, node));
  dnnl_exec_arg_t args[kNumArgs + 4];
  int n = 0;
  args[n++] = {DNNL_ARG_SRC_LAYER, mem[b + kSrcLayer]};
  if (mem[b + kSrcIter] != nullptr) args[n++] = {DNNL_ARG_SRC_ITER, mem[b + kSrcIter]};
  if (mem[b + kSrcIterC] != nullptr) args[n++] = {DNNL_ARG_SRC_ITER_C, mem[b + kSrcIterC]};
  args[n++] = {DNNL_ARG_WEIGHTS_LAYER, pk.layer.get()};
  args[n++] = {DNNL_ARG_WEIGHTS_ITER, pk.iter.get()};
  if (pk.peephole) args[n++] = {DNNL_ARG_WEIGHTS_PEEPHOLE, pk.peephole.get()};
  args[n++] = {DNNL_ARG_BIAS, pk.bias.get()};
  args[n++] = {DNNL_ARG_DST_LAYER, mem[b + kDstLayer]};
  args[n++] = {DNNL_ARG_DST_ITER, mem[b + kDstIter]};
  if (mem[b + kDstIterC] != nullptr) args[n++] = {DNNL_ARG_DST_ITER_C, mem[b + kDstIterC]};
  if (kind.scratchpad != 0) args[n++] = {DNNL_ARG_SCRATCHPAD, mem[b + kScratch]};
  return cpu::Execute(primitives_[part.kind], absl::MakeConstSpan(args, n), 1, node,
                      "running the recurrent primitive");
}

absl::Status RnnPrimitive::Execute(const RnnTensors& t, void* workspace, engine::ThreadPool& pool,
                                   const NodeLabel& node) const {
  if (workspace == nullptr && plan_.total != 0) return node.Internal("no workspace");
  char* ws = static_cast<char*>(workspace);
  const RnnGeometry& g = spec_.geometry;
  float* y = t.y ? t.y : reinterpret_cast<float*>(ws + plan_.y);
  float* y_h = t.y_h ? t.y_h : reinterpret_cast<float*>(ws + plan_.y_h);
  float* y_c = t.y_c ? t.y_c : reinterpret_cast<float*>(ws + plan_.y_c);
  INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, memories_->Acquire(node));
  for (size_t i = 0; i < plan_.parts.size(); ++i) {
    const Part& part = plan_.parts[i];
    const int b = static_cast<int>(i) * kNumArgs, d = part.direction;
    const int64_t state = g.StateRow(d, part.begin);
    INFERD_RETURN_IF_ERROR(mem.Bind(b + kSrcLayer, t.x + g.XRow(0, part.begin), node));
    if (mem[b + kSrcIter] != nullptr) {
      INFERD_RETURN_IF_ERROR(mem.Bind(b + kSrcIter, t.initial_h + state, node));
    }
    if (mem[b + kSrcIterC] != nullptr) {
      INFERD_RETURN_IF_ERROR(mem.Bind(b + kSrcIterC, t.initial_c + state, node));
    }
    INFERD_RETURN_IF_ERROR(mem.Bind(b + kDstLayer, y + g.YRow(0, d, part.begin), node));
    INFERD_RETURN_IF_ERROR(mem.Bind(b + kDstIter, y_h + state, node));
    if (mem[b + kDstIterC] != nullptr) {
      INFERD_RETURN_IF_ERROR(mem.Bind(b + kDstIterC, y_c + state, node));
    }
  }
  return RunRnnParts(pool, plan_.parallel, parts(), [&](int part, int slot) {
    return RunPart(part, mem, ws + slot * plan_.region, node);
  });
}

}  // namespace inferd::kernels::cpu

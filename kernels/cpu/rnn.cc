// LSTM (opsets 1, 7, 14), GRU (1, 3, 7, 14) and RNN (1, 7, 14), float32: one kernel for the three
// operators. Each run takes one of two paths (docs/kernels-rnn.md):
//   oneDNN (rnn_onednn.h)  the attributes oneDNN's primitives share with ONNX, constant weights,
//                          and every sequence of full length; primitives built per X shape (at
//                          load when it is known), weights prepacked once;
//   own code (rnn_own.h)   everything else: named activations, clip, input_forget, uneven
//                          sequence_lens, weights computed at run time.
// Both run in the one workspace the kernel declares (the larger of the two when a run may take
// either) and allocate nothing of ours per run.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/rnn_common.h"
#include "kernels/cpu/rnn_onednn.h"
#include "kernels/cpu/rnn_own.h"
#include "kernels/cpu/shape_cache.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int kMaxInputs = 8;  // LSTM's; GRU and RNN have 6

int NumInputs(RnnOp op) { return op == RnnOp::kLstm ? 8 : 6; }
int NumOutputs(RnnOp op) { return op == RnnOp::kLstm ? 3 : 2; }

// LSTM inputs wider than this, over long sequences of small batches, take the own code
// (UsesOneDnn).
constexpr int64_t kOneDnnMaxInput = 128;

class RnnKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RnnKernel>> Create(RnnOp op, const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(RnnAttributes attrs, ReadRnnAttributes(op, info));
    auto k = std::unique_ptr<RnnKernel>(new RnnKernel(info, std::move(attrs)));
    // Own code with constant weights multiplies by copies of W^T and R^T made here, once: where
    // it may run (no oneDNN, uneven sequence lengths, or inputs wide enough for UsesOneDnn to
    // send long sequences to it).
    const Tensor* w = info.input(kW).constant;
    const bool wide = op == RnnOp::kLstm && w != nullptr && w->shape().rank() == 3 &&
                      w->shape()[2] > kOneDnnMaxInput;
    if (k->constant_[kW] && k->constant_[kR] &&
        (!k->onednn_ || k->present_[kSequenceLens] || wide)) {
      Transpose(*info.input(kW).constant, k->w_t_);
      Transpose(*info.input(kR).constant, k->r_t_);
    }
    // Shapes known at load are checked now (a bad W or R fails the load, not the first run).
    std::array<std::optional<Shape>, kMaxInputs> known;
    const Shape* shapes[kMaxInputs] = {};
    bool all_known = true;
    for (int i = 0; i < NumInputs(op); ++i) {
      if (!info.input_present(i)) continue;
      known[i] = StaticInputShape(info, i);
      if (known[i]) shapes[i] = &*known[i];
      all_known = all_known && known[i].has_value();
    }
    if (all_known) {
      INFERD_ASSIGN_OR_RETURN(RnnGeometry g, ComputeRnnGeometry(k->attrs_, shapes, k->node_));
      if (k->UsesOneDnn(g)) {
        const Shape* key[] = {shapes[kX]};
        INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const RnnPrimitive> plan, k->BuildPlan(g));
        k->cache_.Pin(key, k->threads_, std::move(plan));
      }
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(RnnOp op, const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(RnnAttributes attrs, ReadRnnAttributes(op, info));
    const RnnKernel k(info, std::move(attrs));
    std::array<std::optional<Shape>, kMaxInputs> known;
    const Shape* shapes[kMaxInputs] = {};
    for (int i = 0; i < NumInputs(op); ++i) {
      if (!info.input_present(i)) continue;
      known[i] = StaticInputShape(info, i);
      if (!known[i]) return k.node_.InvalidArgument("input shapes are not static");
      shapes[i] = &*known[i];
    }
    INFERD_ASSIGN_OR_RETURN(RnnGeometry g, ComputeRnnGeometry(k.attrs_, shapes, k.node_));
    size_t bytes = k.MayUseOwnCode(g) ? OwnWorkspaceBytes(k.attrs_, g) : 0;
    if (k.UsesOneDnn(g)) {
      INFERD_ASSIGN_OR_RETURN(size_t dnnl,
                              RnnPrimitive::WorkspaceBytes(k.Spec(g), k.threads_, k.node_));
      bytes = std::max(bytes, dnnl);
    }
    return bytes;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* in[kMaxInputs] = {};
    const Shape* shapes[kMaxInputs] = {};
    for (int i = 0; i < NumInputs(attrs_.op) && i < ctx.num_inputs(); ++i) {
      in[i] = ctx.input(i);
      if (in[i] == nullptr) continue;
      const DataType want = i == kSequenceLens ? DataType::kInt32 : DataType::kFloat32;
      INFERD_RETURN_IF_ERROR(CheckType(*in[i], want, i, node_));
      shapes[i] = &in[i]->shape();
    }
    INFERD_ASSIGN_OR_RETURN(RnnGeometry g, ComputeRnnGeometry(attrs_, shapes, node_));
    RnnTensors t;
    auto data = [&](int i) { return in[i] != nullptr ? in[i]->data<float>() : nullptr; };
    t.x = data(kX), t.w = data(kW), t.r = data(kR), t.b = data(kB);
    t.initial_h = data(kInitialH);
    if (attrs_.op == RnnOp::kLstm) t.initial_c = data(kInitialC), t.p = data(kP);
    if (!w_t_.empty() && !r_t_.empty()) t.w_t = w_t_.data(), t.r_t = r_t_.data();
    if (in[kSequenceLens] != nullptr) {
      t.sequence_lens = in[kSequenceLens]->data<int32_t>();
      INFERD_RETURN_IF_ERROR(CheckSequenceLens(t.sequence_lens, g.batch, g.seq, node_));
    }
    const bool onednn = UsesOneDnn(g) && FullLengths(t.sequence_lens, g);
    for (int slot = 0; slot < NumOutputs(attrs_.op) && slot < ctx.num_outputs(); ++slot) {
      // oneDNN writes Y whenever the node has it, even where this run does not want it.
      const bool make = ctx.output_wanted(slot) || (onednn && slot == kY && y_output_);
      if (!make) continue;
      INFERD_ASSIGN_OR_RETURN(
          Tensor * out,
          ctx.MakeOutputTensor(slot, DataType::kFloat32, slot == kY ? g.YShape() : g.StateShape()));
      (slot == kY ? t.y : slot == kYH ? t.y_h : t.y_c) = out->mutable_data<float>();
    }
    if (onednn) {
      const Shape* key[] = {shapes[kX]};
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const RnnPrimitive> plan,
                              cache_.GetOrCreate(key, threads_, [&] { return BuildPlan(g); }));
      INFERD_ASSIGN_OR_RETURN(void* ws, ScratchpadFor(ctx, plan->workspace_bytes(), node_));
      return plan->Execute(t, ws, ctx.threads(), node_);
    }
    INFERD_ASSIGN_OR_RETURN(void* ws, ScratchpadFor(ctx, OwnWorkspaceBytes(attrs_, g), node_));
    return RunOwnRnn(attrs_, g, t, ws, ctx.threads(), node_);
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    const Shape* shapes[kMaxInputs] = {};
    for (int i = 0; i < NumInputs(attrs_.op) && i < static_cast<int>(input_shapes.size()); ++i) {
      if (present_[i]) shapes[i] = &input_shapes[i];
    }
    absl::StatusOr<RnnGeometry> g = ComputeRnnGeometry(attrs_, shapes, node_);
    if (!g.ok()) return {};  // Compute reports the error
    size_t bytes = MayUseOwnCode(*g) ? OwnWorkspaceBytes(attrs_, *g) : 0;
    if (UsesOneDnn(*g)) {
      const Shape* key[] = {shapes[kX]};
      absl::StatusOr<std::shared_ptr<const RnnPrimitive>> plan =
          cache_.GetOrCreate(key, threads_, [&] { return BuildPlan(*g); });
      if (plan.ok()) bytes = std::max(bytes, (*plan)->workspace_bytes());
    }
    return ScratchpadRequirement(bytes);
  }

  size_t PersistentBytes() const override {
    return (w_t_.size() + r_t_.size()) * sizeof(float) +
           cache_.SumBytes([](const RnnPrimitive& p) { return p.prepacked_bytes(); });
  }

 private:
  RnnKernel(const KernelInfo& info, RnnAttributes attrs)
      : node_(info), attrs_(std::move(attrs)), threads_(info.intra_op_threads()) {
    for (int i = 0; i < NumInputs(attrs_.op); ++i) {
      present_[i] = info.input_present(i);
      constant_[i] = info.input(i).constant != nullptr;
      if (constant_[i]) weights_[i] = info.input(i).constant->data<float>();
    }
    y_output_ = info.output(kY).present;
    // oneDNN needs the weights at creation, and initial_h and initial_c both or neither.
    onednn_ = RnnPrimitive::SupportsAttributes(attrs_) && constant_[kW] && constant_[kR] &&
              (!present_[kB] || constant_[kB]) &&
              (attrs_.op != RnnOp::kLstm ||
               ((!present_[kP] || constant_[kP]) && present_[kInitialH] == present_[kInitialC]));
  }

  // [D, G*C, K] -> [D, K, G*C] (left empty for a tensor that is not 3-D: Create refuses it).
  static void Transpose(const Tensor& t, std::vector<float>& out) {
    if (t.shape().rank() != 3 || t.dtype() != DataType::kFloat32) return;
    const int64_t d = t.shape()[0], rows = t.shape()[1], k = t.shape()[2];
    const float* in = t.data<float>();
    out.resize(static_cast<size_t>(d * rows * k));
    for (int64_t x = 0; x < d; ++x) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < k; ++c) out[(x * k + c) * rows + r] = in[(x * rows + r) * k + c];
      }
    }
  }

  // Whether runs with this geometry take oneDNN's path when their sequences are full. Not for an
  // LSTM over long sequences of a few wide inputs: oneDNN 2.6's LSTM reads the input weights at
  // every step rather than projecting the whole sequence at once, which the own code does. T100
  // N1 C256, 1 thread: input 80 oneDNN 1.6 ms / own 2.2; 256: 4.2 / 2.3; 512: 10.2 / 2.6. (Its
  // GRU with linear_before_reset does not: input 512, 1.5 ms oneDNN, 1.9 own.)
  bool UsesOneDnn(const RnnGeometry& g) const {
    const bool wide_long =
        attrs_.op == RnnOp::kLstm && g.seq >= 8 && g.input > kOneDnnMaxInput && g.batch <= 4;
    return onednn_ && g.seq > 0 && g.batch > 0 && g.input > 0 && !wide_long;
  }
  // Whether some run with this geometry takes our own code.
  bool MayUseOwnCode(const RnnGeometry& g) const {
    return !UsesOneDnn(g) || present_[kSequenceLens];
  }
  static bool FullLengths(const int32_t* lens, const RnnGeometry& g) {
    return lens == nullptr ||
           std::all_of(lens, lens + g.batch, [&](int32_t l) { return l == g.seq; });
  }

  RnnPrimitiveSpec Spec(const RnnGeometry& g) const {
    RnnPrimitiveSpec spec;
    spec.attrs = attrs_;
    spec.geometry = g;
    spec.w = weights_[kW], spec.r = weights_[kR], spec.b = weights_[kB];
    spec.p = attrs_.op == RnnOp::kLstm ? weights_[kP] : nullptr;
    spec.initial_h = present_[kInitialH];
    spec.initial_c = attrs_.op == RnnOp::kLstm && present_[kInitialC];
    spec.y_output = y_output_;
    return spec;
  }

  absl::StatusOr<std::shared_ptr<const RnnPrimitive>> BuildPlan(const RnnGeometry& g) const {
    return RnnPrimitive::Build(Spec(g), threads_, node_);
  }

  const NodeLabel node_;
  const RnnAttributes attrs_;
  const int threads_;
  // Constant after construction.
  bool present_[kMaxInputs] = {}, constant_[kMaxInputs] = {};
  const float* weights_[kMaxInputs] = {};  // constant inputs' data (owned by the model)
  bool y_output_ = true;
  bool onednn_ = false;
  std::vector<float> w_t_, r_t_;  // constant W and R transposed, for own code (else empty)
  mutable ShapeCache<RnnPrimitive> cache_;  // per X shape
};

template <RnnOp kOp>
engine::KernelDef Def(const char* op_type, int since, int end) {
  return CpuDef(
      engine::kOnnxDomain, op_type, since, end, {DataType::kFloat32},
      [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
        INFERD_ASSIGN_OR_RETURN(std::unique_ptr<RnnKernel> k, RnnKernel::Create(kOp, info));
        return std::unique_ptr<engine::OpKernel>(std::move(k));
      },
      [](const KernelInfo& info) { return RnnKernel::EstimateWorkspace(kOp, info); });
}

}  // namespace

std::vector<engine::KernelDef> RnnKernelDefs() {
  // Opset 1 forms carry output_sequence (Y is optional anyway: ignored); GRU gains
  // linear_before_reset at 3; 7 drops output_sequence; 14 adds layout (read from 14 only). The
  // 14 forms stand unchanged through opset 21 (22 adds bfloat16 and float16 to T): registered
  // that far, whatever kMaxOpset says, as the loader accepts opsets 18-21.
  constexpr int kLatest = 21;
  return {
      Def<RnnOp::kLstm>("LSTM", 1, 6),
      Def<RnnOp::kLstm>("LSTM", 7, 13),
      Def<RnnOp::kLstm>("LSTM", 14, kLatest),
      Def<RnnOp::kGru>("GRU", 1, 2),
      Def<RnnOp::kGru>("GRU", 3, 6),
      Def<RnnOp::kGru>("GRU", 7, 13),
      Def<RnnOp::kGru>("GRU", 14, kLatest),
      Def<RnnOp::kRnn>("RNN", 1, 6),
      Def<RnnOp::kRnn>("RNN", 7, 13),
      Def<RnnOp::kRnn>("RNN", 14, kLatest),
      DynamicQuantizeLstmDef(),
  };
}

}  // namespace inferd::kernels::cpu

// com.microsoft DynamicQuantizeLSTM (what ONNX Runtime's quantize_dynamic writes for an LSTM): an
// LSTM whose W [D, I, 4H] and R [D, H, 4H] are int8 or uint8 with scales and zero points per
// direction ([D]) or per gate column ([D, 4H]). Inputs X, W, R, B, sequence_lens, initial_h,
// initial_c, P, W_scale, W_zero_point, R_scale, R_zero_point; outputs Y, Y_h, Y_c; the LSTM's
// attributes (no layout: X is [T, N, I]).
//
// The own code runs it (rnn_own.h) with both products in integers, as ONNX Runtime does: X is
// quantized to uint8 once a run and H at every step, each with its own scale and zero point from
// its range (DynamicQuantizeLinear's rule), and multiplied by the int8 weights packed here once
// (qgemv.h); the gates are float32. W, R, their scales and zero points must be constant.
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/rnn_common.h"
#include "kernels/cpu/rnn_own.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum QuantInput { kWScale = 8, kWZeroPoint = 9, kRScale = 10, kRZeroPoint = 11 };
constexpr int kInputs = 12;
constexpr int64_t kMaxDepth = 1 << 15;  // I and H: qgemv.h's int32 zero-point terms stay exact

class DynamicQuantizeLstmKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<engine::OpKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(RnnAttributes attrs, ReadRnnAttributes(RnnOp::kLstm, info));
    attrs.layout = 0;
    auto k = std::unique_ptr<DynamicQuantizeLstmKernel>(
        new DynamicQuantizeLstmKernel(info, std::move(attrs)));
    INFERD_RETURN_IF_ERROR(k->Pack(info));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* in[kInputs] = {};
    for (int i = 0; i < kInputs && i < ctx.num_inputs(); ++i) in[i] = ctx.input(i);
    for (int i : {kX, kB, kInitialH, kInitialC, kP}) {
      if (in[i] != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*in[i], DataType::kFloat32, i, node_));
    }
    if (in[kSequenceLens] != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*in[kSequenceLens], DataType::kInt32, kSequenceLens, node_));
    }
    if (in[kX] == nullptr) return node_.InvalidArgument("input X is required");
    std::array<const Shape*, kP + 1> shapes = {};
    for (int i : {kX, kB, kSequenceLens, kInitialH, kInitialC, kP}) {
      shapes[i] = in[i] != nullptr ? &in[i]->shape() : nullptr;
    }
    INFERD_ASSIGN_OR_RETURN(RnnGeometry g, Geometry(shapes));
    RnnTensors t;
    auto data = [&](int i) { return in[i] != nullptr ? in[i]->data<float>() : nullptr; };
    t.x = data(kX), t.b = data(kB), t.initial_h = data(kInitialH), t.initial_c = data(kInitialC);
    t.p = data(kP);
    t.quant = &quant_;
    if (in[kSequenceLens] != nullptr) {
      t.sequence_lens = in[kSequenceLens]->data<int32_t>();
      INFERD_RETURN_IF_ERROR(CheckSequenceLens(t.sequence_lens, g.batch, g.seq, node_));
    }
    for (int slot = 0; slot < 3 && slot < ctx.num_outputs(); ++slot) {
      if (!ctx.output_wanted(slot)) continue;
      INFERD_ASSIGN_OR_RETURN(
          Tensor * out,
          ctx.MakeOutputTensor(slot, DataType::kFloat32, slot == kY ? g.YShape() : g.StateShape()));
      (slot == kY ? t.y : slot == kYH ? t.y_h : t.y_c) = out->mutable_data<float>();
    }
    INFERD_ASSIGN_OR_RETURN(void* ws,
                            ScratchpadFor(ctx, OwnWorkspaceBytes(attrs_, g, true), node_));
    return RunOwnRnn(attrs_, g, t, ws, ctx.threads(), node_);
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.empty()) return {};
    std::array<const Shape*, kP + 1> shapes = {};
    shapes[kX] = &input_shapes[kX];  // the workspace depends on X's shape alone
    absl::StatusOr<RnnGeometry> g = Geometry(shapes);
    if (!g.ok()) return {};  // Compute reports it
    return ScratchpadRequirement(OwnWorkspaceBytes(attrs_, *g, true));
  }

  size_t PersistentBytes() const override {
    size_t bytes = 0;
    for (const auto* list : {&quant_.w, &quant_.r}) {
      for (const PackedInt8Weights& p : *list) bytes += p.bytes();
    }
    return bytes;
  }

 private:
  DynamicQuantizeLstmKernel(const KernelInfo& info, RnnAttributes attrs)
      : node_(info), attrs_(std::move(attrs)) {}

  // A run's geometry from its inputs' shapes (indexed by RnnInput, nullptr where absent; W and R
  // are taken from the packed weights): ComputeRnnGeometry's checks, and X's width against W's.
  absl::StatusOr<RnnGeometry> Geometry(std::array<const Shape*, kP + 1> shapes) const {
    const Shape w{dirs_, 4 * hidden_, input_}, r{dirs_, 4 * hidden_, hidden_};
    shapes[kW] = &w;
    shapes[kR] = &r;
    INFERD_ASSIGN_OR_RETURN(RnnGeometry g, ComputeRnnGeometry(attrs_, shapes, node_));
    if (g.input != input_) {
      return node_.InvalidArgument(
          absl::StrCat("X's last dim is ", g.input, " but W has ", input_, " inputs"));
    }
    return g;
  }

  // Checks W, R, their scales and zero points (constant, shapes, types) and packs both per
  // direction.
  absl::Status Pack(const KernelInfo& info) {
    auto constant = [&](int i, const char* name) -> absl::StatusOr<const Tensor*> {
      const Tensor* t = info.input_present(i) ? info.input(i).constant : nullptr;
      if (t == nullptr) {
        return info.Error(absl::StrCat("input ", name, " must be a constant (an initializer)"));
      }
      return t;
    };
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, constant(kW, "W"));
    INFERD_ASSIGN_OR_RETURN(const Tensor* r, constant(kR, "R"));
    INFERD_ASSIGN_OR_RETURN(const Tensor* ws, constant(kWScale, "W_scale"));
    INFERD_ASSIGN_OR_RETURN(const Tensor* wz, constant(kWZeroPoint, "W_zero_point"));
    INFERD_ASSIGN_OR_RETURN(const Tensor* rs, constant(kRScale, "R_scale"));
    INFERD_ASSIGN_OR_RETURN(const Tensor* rz, constant(kRZeroPoint, "R_zero_point"));
    const int64_t dirs = attrs_.num_directions();
    if (w->shape().rank() != 3 || r->shape().rank() != 3 || w->shape()[0] != dirs ||
        r->shape()[0] != dirs || r->shape()[2] != 4 * r->shape()[1] ||
        w->shape()[2] != r->shape()[2]) {
      return info.Error(absl::StrCat("W must be [", dirs, ", input, 4 * hidden] and R [", dirs,
                                     ", hidden, 4 * hidden], got W ", w->shape().ToString(),
                                     " and R ", r->shape().ToString()));
    }
    dirs_ = dirs;
    input_ = w->shape()[1];
    hidden_ = r->shape()[1];
    if (attrs_.hidden_size > 0 && attrs_.hidden_size != hidden_) {
      return info.Error(absl::StrCat("hidden_size is ", attrs_.hidden_size, " but R has ", hidden_,
                                     " rows per direction"));
    }
    if (input_ < 1 || hidden_ < 1 || input_ >= kMaxDepth || hidden_ >= kMaxDepth) {
      return info.Error(absl::StrCat("input and hidden sizes must be in [1, ", kMaxDepth, "), got ",
                                     input_, " and ", hidden_));
    }
    quant_.isa = BestQgemvIsa();
    const int64_t gc = 4 * hidden_;
    for (const auto& [q, scale, zero, rows, out, name] :
         {std::tuple(w, ws, wz, input_, &quant_.w, "W"),
          std::tuple(r, rs, rz, hidden_, &quant_.r, "R")}) {
      const bool u8 = q->dtype() == DataType::kUint8;
      if (!u8 && q->dtype() != DataType::kInt8) {
        return info.Error(absl::StrCat(name, " must be int8 or uint8"));
      }
      if (zero->dtype() != q->dtype()) {
        return info.Error(absl::StrCat(name, "_zero_point must have ", name, "'s type"));
      }
      if (scale->dtype() != DataType::kFloat32) {
        return info.Error(absl::StrCat(name, "_scale must be float32"));
      }
      const int64_t per = scale->NumElements();
      const bool per_column = per == dirs * gc;
      if ((per != dirs && !per_column) || zero->NumElements() != per) {
        return info.Error(absl::StrCat(
            name, "_scale and ", name, "_zero_point must both have ", dirs, " (per direction) or ",
            dirs * gc, " (per column) values, got ", per, " and ", zero->NumElements()));
      }
      for (int64_t d = 0; d < dirs; ++d) {  // one byte an element
        const int64_t first = per_column ? d * gc : d;
        out->push_back(PackInt8Weights(static_cast<const char*>(q->raw_data()) + d * rows * gc, u8,
                                       rows, gc, gc, scale->data<float>() + first,
                                       static_cast<const char*>(zero->raw_data()) + first,
                                       per_column));
      }
    }
    return absl::OkStatus();
  }

  const NodeLabel node_;
  RnnAttributes attrs_;
  int64_t dirs_ = 1, input_ = 0, hidden_ = 0;
  QuantRnnWeights quant_;  // packed at creation
};

}  // namespace

engine::KernelDef DynamicQuantizeLstmDef() {
  return CpuDef(engine::kMicrosoftDomain, "DynamicQuantizeLSTM", 1, kMaxOpset, {DataType::kFloat32},
                &DynamicQuantizeLstmKernel::Create);
}

}  // namespace inferd::kernels::cpu

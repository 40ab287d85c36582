// ConvInteger and QLinearConv (opset 10): int8 / uint8 convolutions with zero points, exact int32
// results (ConvInteger, what onnxruntime.quantization.quantize_dynamic writes) or the same sum plus
// the int32 bias requantized (QLinearConv, the QOperator format; int8::Requant).
//   ConvInteger: Conv's geometry (window.h: kernel_shape, strides, dilations, pads, auto_pad,
//     group), x_zero_point a scalar, w_zero_point a scalar or one per output channel [M];
//     padding contributes x_zero_point (so zero after the subtraction).
//
// How (own code, exact): both operands are first widened into int16 workspaces with their zero
// points subtracted (|value| <= 255), then accumulated in int32 (wrapping on overflow as ONNX
// Runtime's int32 accumulators do). (image, output channel) planes run in parallel, each output
// walking its window's taps over the group's channels. Constant weights: see ConvIntKernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/int8_conv_primitive.h"
#include "kernels/cpu/int8_matmul_primitive.h"
#include "kernels/cpu/int8_util.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using Dims = absl::InlinedVector<int64_t, 8>;

enum Slot : int {
  kAWork = 0,
  kBWork = 1,
  kAccWork = 2,
  kDnnlScratch = 4,  // the int8 primitive's scratchpad
  kSums = 6,         // column sums of the im2col rows; the direct path's window sums
  kDirectWork = 7,   // the direct int8 convolution's regions (Int8ConvPrimitive)
};

// The direct oneDNN int8 convolution for one shape of x.
struct DirectPlan {
  std::shared_ptr<const Int8ConvPrimitive> primitive;
};

// Whether a constant input is present; nullptr when absent or computed.
const Tensor* ConstantInput(const KernelInfo& info, int i) {
  return i < info.num_inputs() && info.input_present(i) ? info.input(i).constant : nullptr;
}

using namespace int8;  // NOLINT: the shared 8-bit helpers

// The oneDNN int8 product for one set of shapes (Int8MatMulPrimitive).
struct Int8Plan {
  std::shared_ptr<const Int8MatMulPrimitive> primitive;
};

// ConvInteger's geometry for one run.
struct ConvGeometry {
  int64_t n = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0;
  Dims in, kernel, out, strides, dilations, pad_begin, pad_end;
  int64_t in_plane = 1, out_plane = 1, taps = 1;
};

// ConvInteger (int32 out) and QLinearConv (the int32 result plus the int32 bias B requantized
// per output channel, as QLinearMatMul's columns).
template <bool kQLinear>
class ConvIntKernel final : public engine::OpKernel {
 public:
  // Input indices: ConvInteger (x, w, x_zp, w_zp); QLinearConv (x, x_scale, x_zp, w, w_scale,
  // w_zp, y_scale, y_zp, B).
  static constexpr int kX = 0, kXzp = 2, kW = kQLinear ? 3 : 1, kWzp = kQLinear ? 5 : 3;
  static constexpr int kXScale = 1, kWScale = 4, kYScale = 6, kYzp = 7, kBias = 8;

  static absl::StatusOr<std::unique_ptr<ConvIntKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(WindowAttributes window, WindowAttributes::Read(info));
    const int64_t group = info.GetInt("group", 1);
    if (group < 1) return info.Error(absl::StrCat("group must be >= 1, got ", group));
    auto k = std::unique_ptr<ConvIntKernel>(new ConvIntKernel(info, window, group));
    const bool direct = k->OpenDirect(info);
    // com.inferd QLinearConv: x / y channels-last (engine/int8_channels_last.h), which only the
    // direct path requantized by oneDNN reads and writes.
    k->x_channels_last_ = info.GetInt("channels_last_input", 0) != 0;
    k->y_channels_last_ = info.GetInt("channels_last_output", 0) != 0;
    if ((k->x_channels_last_ || k->y_channels_last_) && !(direct && k->fused_)) {
      return info.Error(
          "a channels-last x or y needs oneDNN's int8 convolution requantized by oneDNN (constant "
          "scales and zero points, weights whose zero point fits, a CPU with VNNI)");
    }
    if (direct) {
      // An int32 pointwise expansion (1x1, M >= C) runs faster as the matmul below when it
      // has stride 1 and no padding (PointwiseExpansion): prepare that too.
      const Shape& ws = info.input(kW).constant->shape();
      const bool expansion =
          !k->fused_ && group == 1 && ws.NumElements() / ws[0] == ws[1] && ws[0] >= ws[1];
      k->Note(info, expansion     ? "1x1 expansion: im2col + oneDNN int8 matmul (stride 1, no "
                                    "padding), else oneDNN int8 convolution to int32"
                    : k->fused_   ? "oneDNN int8 convolution, requantized by oneDNN"
                    : k->any_fix_ ? "oneDNN int8 convolution to int32, window-sum correction "
                                    "for the weights' zero point"
                                  : "oneDNN int8 convolution to int32");
      if (!expansion) return k;
    }
    // The oneDNN path (im2col + the int8 matmul, W as the left operand so that the product
    // is already [M, positions]) for constant weights of 1-D / 2-D convolutions: W as int8
    // (uint8 shifted by -128) and each output channel's sum of it, once.
    const Tensor* cw = info.input(kW).constant;
    const DataType xt = info.input(kX).type;
    if (Int8MatMulPrimitive::Available() && Is8Bit(xt) && cw != nullptr && Is8Bit(cw->dtype()) &&
        (cw->shape().rank() == 3 || cw->shape().rank() == 4) && cw->NumElements() > 0 &&
        cw->shape()[0] % group == 0) {
      const int64_t m = cw->shape()[0], mg = m / group, kc = cw->NumElements() / m;
      if (mg >= 2 && kc >= 8) {
        const bool u8 = cw->dtype() == DataType::kUint8;
        k->wt_.resize(cw->NumElements());
        k->w_sums_.assign(m, 0);
        for (int64_t i = 0; i < cw->NumElements(); ++i) {
          const int32_t v = u8 ? cw->data<uint8_t>()[i] - 128 : cw->data<int8_t>()[i];
          k->wt_[i] = static_cast<int8_t>(v);
          k->w_sums_[i / kc] += v;
        }
        k->w_u8_ = u8;
        k->x_signed_ = xt == DataType::kInt8;
        k->constant_w_ = cw;
      }
    }
    if (!direct) {
      k->Note(info, k->constant_w_ != nullptr ? "im2col + oneDNN int8 matmul" : "own code");
    }
    return k;
  }

  size_t PersistentBytes() const override {
    return wt_.size() + w_sums_.size() * sizeof(int32_t) + w8_.size() +
           fix_.size() * sizeof(int32_t) +
           cache_.SumBytes([](const Int8Plan& p) { return p.primitive->prepacked_bytes(); }) +
           direct_cache_.SumBytes(
               [](const DirectPlan& p) { return p.primitive->prepacked_bytes(); });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (static_cast<int>(shapes.size()) <= kW) return {};
    const std::optional<int64_t> x = CheckedProduct(shapes[kX].dims());
    const std::optional<int64_t> w = CheckedProduct(shapes[kW].dims());
    if (!x || !w) return {};
    if (direct_) {
      ConvGeometry g;
      if (Plan(shapes[kX], shapes[kW], &g).ok() && DirectConv(g, shapes[kW], shapes[kX])) {
        return DirectWorkspace(shapes[kX], g);
      }
    }
    if (constant_w_ != nullptr) {
      ConvGeometry g;
      if (Plan(shapes[kX], shapes[kW], &g).ok() && DnnlConv(g, shapes[kW])) {
        return DnnlWorkspace(shapes[kX], g);
      }
    }
    std::vector<engine::WorkspaceRequirement> ws = {
        {kAWork, static_cast<size_t>(*x) * sizeof(int16_t)},
        {kBWork, static_cast<size_t>(*w) * sizeof(int16_t)}};
    if (kQLinear) {
      ConvGeometry g;
      if (!Plan(shapes[kX], shapes[kW], &g).ok()) return {};
      const std::optional<int64_t> out =
          CheckedProduct({g.n, g.m, g.out_plane == 0 ? 1 : g.out_plane});
      if (!out) return {};
      ws.push_back({kAccWork, static_cast<size_t>(*out) * sizeof(int32_t)});
    }
    return ws;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, kX, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, kW, node_));
    const Tensor* xzp = ctx.num_inputs() > kXzp ? ctx.input(kXzp) : nullptr;
    const Tensor* wzp = ctx.num_inputs() > kWzp ? ctx.input(kWzp) : nullptr;
    INFERD_RETURN_IF_ERROR(CheckOperand(*x, xzp, kX, kXzp, node_));
    INFERD_RETURN_IF_ERROR(CheckOperand(*w, wzp, kW, kWzp, node_));
    ConvGeometry g;
    INFERD_RETURN_IF_ERROR(Plan(x->shape(), w->shape(), &g));
    if (xzp != nullptr && !IsScalarLike(xzp->shape())) {
      return node_.Unimplemented(
          absl::StrCat("x_zero_point must be a scalar, got ", xzp->shape().ToString()));
    }
    const bool w_per_channel = wzp != nullptr && !IsScalarLike(wzp->shape());
    if (w_per_channel && wzp->shape() != Shape{g.m}) {
      return node_.InvalidArgument(absl::StrCat("w_zero_point ", wzp->shape().ToString(),
                                                " must be a scalar or [M] = [", g.m, "]"));
    }
    Requant rq;
    const int32_t* bias = nullptr;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(rq, Requant::Read(ctx, kXScale, kWScale, kYScale, kYzp, g.m, node_));
      const Tensor* b = ctx.num_inputs() > kBias ? ctx.input(kBias) : nullptr;
      if (b != nullptr) {
        INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kInt32, kBias, node_));
        if (b->shape() != Shape{g.m}) {
          return node_.InvalidArgument(
              absl::StrCat("B ", b->shape().ToString(), " must be [", g.m, "]"));
        }
        bias = b->data<int32_t>();
      }
    }
    Shape out_shape{g.n, g.m};
    for (int64_t o : g.out) out_shape.push_back(o);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, rq.out_type, out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (direct_ && DirectConv(g, w->shape(), x->shape())) {
      if ((x->dtype() == DataType::kInt8) != x_signed_ || w->dtype() != direct_w_type_ ||
          (fused_ && y->dtype() != y_type_)) {
        return node_.InvalidArgument(absl::StrCat("x is ", engine::DataTypeName(x->dtype()),
                                                  ", not the type the model declared"));
      }
      return RunDirect(ctx, *x, xzp, g, bias, rq, *y);
    }
    if (x_channels_last_ || y_channels_last_) {
      return node_.Unimplemented(absl::StrCat("x ", x->shape().ToString(),
                                              ": the channels-last form runs on oneDNN's int8 "
                                              "convolution only, which has no kernel for it"));
    }
    int32_t* acc = nullptr;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(void* a, ctx.GetWorkspace(kAccWork));
      acc = static_cast<int32_t*>(a);
    } else {
      acc = y->mutable_data<int32_t>();
    }
    if (DnnlConv(g, w->shape())) {
      // The workspace was declared for this path: an x of another type than at load is refused.
      if ((x->dtype() == DataType::kInt8) != x_signed_ || w->dtype() != constant_w_->dtype()) {
        return node_.InvalidArgument(absl::StrCat("x is ", engine::DataTypeName(x->dtype()),
                                                  ", not the type the model declared"));
      }
      INFERD_RETURN_IF_ERROR(RunDnnl(ctx, *x, xzp, wzp, w_per_channel, g, bias, acc));
    } else {
      INFERD_RETURN_IF_ERROR(RunOwn(ctx, *x, *w, xzp, wzp, w_per_channel, g, bias, acc));
    }
    if (kQLinear) {
      rq.Apply(acc, y->NumElements(), /*run=*/g.out_plane, /*params=*/g.m, ctx.threads(), *y);
    }
    return absl::OkStatus();
  }

 private:
  // Prints which path the node takes when INFERD_INT8_CONV_LOG is set (benchmarks, checks).
  static void Note(const KernelInfo& info, const char* path) {
    if (std::getenv("INFERD_INT8_CONV_LOG") == nullptr) return;
    std::fprintf(stderr, "inferd: %s '%s': %s\n", kQLinear ? "QLinearConv" : "ConvInteger",
                 info.node_name().c_str(), path);
  }

  // The direct path (Int8ConvPrimitive): constant 8-bit w (1-D to 3-D) with a constant or no
  // w zero point, x's type known at load, a CPU with VNNI. Per output channel the weights are
  // kept as int8 w - zw when that fits, else as w - c (c = 128 for uint8 w, 0 for int8) with
  // the factor fix = c - zw: the product then misses fix * (the window's sum of x - zx), which
  // RunDirect adds (1-D and 2-D only). QLinearConv is requantized by oneDNN ("fused") when
  // nothing needs that correction and its scales and zero points are constant.
  bool OpenDirect(const KernelInfo& info) {
    const Tensor* cw = info.input(kW).constant;
    const DataType xt = info.input(kX).type;
    if (!Int8ConvPrimitive::Available() || !Is8Bit(xt) || cw == nullptr || !Is8Bit(cw->dtype()) ||
        cw->shape().rank() < 3 || cw->shape().rank() > 5 || cw->NumElements() == 0 ||
        cw->shape()[0] % group_ != 0) {
      return false;
    }
    const int64_t m = cw->shape()[0], per = cw->NumElements() / m;
    const bool wzp_given = kWzp < info.num_inputs() && info.input_present(kWzp);
    const Tensor* wzp = ConstantInput(info, kWzp);
    const bool wzp_per_channel = wzp != nullptr && !IsScalarLike(wzp->shape());
    if (wzp_given && (wzp == nullptr || wzp->dtype() != cw->dtype() ||
                      (wzp_per_channel && wzp->shape() != Shape{m}))) {
      return false;
    }
    const bool u8 = cw->dtype() == DataType::kUint8;
    const int32_t c = u8 ? 128 : 0;
    // pass 1: the int8 weights and the factors.
    std::vector<int8_t> w8(cw->NumElements());
    std::vector<int32_t> fix(m, 0);
    bool any_fix = false;
    for (int64_t oc = 0; oc < m; ++oc) {
      const int32_t zw = wzp == nullptr ? 0 : IntegerAt(*wzp, wzp_per_channel ? oc : 0);
      int32_t lo = 255, hi = -128;
      for (int64_t i = oc * per; i < (oc + 1) * per; ++i) {
        const int32_t v = u8 ? cw->data<uint8_t>()[i] : cw->data<int8_t>()[i];
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      const bool fits = lo - zw >= -128 && hi - zw <= 127;
      const int32_t shift = fits ? zw : c;
      fix[oc] = fits ? 0 : c - zw;
      any_fix = any_fix || fix[oc] != 0;
      for (int64_t i = oc * per; i < (oc + 1) * per; ++i) {
        const int32_t v = u8 ? cw->data<uint8_t>()[i] : cw->data<int8_t>()[i];
        w8[i] = static_cast<int8_t>(v - shift);
      }
    }
    if (any_fix && cw->shape().rank() == 5) return false;
    // pass 2: QLinearConv's requantization by oneDNN, where every parameter is constant.
    if (kQLinear && !any_fix) {
      const Tensor* xs = ConstantInput(info, kXScale);
      const Tensor* ws = ConstantInput(info, kWScale);
      const Tensor* ys = ConstantInput(info, kYScale);
      const Tensor* xzp = ConstantInput(info, kXzp);
      const Tensor* yzp = ConstantInput(info, kYzp);
      const auto is_scale = [](const Tensor* t) {
        return t != nullptr &&
               (t->dtype() == DataType::kFloat32 || t->dtype() == DataType::kFloat16 ||
                t->dtype() == DataType::kBFloat16);
      };
      const bool present_xzp = kXzp < info.num_inputs() && info.input_present(kXzp);
      const bool present_yzp = kYzp < info.num_inputs() && info.input_present(kYzp);
      if (is_scale(xs) && is_scale(ws) && is_scale(ys) && IsScalarLike(xs->shape()) &&
          IsScalarLike(ys->shape()) && (IsScalarLike(ws->shape()) || ws->shape() == Shape{m}) &&
          (!present_xzp || (xzp != nullptr && xzp->dtype() == xt && IsScalarLike(xzp->shape()))) &&
          (!present_yzp ||
           (yzp != nullptr && Is8Bit(yzp->dtype()) && IsScalarLike(yzp->shape())))) {
        const float in_scale = FloatAt(*xs, 0), y_scale = FloatAt(*ys, 0);
        const bool per_channel = !IsScalarLike(ws->shape());
        for (int64_t oc = 0; oc < (per_channel ? m : 1); ++oc) {
          scales_.push_back(in_scale * FloatAt(*ws, oc) / y_scale);  // Requant::ScaleOf's order
        }
        x_zp_ = xzp == nullptr ? 0 : static_cast<int32_t>(IntegerAt(*xzp, 0));
        y_zp_ = yzp == nullptr ? 0 : static_cast<int32_t>(IntegerAt(*yzp, 0));
        y_type_ = yzp == nullptr ? DataType::kUint8 : yzp->dtype();
        fused_ = true;
      }
    }
    w8_ = std::move(w8);
    fix_ = std::move(fix);
    any_fix_ = any_fix;
    direct_w_type_ = cw->dtype();
    direct_w_shape_ = cw->shape();
    x_signed_ = xt == DataType::kInt8;
    bias_ = kQLinear && kBias < info.num_inputs() && info.input_present(kBias);
    direct_ = true;
    return true;
  }

  // An int32 1x1 convolution with stride 1, no padding and M >= C: there the direct path's
  // int32 dst, written channels-last and reordered to NCHW, costs more than the whole im2col +
  // matmul path, which writes [M, P] directly (1 thread, VNNI: 16 -> 96 channels at 112x112
  // 0.85 ms direct vs 0.72; 24 -> 144 at 56x56 0.51 vs 0.21; 64 -> 384 at 14x14 0.13 vs 0.06;
  // but 96 -> 24 at 56x56 0.19 vs 0.38 and a 3x3 32 -> 64 at 56x56 0.25 vs 1.32).
  bool PointwiseExpansion(const ConvGeometry& g) const {
    if (fused_ || g.group != 1 || g.taps != 1 || g.m < g.c) return false;
    for (size_t d = 0; d < g.in.size(); ++d) {
      if (g.strides[d] != 1 || g.pad_begin[d] != 0 || g.pad_end[d] != 0) return false;
    }
    return true;
  }

  // Whether a node with the direct path open takes it for these shapes (the plan builds).
  bool DirectConv(const ConvGeometry& g, const Shape& w, const Shape& x) const {
    if (w != direct_w_shape_ || g.out_plane <= 0 || g.n <= 0) return false;
    if (constant_w_ != nullptr && PointwiseExpansion(g)) return false;
    for (int64_t p : g.pad_end) {
      if (p < 0) return false;
    }
    return DirectPlanFor(x, g).ok();
  }

  absl::StatusOr<std::shared_ptr<const DirectPlan>> DirectPlanFor(const Shape& x,
                                                                  const ConvGeometry& g) const {
    const Shape* shapes[] = {&x};
    return direct_cache_.GetOrCreate(
        ShapeRefs(shapes, 1), threads_, [&]() -> absl::StatusOr<std::shared_ptr<const DirectPlan>> {
          Int8ConvSpec spec;
          spec.n = g.n, spec.c = g.c, spec.m = g.m, spec.group = g.group;
          spec.in.assign(g.in.begin(), g.in.end());
          spec.kernel.assign(g.kernel.begin(), g.kernel.end());
          spec.out.assign(g.out.begin(), g.out.end());
          spec.strides.assign(g.strides.begin(), g.strides.end());
          spec.dilations.assign(g.dilations.begin(), g.dilations.end());
          spec.pad_begin.assign(g.pad_begin.begin(), g.pad_begin.end());
          spec.pad_end.assign(g.pad_end.begin(), g.pad_end.end());
          spec.src_signed = x_signed_;
          spec.src_channels_last = x_channels_last_;
          spec.dst_channels_last = y_channels_last_;
          spec.bias = bias_;
          spec.weights = w8_.data();
          if (fused_) {
            spec.dst = y_type_ == DataType::kInt8 ? Int8ConvSpec::Dst::kS8 : Int8ConvSpec::Dst::kU8;
            spec.scales = scales_;
            spec.src_zp = x_zp_;
            spec.dst_zp = y_zp_;
          } else {
            spec.runtime_src_zp = true;
          }
          auto plan = std::make_shared<DirectPlan>();
          INFERD_ASSIGN_OR_RETURN(plan->primitive, Int8ConvPrimitive::Build(spec, threads_, node_));
          if (std::getenv("INFERD_INT8_CONV_LOG") != nullptr) {
            std::fprintf(stderr, "inferd: %s%s for x %s\n", node_.prefix().c_str(),
                         plan->primitive->Describe().c_str(), x.ToString().c_str());
          }
          return std::shared_ptr<const DirectPlan>(std::move(plan));
        });
  }

  std::vector<engine::WorkspaceRequirement> DirectWorkspace(const Shape& x,
                                                            const ConvGeometry& g) const {
    absl::StatusOr<std::shared_ptr<const DirectPlan>> plan = DirectPlanFor(x, g);
    if (!plan.ok()) return {};
    std::vector<engine::WorkspaceRequirement> ws;
    const size_t bytes = (*plan)->primitive->workspace_bytes();
    if (bytes != 0) ws.push_back({kDirectWork, bytes});
    if (kQLinear && !fused_) {
      const std::optional<int64_t> out = CheckedProduct({g.n, g.m, g.out_plane, 4});
      if (!out) return {};
      ws.push_back({kAccWork, static_cast<size_t>(*out)});
    }
    if (any_fix_) {
      const std::optional<int64_t> sums = CheckedProduct({g.group, g.in_plane + g.out_plane, 4});
      if (!sums) return {};
      ws.push_back({kSums, static_cast<size_t>(*sums)});
    }
    return ws;
  }

  // The direct path: oneDNN's convolution (requantized, or int32 into y / the accumulator),
  // then for the int32 forms the weights' zero-point correction and QLinearConv's requantization.
  absl::Status RunDirect(KernelContext& ctx, const Tensor& x, const Tensor* xzp,
                         const ConvGeometry& g, const int32_t* bias, const Requant& rq,
                         Tensor& y) const {
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const DirectPlan> plan, DirectPlanFor(x.shape(), g));
    void* ws = nullptr;
    if (plan->primitive->workspace_bytes() != 0) {
      INFERD_ASSIGN_OR_RETURN(ws, ctx.GetWorkspace(kDirectWork));
    }
    const int32_t zx = xzp == nullptr ? 0 : static_cast<int32_t>(IntegerAt(*xzp, 0));
    if (bias_ && bias == nullptr) return node_.InvalidArgument("B is missing");
    if (fused_) {
      return plan->primitive->Execute(ctx.threads(), x.raw_data(), bias, zx, y.raw_mutable_data(),
                                      ws, node_);
    }
    int32_t* acc = nullptr;
    if (kQLinear) {
      INFERD_ASSIGN_OR_RETURN(void* a, ctx.GetWorkspace(kAccWork));
      acc = static_cast<int32_t*>(a);
    } else {
      acc = y.mutable_data<int32_t>();
    }
    INFERD_RETURN_IF_ERROR(
        plan->primitive->Execute(ctx.threads(), x.raw_data(), bias, zx, acc, ws, node_));
    if (any_fix_) {
      INFERD_ASSIGN_OR_RETURN(void* sums, ctx.GetWorkspace(kSums));
      AddWindowSums(x, zx, g, static_cast<int32_t*>(sums), acc, ctx.threads());
    }
    if (kQLinear) {
      rq.Apply(acc, y.NumElements(), /*run=*/g.out_plane, /*params=*/g.m, ctx.threads(), y);
    }
    return absl::OkStatus();
  }

  // acc[n, oc, p] += fix[oc] * S[n, group of oc, p], S the window's sum of x - zx over the
  // group's channels (padding adds 0): per group, first the channel sum T of x - zx at every
  // input position, then S as the sum of T over each output's taps. 1-D as 2-D of height 1.
  // `sums` holds [group, in_plane] for T and [group, out_plane] for S. Wrapping int32 sums.
  void AddWindowSums(const Tensor& x, int32_t zx, const ConvGeometry& g, int32_t* sums,
                     int32_t* acc, engine::ThreadPool& pool) const {
    const bool two = g.in.size() == 2;
    const int64_t ih = two ? g.in[0] : 1, iw = g.in.back(), oh = two ? g.out[0] : 1;
    const int64_t ow = g.out.back(), kh = two ? g.kernel[0] : 1, kw = g.kernel.back();
    const int64_t sh = two ? g.strides[0] : 1, sw = g.strides.back();
    const int64_t dh = two ? g.dilations[0] : 1, dw = g.dilations.back();
    const int64_t ph = two ? g.pad_begin[0] : 0, pw = g.pad_begin.back();
    const int64_t P = g.out_plane;
    for (int64_t img = 0; img < g.n; ++img) {
      pool.ParallelFor(g.group, 1, [&](int64_t begin, int64_t end) {
        for (int64_t gi = begin; gi < end; ++gi) {
          bool needed = false;
          for (int64_t oc = gi * g.mg; oc < (gi + 1) * g.mg; ++oc) needed = needed || fix_[oc] != 0;
          if (!needed) continue;
          // pass 1: T, the channel sum of x - zx.
          int32_t* t = sums + gi * g.in_plane;
          std::fill(t, t + g.in_plane, -static_cast<int32_t>(g.cg) * zx);
          for (int64_t ci = 0; ci < g.cg; ++ci) {
            const int64_t plane = (img * g.c + gi * g.cg + ci) * g.in_plane;
            if (x_signed_) {
              const int8_t* src = x.data<int8_t>() + plane;
#pragma omp simd
              for (int64_t i = 0; i < g.in_plane; ++i) t[i] += src[i];
            } else {
              const uint8_t* src = x.data<uint8_t>() + plane;
#pragma omp simd
              for (int64_t i = 0; i < g.in_plane; ++i) t[i] += src[i];
            }
          }
          // pass 2: S, T summed over each output's taps inside x.
          int32_t* s = sums + g.group * g.in_plane + gi * P;
          std::fill(s, s + P, 0);
          for (int64_t a = 0; a < kh; ++a) {
            const auto [r0, r1] = ValidRange(a * dh - ph, sh, ih, oh);
            for (int64_t b = 0; b < kw; ++b) {
              const auto [c0, c1] = ValidRange(b * dw - pw, sw, iw, ow);
              for (int64_t r = r0; r < r1; ++r) {
                const int32_t* src = t + (r * sh + a * dh - ph) * iw + b * dw - pw;
                int32_t* d = s + r * ow;
                if (sw == 1) {
#pragma omp simd
                  for (int64_t col = c0; col < c1; ++col) d[col] += src[col];
                } else {
#pragma omp simd
                  for (int64_t col = c0; col < c1; ++col) d[col] += src[col * sw];
                }
              }
            }
          }
          // pass 3: the correction of the group's output channels.
          for (int64_t oc = gi * g.mg; oc < (gi + 1) * g.mg; ++oc) {
            const uint32_t f = static_cast<uint32_t>(fix_[oc]);
            if (f == 0) continue;
            auto* d = reinterpret_cast<uint32_t*>(acc) + (img * g.m + oc) * P;
            const auto* su = reinterpret_cast<const uint32_t*>(s);
#pragma omp simd
            for (int64_t p = 0; p < P; ++p) d[p] += f * su[p];
          }
        }
      });
    }
  }

  // The exact own code: widen both operands to int16, walk each output's window.
  absl::Status RunOwn(KernelContext& ctx, const Tensor& tx, const Tensor& tw, const Tensor* xzp,
                      const Tensor* wzp, bool w_per_channel, const ConvGeometry& g,
                      const int32_t* bias, int32_t* acc) const {
    const Tensor* x = &tx;
    const Tensor* w = &tw;
    INFERD_ASSIGN_OR_RETURN(void* xw, ctx.GetWorkspace(kAWork));
    INFERD_ASSIGN_OR_RETURN(void* ww, ctx.GetWorkspace(kBWork));
    auto* x16 = static_cast<int16_t*>(xw);
    auto* w16 = static_cast<int16_t*>(ww);
    const int64_t per_filter = g.cg * g.taps;
    Widen(
        *x, xzp, x16, [](int64_t) -> int64_t { return 0; }, ctx.threads());
    Widen(
        *w, wzp, w16, [&](int64_t i) -> int64_t { return w_per_channel ? i / per_filter : 0; },
        ctx.threads());
    if (g.in.size() == 2) {
      Run2D(g, x16, w16, bias, acc, ctx.threads());
    } else {
      Run(g, x16, w16, bias, acc, ctx.threads());
    }
    return absl::OkStatus();
  }

  // Whether a node with constant weights takes the oneDNN path for this geometry.
  bool DnnlConv(const ConvGeometry& g, const Shape& w) const {
    return constant_w_ != nullptr && w == constant_w_->shape() && g.out_plane > 0 && g.n > 0;
  }

  absl::StatusOr<std::shared_ptr<const Int8Plan>> PlanFor(const Shape& x,
                                                          const ConvGeometry& g) const {
    const Shape* shapes[] = {&x};
    return cache_.GetOrCreate(
        ShapeRefs(shapes, 1), threads_, [&]() -> absl::StatusOr<std::shared_ptr<const Int8Plan>> {
          Int8MatMulSpec spec;  // [Mg, Kc] x [Kc, P] per group
          spec.batch = spec.batch_a = spec.batch_b = g.group;
          spec.m = g.mg, spec.k = g.cg * g.taps, spec.n = g.out_plane;
          spec.a_signed = true;
          auto plan = std::make_shared<Int8Plan>();
          INFERD_ASSIGN_OR_RETURN(plan->primitive,
                                  Int8MatMulPrimitive::Build(spec, threads_, node_));
          return std::shared_ptr<const Int8Plan>(std::move(plan));
        });
  }

  std::vector<engine::WorkspaceRequirement> DnnlWorkspace(const Shape& x,
                                                          const ConvGeometry& g) const {
    absl::StatusOr<std::shared_ptr<const Int8Plan>> plan = PlanFor(x, g);
    if (!plan.ok()) return {};
    const std::optional<int64_t> col = CheckedProduct({g.group, g.cg, g.taps, g.out_plane});
    const std::optional<int64_t> out = CheckedProduct({g.n, g.m, g.out_plane, 4});
    if (!col || !out) return {};
    std::vector<engine::WorkspaceRequirement> ws = {
        {kAWork, static_cast<size_t>(*col)},
        {kSums, static_cast<size_t>(g.group * g.out_plane) * sizeof(int32_t)}};
    const size_t scratch = (*plan)->primitive->scratchpad_bytes();
    if (scratch != 0) ws.push_back({kDnnlScratch, scratch});
    if (kQLinear) ws.push_back({kAccWork, static_cast<size_t>(*out)});
    return ws;
  }

  // Per image: im2col into col[group, C/group * taps, P] as int8 (x - 128 for uint8 x; x's zero
  // point where the window leaves x) with its column sums Sx, the int8 matmul
  // acc = W' x col per group straight into [M, P], then with cx, cw = 128 for uint8 x / w:
  //   acc += (cw - zw[oc]) * Sx[p] + (cx - zx) * Sw[oc] + Kc * (cx - zx) * (cw - zw[oc]) + B[oc]
  // which is the exact sum of (x - zx) * (w - zw) in wrapping 32-bit arithmetic.
  absl::Status RunDnnl(KernelContext& ctx, const Tensor& x, const Tensor* xzp, const Tensor* wzp,
                       bool w_per_channel, const ConvGeometry& g, const int32_t* bias,
                       int32_t* acc) const {
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Int8Plan> plan, PlanFor(x.shape(), g));
    INFERD_ASSIGN_OR_RETURN(void* col_ws, ctx.GetWorkspace(kAWork));
    INFERD_ASSIGN_OR_RETURN(void* sums_ws, ctx.GetWorkspace(kSums));
    void* scratch = nullptr;
    if (plan->primitive->scratchpad_bytes() != 0) {
      INFERD_ASSIGN_OR_RETURN(scratch, ctx.GetWorkspace(kDnnlScratch));
    }
    auto* col = static_cast<int8_t*>(col_ws);
    auto* col_sum = static_cast<int32_t*>(sums_ws);
    const int64_t zx = xzp == nullptr ? 0 : IntegerAt(*xzp, 0);
    const uint8_t flip = x_signed_ ? 0 : 0x80;  // uint8 -> int8 by -128: flip the top bit
    const int8_t pad = static_cast<int8_t>(static_cast<uint8_t>(zx) ^ flip);
    const int64_t kc = g.cg * g.taps, P = g.out_plane;
    // 1-D as 2-D with a height of 1.
    const bool two = g.in.size() == 2;
    const int64_t ih = two ? g.in[0] : 1, iw = g.in.back(), oh = two ? g.out[0] : 1;
    const int64_t ow = g.out.back(), kw = g.kernel.back();
    const int64_t sh = two ? g.strides[0] : 1, sw = g.strides.back();
    const int64_t dh = two ? g.dilations[0] : 1, dw = g.dilations.back();
    const int64_t ph = two ? g.pad_begin[0] : 0, pw = g.pad_begin.back();
    engine::ThreadPool& pool = ctx.threads();
    const uint32_t cx = x_signed_ ? 0u : 128u, cw = w_u8_ ? 128u : 0u;
    const uint32_t dx = cx - static_cast<uint32_t>(zx);
    for (int64_t img = 0; img < g.n; ++img) {
      const auto* xi = static_cast<const uint8_t*>(x.raw_data()) + img * g.c * g.in_plane;
      // pass 1: im2col, one row (group, channel, tap) at a time.
      pool.ParallelFor(
          g.group * kc, std::max<int64_t>(1, 16384 / P), [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
              const int64_t gi = row / kc, r = row % kc, ci = r / g.taps, t = r % g.taps;
              const int64_t a = t / kw, b = t % kw;
              const uint8_t* plane = xi + (gi * g.cg + ci) * g.in_plane;
              int8_t* dst = col + row * P;
              const auto [r0, r1] = ValidRange(a * dh - ph, sh, ih, oh);
              const auto [c0, c1] = ValidRange(b * dw - pw, sw, iw, ow);
              for (int64_t y = 0; y < oh; ++y) {
                int8_t* d = dst + y * ow;
                if (y < r0 || y >= r1) {
                  std::fill(d, d + ow, pad);
                  continue;
                }
                const uint8_t* src = plane + (y * sh + a * dh - ph) * iw + b * dw - pw;
                std::fill(d, d + c0, pad);
                for (int64_t c = c0; c < c1; ++c) d[c] = static_cast<int8_t>(src[c * sw] ^ flip);
                std::fill(d + c1, d + ow, pad);
              }
            }
          });
      // pass 2: the column sums, per group.
      pool.ParallelFor(g.group, 1, [&](int64_t begin, int64_t end) {
        for (int64_t gi = begin; gi < end; ++gi) {
          int32_t* cs = col_sum + gi * P;
          std::fill(cs, cs + P, 0);
          for (int64_t r = 0; r < kc; ++r) {
            const int8_t* src = col + (gi * kc + r) * P;
            for (int64_t p = 0; p < P; ++p) cs[p] += src[p];
          }
        }
      });
      // pass 3: the product per group, straight into this image's [M, P].
      int32_t* out = acc + img * g.m * P;
      INFERD_RETURN_IF_ERROR(plan->primitive->Execute(pool, wt_.data(), col, out, scratch, node_));
      // pass 4: the correction.
      pool.ParallelFor(g.m, std::max<int64_t>(1, 16384 / P), [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
          const int64_t gi = oc / g.mg;
          const uint32_t zw =
              static_cast<uint32_t>(wzp == nullptr ? 0 : IntegerAt(*wzp, w_per_channel ? oc : 0));
          const uint32_t fw = cw - zw;
          const uint32_t base = (bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc])) +
                                dx * static_cast<uint32_t>(w_sums_[oc]) +
                                static_cast<uint32_t>(kc) * dx * fw;
          const auto* cs = reinterpret_cast<const uint32_t*>(col_sum) + gi * P;
          auto* d = reinterpret_cast<uint32_t*>(out) + oc * P;
#pragma omp simd
          for (int64_t p = 0; p < P; ++p) d[p] += fw * cs[p] + base;
        }
      });
    }
    return absl::OkStatus();
  }

  ConvIntKernel(const KernelInfo& info, WindowAttributes window, int64_t group)
      : node_(info), window_(std::move(window)), group_(group), threads_(info.intra_op_threads()) {}

  absl::Status Plan(const Shape& x, const Shape& w, ConvGeometry* g) const {
    if (x.rank() < 3 || w.rank() != x.rank()) {
      return node_.InvalidArgument(absl::StrCat("x must be [N, C, spatial...] and w [M, C/group,",
                                                " kernel...] of the same rank, got x ",
                                                x.ToString(), " and w ", w.ToString()));
    }
    const size_t sd = x.rank() - 2;
    g->n = x[0], g->c = x[1], g->m = w[0], g->group = group_;
    if (g->c % group_ != 0 || g->m % group_ != 0 || w[1] != g->c / group_) {
      return node_.InvalidArgument(absl::StrCat("x ", x.ToString(), " and w ", w.ToString(),
                                                " do not match group ", group_,
                                                " (C and M divisible by it, w[1] = C / group)"));
    }
    g->cg = g->c / group_;
    g->mg = g->m / group_;
    const std::vector<int64_t> spatial(x.dims().begin() + 2, x.dims().end());
    const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    if (!window_.kernel_shape.empty() && window_.kernel_shape != kernel) {
      return node_.InvalidArgument(absl::StrCat("kernel_shape does not match w ", w.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(WindowGeometry wg, ComputeWindow(window_, spatial, kernel, node_));
    g->in.assign(spatial.begin(), spatial.end());
    g->kernel.assign(kernel.begin(), kernel.end());
    g->out.assign(wg.out.begin(), wg.out.end());
    g->strides.assign(wg.strides.begin(), wg.strides.end());
    g->dilations.assign(wg.dilations.begin(), wg.dilations.end());
    g->pad_begin.assign(wg.pad_begin.begin(), wg.pad_begin.end());
    g->pad_end.assign(wg.pad_end_floor.begin(), wg.pad_end_floor.end());
    for (size_t d = 0; d < sd; ++d) {
      g->in_plane *= g->in[d];
      g->out_plane *= g->out[d];
      g->taps *= g->kernel[d];
    }
    return absl::OkStatus();
  }

  // The first output index o along a dim with o * stride + offset >= 0, and one past the last
  // with o * stride + offset < in (clamped to [0, out]).
  static std::pair<int64_t, int64_t> ValidRange(int64_t offset, int64_t stride, int64_t in,
                                                int64_t out) {
    int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t hi = in - offset <= 0 ? 0 : (in - offset - 1) / stride + 1;
    lo = std::min(lo, out);
    hi = std::max(lo, std::min(hi, out));
    return {lo, hi};
  }

  // 2-D convolutions (the depthwise ones above all): per output plane, each tap adds
  // w * (a shifted, strided view of the input plane) to the rows it reaches, so the inner loop
  // runs along an output row with no bounds test. Same wrapping sums as Run.
  static void Run2D(const ConvGeometry& g, const int16_t* x, const int16_t* w, const int32_t* bias,
                    int32_t* y, engine::ThreadPool& pool) {
    const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
    const int64_t kh = g.kernel[0], kw = g.kernel[1];
    pool.ParallelFor(g.n * g.m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t img = plane / g.m, oc = plane % g.m, grp = oc / g.mg;
        const int16_t* xg = x + (img * g.c + grp * g.cg) * g.in_plane;
        const int16_t* wf = w + oc * g.cg * g.taps;
        uint32_t* dst = reinterpret_cast<uint32_t*>(y) + plane * g.out_plane;
        std::fill(dst, dst + g.out_plane, bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc]));
        for (int64_t ci = 0; ci < g.cg; ++ci) {
          const int16_t* xp = xg + ci * g.in_plane;
          for (int64_t a = 0; a < kh; ++a) {
            const int64_t row_off = a * g.dilations[0] - g.pad_begin[0];
            const auto [r0, r1] = ValidRange(row_off, g.strides[0], ih, oh);
            for (int64_t b = 0; b < kw; ++b) {
              const int32_t wv = wf[ci * g.taps + a * kw + b];
              if (wv == 0) continue;
              const int64_t col_off = b * g.dilations[1] - g.pad_begin[1];
              const auto [c0, c1] = ValidRange(col_off, g.strides[1], iw, ow);
              const int64_t sw = g.strides[1];
              for (int64_t r = r0; r < r1; ++r) {
                const int16_t* src = xp + (r * g.strides[0] + row_off) * iw + col_off;
                uint32_t* d = dst + r * ow;
#pragma omp simd
                for (int64_t c = c0; c < c1; ++c) {
                  d[c] += static_cast<uint32_t>(wv * int32_t{src[c * sw]});
                }
              }
            }
          }
        }
      }
    });
  }

  static void Run(const ConvGeometry& g, const int16_t* x, const int16_t* w, const int32_t* bias,
                  int32_t* y, engine::ThreadPool& pool) {
    const size_t sd = g.in.size();
    pool.ParallelFor(g.n * g.m, 1, [&](int64_t begin, int64_t end) {
      Dims pos(sd), start(sd), tap(sd);
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t img = plane / g.m, oc = plane % g.m, grp = oc / g.mg;
        const int16_t* xg = x + (img * g.c + grp * g.cg) * g.in_plane;
        const int16_t* wf = w + oc * g.cg * g.taps;
        uint32_t* dst = reinterpret_cast<uint32_t*>(y) + plane * g.out_plane;
        for (int64_t o = 0; o < g.out_plane; ++o) {
          int64_t rest = o;
          for (size_t d = sd; d-- > 0;) {
            pos[d] = rest % g.out[d];
            rest /= g.out[d];
            start[d] = pos[d] * g.strides[d] - g.pad_begin[d];
            tap[d] = 0;
          }
          uint32_t acc = bias == nullptr ? 0u : static_cast<uint32_t>(bias[oc]);
          for (int64_t t = 0; t < g.taps; ++t) {
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < sd && inside; ++d) {
              const int64_t c = start[d] + tap[d] * g.dilations[d];
              inside = c >= 0 && c < g.in[d];
              offset = offset * g.in[d] + c;
            }
            if (inside) {
              for (int64_t ci = 0; ci < g.cg; ++ci) {
                acc += static_cast<uint32_t>(int32_t{xg[ci * g.in_plane + offset]} *
                                             int32_t{wf[ci * g.taps + t]});
              }
            }
            for (size_t d = sd; d-- > 0;) {  // odometer over the window
              if (++tap[d] < g.kernel[d]) break;
              tap[d] = 0;
            }
          }
          dst[o] = acc;
        }
      }
    });
  }

  const NodeLabel node_;
  const WindowAttributes window_;
  const int64_t group_;
  const int threads_;
  // Set at creation when the oneDNN path is open (constant 8-bit w, known x type, VNNI): W^T
  // per group as int8 (uint8 w shifted by -128), the sum of each output channel's w.
  const Tensor* constant_w_ = nullptr;
  bool w_u8_ = false, x_signed_ = false;
  std::vector<int8_t> wt_;
  std::vector<int32_t> w_sums_;
  mutable ShapeCache<Int8Plan> cache_;
  // Set at creation when the direct path is open (OpenDirect): the weights as int8, per output
  // channel the zero-point factor (any_fix_: one is not 0), whether B is given; for a fused
  // QLinearConv its output scales (1 or M), zero points and output type.
  bool direct_ = false, fused_ = false, any_fix_ = false, bias_ = false;
  DataType direct_w_type_ = DataType::kInt8, y_type_ = DataType::kUint8;
  Shape direct_w_shape_;
  std::vector<int8_t> w8_;
  std::vector<int32_t> fix_;
  std::vector<float> scales_;
  int32_t x_zp_ = 0, y_zp_ = 0;
  bool x_channels_last_ = false, y_channels_last_ = false;  // com.inferd QLinearConv
  mutable ShapeCache<DirectPlan> direct_cache_;
};
}  // namespace

std::vector<engine::KernelDef> IntegerConvKernelDefs() {
  const std::vector<DataType> types = {DataType::kUint8, DataType::kInt8};
  std::vector<engine::KernelDef> defs = {
      CpuDef(engine::kOnnxDomain, "ConvInteger", 10, kMaxOpset, types,
             FactoryOf<ConvIntKernel<false>>()),
      CpuDef(engine::kOnnxDomain, "QLinearConv", 10, kMaxOpset, types,
             FactoryOf<ConvIntKernel<true>>()),
  };
  // com.inferd QLinearConv (channels_last_input / channels_last_output), where the CPU runs
  // oneDNN's int8 convolution: only then does the engine keep int8 activations channels-last.
  if (Int8ConvPrimitive::Available()) {
    defs.push_back(CpuDef(engine::kInferdDomain, "QLinearConv", 1, 1, types,
                          FactoryOf<ConvIntKernel<true>>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cpu

// com.microsoft QLinearSoftmax and QLinearAveragePool (version 1, as ONNX Runtime defines them;
// schemas: engine/quant_schemas.cc), on uint8 / int8 tensors with per-tensor scales and zero
// points:
//
//   QLinearSoftmax (axis, opset): Y = q(softmax(dq(X))). With `opset` < 13 the input is seen as
//     [prod(dims before axis), prod(dims from axis)] and each row is normalized (axis defaults
//     to 1); from 13 the softmax runs along `axis` alone (default -1).
//   QLinearAveragePool (kernel_shape, strides, pads, auto_pad, ceil_mode, count_include_pad,
//     channels_last): Y = q(AveragePool(dq(X))), NCHW... or, with channels_last, N...C.
//
// where dq(v) = (v - zero_point) * scale and q(f) = saturate(round_half_even(f / scale) +
// zero_point) in float32.
//
// How: softmax is invariant to a shift of its inputs, so each row is taken relative to its
// largest value v_max: exp((v - v_max) * x_scale) for the 256 possible differences is one table
// per run, the row's sum of table entries its denominator, and Y = q(e / sum). The pool sums
// (v - zero_point) exactly in integers over each window, then scales once. Both agree with ONNX
// Runtime within one quantization step (its softmax table is shifted differently; its pool
// sums dequantized floats).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/quant_layout.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using Dims = absl::InlinedVector<int64_t, 8>;

// saturate(round_half_even(v) + zero_point) into T.
template <typename T>
T Saturate(float rounded_plus_zp) {
  constexpr float lo = static_cast<float>(std::numeric_limits<T>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<T>::max());
  float q = rounded_plus_zp > hi ? hi : rounded_plus_zp;
  q = q >= lo ? q : lo;
  return static_cast<T>(q);
}

absl::Status CheckQuantized(const Tensor& t, const NodeLabel& node) {
  if (t.dtype() != DataType::kUint8 && t.dtype() != DataType::kInt8) {
    return node.Unimplemented(
        absl::StrCat("X is ", engine::DataTypeName(t.dtype()), "; supported are uint8 and int8"));
  }
  return absl::OkStatus();
}

class QLinearSoftmaxKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearSoftmaxKernel>> Create(const KernelInfo& info) {
    if (!info.HasAttribute("opset")) {
      return info.Error("attribute 'opset' (the Softmax opset it stands for) is required");
    }
    const int64_t opset = info.GetInt("opset", 13);
    const bool coerce_2d = opset < 13;
    return std::unique_ptr<QLinearSoftmaxKernel>(
        new QLinearSoftmaxKernel(info, info.GetInt("axis", coerce_2d ? 1 : -1), coerce_2d));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*x, node_));
    INFERD_ASSIGN_OR_RETURN(const ScalarQuant qx, ScalarQuant::Read(ctx, 1, 2, x->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(const ScalarQuant qy, ScalarQuant::Read(ctx, 3, 4, x->dtype(), node_));
    const Shape& s = x->shape();
    if (s.rank() == 0) return node_.InvalidArgument("X must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_, s.rank(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), s));
    if (y->NumElements() == 0) return absl::OkStatus();
    // Rows of `length` elements `step` apart: outer * inner of them.
    const int64_t outer = s.SizeBetween(0, axis);
    const int64_t length = coerce_2d_ ? s.SizeFrom(axis) : s[axis];
    const int64_t inner = coerce_2d_ ? 1 : s.SizeFrom(axis + 1);
    // table[d] = exp(-d * x_scale): the exponential of a value d steps below the row's largest.
    std::array<float, 256> table;
    for (int d = 0; d < 256; ++d) table[d] = std::exp(-static_cast<float>(d) * qx.scale);
    const float inv_y_scale = 1.0f / qy.scale;
    const float zp = static_cast<float>(qy.zero_point);
    auto run = [&](auto* dst, const auto* src) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
      ctx.threads().ParallelFor(
          outer * inner, std::max<int64_t>(1, 4096 / length), [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
              const int64_t base = (row / inner) * length * inner + row % inner;
              int32_t top = std::numeric_limits<int32_t>::min();
              for (int64_t i = 0; i < length; ++i)
                top = std::max<int32_t>(top, src[base + i * inner]);
              float sum = 0.0f;
              for (int64_t i = 0; i < length; ++i) sum += table[top - src[base + i * inner]];
              for (int64_t i = 0; i < length; ++i) {
                const float e = table[top - src[base + i * inner]];
                dst[base + i * inner] = Saturate<T>(std::nearbyint(e * inv_y_scale / sum) + zp);
              }
            }
          });
    };
    if (x->dtype() == DataType::kUint8) {
      run(y->mutable_data<uint8_t>(), x->data<uint8_t>());
    } else {
      run(y->mutable_data<int8_t>(), x->data<int8_t>());
    }
    return absl::OkStatus();
  }

 private:
  QLinearSoftmaxKernel(const KernelInfo& info, int64_t axis, bool coerce_2d)
      : node_(info), axis_(axis), coerce_2d_(coerce_2d) {}

  const NodeLabel node_;
  const int64_t axis_;
  const bool coerce_2d_;  // opset < 13: [outer, everything from axis] rows
};

class QLinearAveragePoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearAveragePoolKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(WindowAttributes window, WindowAttributes::Read(info));
    if (window.kernel_shape.empty()) return info.Error("attribute 'kernel_shape' is required");
    if (!window.dilations.empty()) {
      for (int64_t d : window.dilations) {
        if (d != 1) return info.Error("QLinearAveragePool has no dilations");
      }
    }
    return std::unique_ptr<QLinearAveragePoolKernel>(new QLinearAveragePoolKernel(
        info, std::move(window), info.GetInt("count_include_pad", 0) != 0,
        info.GetInt("channels_last", 0) != 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*x, node_));
    INFERD_ASSIGN_OR_RETURN(const ScalarQuant qx, ScalarQuant::Read(ctx, 1, 2, x->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(const ScalarQuant qy, ScalarQuant::Read(ctx, 3, 4, x->dtype(), node_));
    const Shape& s = x->shape();
    const size_t r = s.rank();
    if (r < 3) {
      return node_.InvalidArgument(
          absl::StrCat("X must be [N, C, spatial...] (rank >= 3), got ", s.ToString()));
    }
    const size_t sd = r - 2;
    const size_t first = channels_last_ ? 1 : 2;  // first spatial dim
    const int64_t n = s[0], c = channels_last_ ? s[r - 1] : s[1];
    Dims in(s.dims().begin() + first, s.dims().begin() + first + sd);
    if (window_.kernel_shape.size() != sd) {
      return node_.InvalidArgument(absl::StrCat("kernel_shape has ", window_.kernel_shape.size(),
                                                " dims, X ", s.ToString(), " has ", sd,
                                                " spatial dims"));
    }
    INFERD_ASSIGN_OR_RETURN(WindowGeometry g,
                            ComputeWindow(window_, in, window_.kernel_shape, node_));
    Shape out_shape;
    out_shape.push_back(n);
    if (!channels_last_) out_shape.push_back(c);
    for (int64_t o : g.out) out_shape.push_back(o);
    if (channels_last_) out_shape.push_back(c);
    if (!CheckedProduct(out_shape.dims())) {
      return node_.InvalidArgument(absl::StrCat("output ", out_shape.ToString(), " overflows"));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    int64_t in_plane = 1, out_plane = 1;
    for (size_t d = 0; d < sd; ++d) {
      in_plane *= in[d];
      out_plane *= g.out[d];
    }
    const float x_scale = qx.scale, y_scale = qy.scale, y_zp = static_cast<float>(qy.zero_point);
    const int32_t x_zp = qx.zero_point;
    const bool last = channels_last_;
    // count_include_pad divides by the whole window, also where ceil_mode lets a last window
    // reach past the end padding (as ONNX Runtime's QLinearAveragePool does).
    int64_t window_size = 1;
    for (int64_t k : g.kernel) window_size *= k;
    auto run = [&](auto* dst, const auto* src) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
      // One task per output element: index (image, position, channel) in Y's order.
      ctx.threads().ParallelFor(y->NumElements(), 256, [&](int64_t begin, int64_t end) {
        Dims pos(sd), lo(sd), hi(sd), tap(sd);
        for (int64_t e = begin; e < end; ++e) {
          const int64_t img = e / (c * out_plane);
          const int64_t rest = e % (c * out_plane);
          const int64_t ch = last ? rest % c : rest / out_plane;
          int64_t p = last ? rest / c : rest % out_plane;
          int64_t valid = 1;
          for (size_t d = sd; d-- > 0;) {
            pos[d] = p % g.out[d];
            p /= g.out[d];
            const int64_t start = pos[d] * g.strides[d] - g.pad_begin[d];
            lo[d] = std::max<int64_t>(start, 0);
            hi[d] = std::min(start + g.kernel[d], in[d]);
            valid *= std::max<int64_t>(hi[d] - lo[d], 0);
          }
          int64_t sum = 0;
          if (valid > 0) {
            // Odometer over the window's positions inside X.
            for (size_t d = 0; d < sd; ++d) tap[d] = lo[d];
            const int64_t image_base = img * c * in_plane;
            while (true) {
              int64_t offset = 0;
              for (size_t d = 0; d < sd; ++d) offset = offset * in[d] + tap[d];
              sum += last ? src[image_base + offset * c + ch]
                          : src[image_base + ch * in_plane + offset];
              size_t d = sd;
              while (d-- > 0) {
                if (++tap[d] < hi[d]) break;
                tap[d] = lo[d];
              }
              if (d == static_cast<size_t>(-1)) break;
            }
          }
          const int64_t count = count_include_pad_ ? window_size : valid;
          // The window's dequantized mean (0 for a window with no element), then Y's step.
          const float mean = count == 0
                                 ? 0.0f
                                 : static_cast<float>(sum - static_cast<int64_t>(x_zp) * valid) *
                                       x_scale / static_cast<float>(count);
          dst[e] = Saturate<T>(std::nearbyint(mean / y_scale) + y_zp);
        }
      });
    };
    if (x->dtype() == DataType::kUint8) {
      run(y->mutable_data<uint8_t>(), x->data<uint8_t>());
    } else {
      run(y->mutable_data<int8_t>(), x->data<int8_t>());
    }
    return absl::OkStatus();
  }

 private:
  QLinearAveragePoolKernel(const KernelInfo& info, WindowAttributes window, bool count_include_pad,
                           bool channels_last)
      : node_(info),
        window_(std::move(window)),
        count_include_pad_(count_include_pad),
        channels_last_(channels_last) {}

  const NodeLabel node_;
  const WindowAttributes window_;
  const bool count_include_pad_, channels_last_;
};

}  // namespace

std::vector<engine::KernelDef> QLinearSoftmaxPoolKernelDefs() {
  const std::vector<DataType> types = {DataType::kUint8, DataType::kInt8};
  return {
      CpuDef(engine::kMicrosoftDomain, "QLinearSoftmax", 1, 1, types,
             FactoryOf<QLinearSoftmaxKernel>()),
      CpuDef(engine::kMicrosoftDomain, "QLinearAveragePool", 1, 1, types,
             FactoryOf<QLinearAveragePoolKernel>()),
  };
}

}  // namespace inferd::kernels::cpu

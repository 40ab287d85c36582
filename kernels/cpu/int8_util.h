// Helpers shared by the 8-bit integer kernels (integer_matmul.cc, integer_conv.cc): operand
// checks, widening to int16 with the zero point subtracted, and the requantization of
// QLinearMatMul / QLinearConv. Stateless; safe to call from any thread.
#ifndef INFERD_KERNELS_CPU_INT8_UTIL_H_
#define INFERD_KERNELS_CPU_INT8_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/quant_layout.h"

namespace inferd::kernels::cpu::int8 {

using engine::DataType;
using engine::KernelContext;
using engine::Shape;
using engine::Tensor;

inline bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

inline absl::Status CheckOperand(const Tensor& t, const Tensor* zp, int index, int zp_index,
                                 const NodeLabel& node) {
  if (!Is8Bit(t.dtype())) {
    return node.Unimplemented(absl::StrCat("input ", index, " is ", engine::DataTypeName(t.dtype()),
                                           "; supported are int8 and uint8"));
  }
  if (zp != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*zp, t.dtype(), zp_index, node));
  return absl::OkStatus();
}

// Widens t into dst (int16) subtracting zero point zp_of(i) from element i.
template <typename ZpIndex>
void Widen(const Tensor& t, const Tensor* zp, int16_t* dst, ZpIndex zp_of,
           engine::ThreadPool& pool) {
  const int64_t n = t.NumElements();
  const bool is_signed = t.dtype() == DataType::kInt8;
  const auto* s8 = t.data<int8_t>();
  const auto* u8 = t.data<uint8_t>();
  pool.ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t z = zp == nullptr ? 0 : IntegerAt(*zp, zp_of(i));
      const int64_t v = is_signed ? s8[i] : u8[i];
      dst[i] = static_cast<int16_t>(v - z);
    }
  });
}

inline bool IsScalarLike(const Shape& s) { return s.NumElements() == 1 && s.rank() <= 1; }

// The requantization of QLinearMatMul / QLinearConv, per output parameter p (column or output
// channel): scale_p = in_scale * w_scale[p] / y_scale (in this order, in float32, as ONNX
// Runtime), y = saturate(round_half_even(acc * scale_p) + y_zero_point).
struct Requant {
  DataType out_type = DataType::kInt32;  // int32: no requantization (the *Integer ops)
  float in_scale = 1.0f, y_scale = 1.0f;
  const Tensor* w_scale = nullptr;
  bool per_param = false;
  int64_t y_zp = 0;

  static absl::StatusOr<Requant> Read(const KernelContext& ctx, int in_scale, int w_scale,
                                      int y_scale, int y_zp, int64_t params,
                                      const NodeLabel& node) {
    Requant r;
    const Tensor* t[3];
    const int idx[3] = {in_scale, w_scale, y_scale};
    for (int i = 0; i < 3; ++i) {
      INFERD_ASSIGN_OR_RETURN(t[i], RequiredInput(ctx, idx[i], node));
      const DataType st = t[i]->dtype();
      if (st != DataType::kFloat32 && st != DataType::kFloat16 && st != DataType::kBFloat16) {
        return node.InvalidArgument(
            absl::StrCat("input ", idx[i], " (a scale) is ", engine::DataTypeName(st)));
      }
      if (i != 1 && !IsScalarLike(t[i]->shape())) {
        return node.InvalidArgument(absl::StrCat("input ", idx[i], " (a scale) must be a ",
                                                 "scalar, got ", t[i]->shape().ToString()));
      }
    }
    r.in_scale = FloatAt(*t[0], 0);
    r.y_scale = FloatAt(*t[2], 0);
    r.w_scale = t[1];
    r.per_param = !IsScalarLike(t[1]->shape());
    if (r.per_param && t[1]->shape() != Shape{params}) {
      return node.InvalidArgument(absl::StrCat("input ", w_scale, " (scale) ",
                                               t[1]->shape().ToString(), " must be a scalar or [",
                                               params, "]"));
    }
    r.out_type = DataType::kUint8;
    const Tensor* zp = ctx.num_inputs() > y_zp ? ctx.input(y_zp) : nullptr;
    if (zp != nullptr) {
      if (!Is8Bit(zp->dtype()) || !IsScalarLike(zp->shape())) {
        return node.InvalidArgument(absl::StrCat("y_zero_point must be an int8 or uint8 ",
                                                 "scalar, got ", engine::DataTypeName(zp->dtype()),
                                                 " ", zp->shape().ToString()));
      }
      r.out_type = zp->dtype();
      r.y_zp = IntegerAt(*zp, 0);
    }
    return r;
  }

  float ScaleOf(int64_t p) const {
    return in_scale * FloatAt(*w_scale, per_param ? p : 0) / y_scale;
  }

  // acc[i] has parameter (i / run) % params.
  void Apply(const int32_t* acc, int64_t total, int64_t run, int64_t params,
             engine::ThreadPool& pool, Tensor& y) const {
    if (y.dtype() == DataType::kUint8) {
      Run(acc, total, run, params, pool, y.mutable_data<uint8_t>());
    } else {
      Run(acc, total, run, params, pool, y.mutable_data<int8_t>());
    }
  }

  template <typename Q>
  void Run(const int32_t* acc, int64_t total, int64_t run, int64_t params, engine::ThreadPool& pool,
           Q* dst) const {
    constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
    constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
    const float zp = static_cast<float>(y_zp);
    pool.ParallelFor(total, 16384, [&](int64_t begin, int64_t end) {
      // Runs of `run` elements share a parameter: one scale per run, a plain inner loop.
      for (int64_t i = begin; i < end;) {
        const int64_t seg = i / run;
        const int64_t stop = std::min(end, (seg + 1) * run);
        const float s = ScaleOf(seg % params);
        for (int64_t j = i; j < stop; ++j) {
          float v = std::nearbyint(static_cast<float>(acc[j]) * s) + zp;
          v = v > hi ? hi : v;
          v = v >= lo ? v : lo;
          dst[j] = static_cast<Q>(v);
        }
        i = stop;
      }
    });
  }
};

}  // namespace inferd::kernels::cpu::int8

#endif  // INFERD_KERNELS_CPU_INT8_UTIL_H_

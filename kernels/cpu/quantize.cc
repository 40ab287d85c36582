// QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21) and DynamicQuantizeLinear (11):
// the linear (scale, zero point) quantization ONNX Runtime's quantizer writes.
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
//
// Granularity (quant_layout.h): per tensor (scalar or one-element scale), per axis (opset 13+,
// 1-D scale of x's dim `axis`), blocked (opset 21, `block_size`: scale of x's rank, dim `axis`
// ceil(x.dim / block_size)). The zero point, when given, has the scale's shape; it also fixes
// the quantized type (else opset 21's output_dtype, else uint8). Quantized types: int8, uint8,
// int16, uint16 (opset 21), and int32 on DequantizeLinear's input (biases); the float8 types
// (opset 19) and int4 / uint4 (opset 21, one per byte inside inferd).
//
// float8: QuantizeLinear is y = float8(x / scale + zero_point) with no rounding to an integer:
// the conversion rounds to the nearest float8 (ties to even) and `saturate` (default 1) decides
// whether out-of-range values become the largest finite value or NaN / infinity
// (engine/float8.h). DequantizeLinear is y = (float(x) - float(zero_point)) * scale. int4 /
// uint4 quantize as the 8-bit integers, clamped to [-8, 7] / [0, 15].
//
// Arithmetic matches ONNX Runtime's (MLAS): the division x / scale in float32, nearbyint (round
// half to even in the default rounding mode), then the zero point added and the result clamped;
// dequantization subtracts in integers and multiplies once in float32. x and scale may be
// float16 / bfloat16: they are widened to float32 first. A NaN quantizes to the type's minimum.
//
// DynamicQuantizeLinear computes uint8 parameters from the data as ONNX Runtime does: the range
// [min(0, min x), max(0, max x)], scale = range / 255 (1 when the range is empty), zero point
// round_half_even(clamp(0 - min / scale, 0, 255)), then quantizes as above.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/float8.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/quant_layout.h"
#include "kernels/cpu/quant_vec.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Element types of the float side (x of QuantizeLinear, scales, y of DequantizeLinear).
using QuantFloatTypes = TypeList<float, Float16, BFloat16>;
// QuantizeLinear's x: the float types, and int32 (opsets 10-19 allow it).
using QuantizeInputTypes = TypeList<float, Float16, BFloat16, int32_t>;
// The quantized types.
using QuantizedTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t>;
// DequantizeLinear's x.
using DequantizeInputTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>;

template <typename T>
float ToFloat(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return v.ToFloat();
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
T FromFloat(float v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::From(v);
  } else {
    return static_cast<T>(v);
  }
}

template <typename Q>
Q QuantizeOne(float x, float scale, float zero_point) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  float v = std::nearbyint(x / scale) + zero_point;
  v = v > hi ? hi : v;
  v = v >= lo ? v : lo;  // NaN too
  return static_cast<Q>(v);
}

bool Is4Bit(DataType t) { return t == DataType::kInt4 || t == DataType::kUint4; }

// float8 and int4 / uint4: one byte per element, handled outside the typed paths.
bool IsNarrow(DataType t) { return engine::IsFloat8(t) || Is4Bit(t); }

bool IsQuantizedType(DataType t, int opset) {
  if (t == DataType::kUint8 || t == DataType::kInt8) return true;
  if (engine::IsFloat8(t)) return opset >= 19;
  return opset >= 21 && (t == DataType::kUint16 || t == DataType::kInt16 || Is4Bit(t));
}

// The zero point of parameter p as float (float8: its value; integers: exact).
float ZeroPointValue(const QuantLayout& l, int64_t p) {
  if (l.zero_point == nullptr) return 0.0f;
  if (engine::IsFloat8(l.zero_point->dtype())) {
    return engine::Float8ToFloat(l.zero_point->data<uint8_t>()[p], l.zero_point->dtype());
  }
  return static_cast<float>(l.ZeroPoint(p));
}

// The parameter of element i (row `row`, offset j in it, i = row * inner + j).
int64_t ParamOf(const QuantLayout& l, int64_t row, int64_t j) {
  return l.blocked() ? l.BlockParam(row, j) : l.RowParam(row);
}

// Attributes both QuantizeLinear and DequantizeLinear read, checked against the opset.
struct QuantAttributes {
  int64_t axis = 1;
  int64_t block_size = 0;

  static absl::StatusOr<QuantAttributes> Read(const KernelInfo& info) {
    QuantAttributes a;
    if (info.opset() >= 13) a.axis = info.GetInt("axis", 1);
    if (info.opset() >= 21) a.block_size = info.GetInt("block_size", 0);
    if (a.block_size < 0) {
      return info.Error(absl::StrCat("block_size must be >= 0, got ", a.block_size));
    }
    return a;
  }
};

// Runs fn(begin, end, row, offset_in_row) over [0, n) in chunks, split at row ends (`inner`
// elements per row), in parallel.
template <typename Fn>
void ForEachRowSegment(engine::ThreadPool& pool, int64_t n, int64_t inner, Fn&& fn) {
  pool.ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t row = begin / inner, j = begin % inner;
      const int64_t stop = std::min(end, (row + 1) * inner);
      fn(begin, stop, row, j);
      begin = stop;
    }
  });
}

class QuantizeLinearKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QuantizeLinearKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(QuantAttributes attrs, QuantAttributes::Read(info));
    DataType out = DataType::kUint8;
    const int64_t output_dtype = info.opset() >= 21 ? info.GetInt("output_dtype", 0) : 0;
    if (output_dtype != 0) {
      if (output_dtype < 0 || output_dtype > INT32_MAX ||
          !engine::IsKnownDataType(static_cast<int32_t>(output_dtype))) {
        return info.Error(absl::StrCat("output_dtype ", output_dtype, " is not an element type"));
      }
      out = static_cast<DataType>(output_dtype);
    }
    if (info.input_present(2)) {
      const DataType zp = info.input(2).type;
      if (zp != DataType::kUndefined) {
        if (output_dtype != 0 && zp != out) {
          return info.Error(absl::StrCat("output_dtype ", engine::DataTypeName(out),
                                         " differs from the zero point's type ",
                                         engine::DataTypeName(zp)));
        }
        out = zp;
      }
    }
    if (!IsQuantizedType(out, info.opset())) {
      return info.Error(absl::StrCat("cannot quantize to ", engine::DataTypeName(out), " at opset ",
                                     info.opset(),
                                     ": supported are int8 and uint8, float8 from opset 19, "
                                     "int16, uint16, int4 and uint4 from opset 21"));
    }
    return std::unique_ptr<QuantizeLinearKernel>(
        new QuantizeLinearKernel(info, attrs, out, info.GetInt("saturate", 1) != 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    const Tensor* zero_point = ctx.input(2);
    if (zero_point != nullptr && zero_point->dtype() != out_type_) {
      return node_.InvalidArgument(absl::StrCat("y_zero_point is ",
                                                engine::DataTypeName(zero_point->dtype()),
                                                ", expected ", engine::DataTypeName(out_type_)));
    }
    INFERD_ASSIGN_OR_RETURN(QuantLayout layout,
                            QuantLayout::Make(x->shape(), *scale, zero_point, attrs_.axis,
                                              attrs_.block_size, opset_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, out_type_, x->shape()));
    if (y->NumElements() == 0) return absl::OkStatus();
    absl::Status status;
    const bool found = Visit(QuantizeInputTypes{}, x->dtype(), [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      if (IsNarrow(out_type_)) {
        RunNarrow<X>(*x, layout, out_type_, saturate_, *y, ctx.threads());
        return;
      }
      status = Dispatch(QuantizedTypes{}, out_type_, node_, [&](auto qtag) {
        using Q = typename decltype(qtag)::type;
        Run<X, Q>(*x, layout, *y, ctx.threads());
        return absl::OkStatus();
      });
    });
    if (!found) {
      return node_.Unimplemented(
          absl::StrCat("x of type ", engine::DataTypeName(x->dtype()), " is not supported"));
    }
    return status;
  }

 private:
  QuantizeLinearKernel(const KernelInfo& info, QuantAttributes attrs, DataType out, bool saturate)
      : node_(info), opset_(info.opset()), attrs_(attrs), out_type_(out), saturate_(saturate) {}

  // To float8 or int4 / uint4, one byte per element.
  template <typename X>
  static void RunNarrow(const Tensor& x, const QuantLayout& layout, DataType out, bool saturate,
                        Tensor& y, engine::ThreadPool& pool) {
    const X* src = x.data<X>();
    uint8_t* dst = y.mutable_data<uint8_t>();
    const float lo = out == DataType::kInt4 ? -8.0f : 0.0f;
    const float hi = out == DataType::kInt4 ? 7.0f : 15.0f;
    ForEachRowSegment(pool, x.NumElements(), layout.inner,
                      [&](int64_t begin, int64_t end, int64_t row, int64_t j) {
                        for (int64_t i = begin; i < end; ++i, ++j) {
                          const int64_t p = ParamOf(layout, row, j);
                          const float v = ToFloat(src[i]) / layout.Scale(p);
                          const float z = ZeroPointValue(layout, p);
                          if (engine::IsFloat8(out)) {
                            dst[i] = engine::FloatToFloat8(v + z, out, saturate);
                            continue;
                          }
                          float q = std::nearbyint(v) + z;
                          q = q > hi ? hi : q;
                          q = q >= lo ? q : lo;  // NaN too
                          dst[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
                        }
                      });
  }

  template <typename X, typename Q>
  static void Run(const Tensor& x, const QuantLayout& layout, Tensor& y, engine::ThreadPool& pool) {
    const X* src = x.data<X>();
    Q* dst = y.mutable_data<Q>();
    ForEachRowSegment(pool, x.NumElements(), layout.inner,
                      [&](int64_t begin, int64_t end, int64_t row, int64_t j) {
                        if (!layout.blocked()) {
                          const int64_t p = layout.RowParam(row);
                          const float s = layout.Scale(p);
                          if constexpr (std::is_same_v<X, float> &&
                                        (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>)) {
                            quant_vec::Quantize(src + begin, end - begin, s,
                                                static_cast<int32_t>(layout.ZeroPoint(p)),
                                                dst + begin);
                            return;
                          }
                          const float z = static_cast<float>(layout.ZeroPoint(p));
                          for (int64_t i = begin; i < end; ++i) {
                            dst[i] = QuantizeOne<Q>(ToFloat(src[i]), s, z);
                          }
                          return;
                        }
                        int64_t p = layout.BlockParam(row, j);
                        for (int64_t i = begin; i < end; ++i, ++p) {
                          dst[i] = QuantizeOne<Q>(ToFloat(src[i]), layout.Scale(p),
                                                  static_cast<float>(layout.ZeroPoint(p)));
                        }
                      });
  }

  const NodeLabel node_;
  const int opset_;
  const QuantAttributes attrs_;
  const DataType out_type_;
  const bool saturate_;  // float8 only: out of range to the largest value (else NaN / inf)
};

class DequantizeLinearKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DequantizeLinearKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(QuantAttributes attrs, QuantAttributes::Read(info));
    const DataType x = info.input(0).type;
    if (IsNarrow(x) && !IsQuantizedType(x, info.opset())) {
      return info.Error(absl::StrCat("x of type ", engine::DataTypeName(x), " at opset ",
                                     info.opset(), " is not supported"));
    }
    return std::unique_ptr<DequantizeLinearKernel>(new DequantizeLinearKernel(info, attrs));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    const Tensor* zero_point = ctx.input(2);
    if (zero_point != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*zero_point, x->dtype(), 2, node_));
    if (x->dtype() == DataType::kInt32 && zero_point != nullptr) {
      // The operator requires a zero zero point for int32 (biases); refuse anything else.
      for (int64_t i = 0; i < zero_point->NumElements(); ++i) {
        if (zero_point->data<int32_t>()[i] != 0) {
          return node_.InvalidArgument("an int32 x needs x_zero_point 0 (or none)");
        }
      }
    }
    INFERD_ASSIGN_OR_RETURN(QuantLayout layout,
                            QuantLayout::Make(x->shape(), *scale, zero_point, attrs_.axis,
                                              attrs_.block_size, opset_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, scale->dtype(), x->shape()));
    if (y->NumElements() == 0) return absl::OkStatus();
    absl::Status status;
    if (IsNarrow(x->dtype())) {
      return Dispatch(QuantFloatTypes{}, scale->dtype(), node_, [&](auto ytag) {
        using Y = typename decltype(ytag)::type;
        RunNarrow<Y>(*x, layout, *y, ctx.threads());
        return absl::OkStatus();
      });
    }
    const bool found = Visit(DequantizeInputTypes{}, x->dtype(), [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      status = Dispatch(QuantFloatTypes{}, scale->dtype(), node_, [&](auto ytag) {
        using Y = typename decltype(ytag)::type;
        Run<X, Y>(*x, layout, *y, ctx.threads());
        return absl::OkStatus();
      });
    });
    if (!found) {
      return node_.Unimplemented(
          absl::StrCat("x of type ", engine::DataTypeName(x->dtype()), " is not supported"));
    }
    return status;
  }

 private:
  DequantizeLinearKernel(const KernelInfo& info, QuantAttributes attrs)
      : node_(info), opset_(info.opset()), attrs_(attrs) {}

  // From float8 or int4 / uint4, one byte per element.
  template <typename Y>
  static void RunNarrow(const Tensor& x, const QuantLayout& layout, Tensor& y,
                        engine::ThreadPool& pool) {
    const DataType t = x.dtype();
    const uint8_t* src = x.data<uint8_t>();
    Y* dst = y.mutable_data<Y>();
    ForEachRowSegment(pool, x.NumElements(), layout.inner,
                      [&](int64_t begin, int64_t end, int64_t row, int64_t j) {
                        for (int64_t i = begin; i < end; ++i, ++j) {
                          const int64_t p = ParamOf(layout, row, j);
                          const float v = engine::IsFloat8(t) ? engine::Float8ToFloat(src[i], t)
                                          : t == DataType::kInt4
                                              ? static_cast<float>(static_cast<int8_t>(src[i]))
                                              : static_cast<float>(src[i]);
                          dst[i] = FromFloat<Y>((v - ZeroPointValue(layout, p)) * layout.Scale(p));
                        }
                      });
  }

  template <typename X, typename Y>
  static void Run(const Tensor& x, const QuantLayout& layout, Tensor& y, engine::ThreadPool& pool) {
    const X* src = x.data<X>();
    Y* dst = y.mutable_data<Y>();
    ForEachRowSegment(
        pool, x.NumElements(), layout.inner,
        [&](int64_t begin, int64_t end, int64_t row, int64_t j) {
          if (!layout.blocked()) {
            const int64_t p = layout.RowParam(row);
            const float s = layout.Scale(p);
            const int64_t z = layout.ZeroPoint(p);
            if constexpr (std::is_same_v<Y, float> &&
                          (std::is_same_v<X, uint8_t> || std::is_same_v<X, int8_t>)) {
              quant_vec::Dequantize(src + begin, end - begin, s, static_cast<int32_t>(z),
                                    dst + begin);
              return;
            }
            for (int64_t i = begin; i < end; ++i) {
              dst[i] = FromFloat<Y>(static_cast<float>(static_cast<int64_t>(src[i]) - z) * s);
            }
            return;
          }
          int64_t p = layout.BlockParam(row, j);
          for (int64_t i = begin; i < end; ++i, ++p) {
            dst[i] = FromFloat<Y>(
                static_cast<float>(static_cast<int64_t>(src[i]) - layout.ZeroPoint(p)) *
                layout.Scale(p));
          }
        });
  }

  const NodeLabel node_;
  const int opset_;
  const QuantAttributes attrs_;
};

class DynamicQuantizeLinearKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DynamicQuantizeLinearKernel>> Create(
      const KernelInfo& info) {
    return std::unique_ptr<DynamicQuantizeLinearKernel>(new DynamicQuantizeLinearKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kUint8, x->shape()));
    INFERD_ASSIGN_OR_RETURN(Tensor * y_scale, ctx.MakeOutputTensor(1, DataType::kFloat32, {}));
    INFERD_ASSIGN_OR_RETURN(Tensor * y_zp, ctx.MakeOutputTensor(2, DataType::kUint8, {}));
    DynamicQuantizeU8(x->data<float>(), x->NumElements(), y->mutable_data<uint8_t>(),
                      y_scale->mutable_data<float>(), y_zp->mutable_data<uint8_t>(), ctx.threads());
    return absl::OkStatus();
  }

 private:
  explicit DynamicQuantizeLinearKernel(const KernelInfo& info) : node_(info) {}

  const NodeLabel node_;
};

std::vector<DataType> DequantizeDefTypes() {
  std::vector<DataType> types = TypesOf(DequantizeInputTypes{});
  for (DataType t : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                     DataType::kFloat8E5M2FNUZ, DataType::kUint4, DataType::kInt4}) {
    types.push_back(t);
  }
  return types;
}

}  // namespace

std::vector<engine::KernelDef> QuantizeKernelDefs() {
  return {
      CpuDef(engine::kOnnxDomain, "QuantizeLinear", 10, kMaxOpset, TypesOf(QuantizeInputTypes{}),
             FactoryOf<QuantizeLinearKernel>()),
      CpuDef(engine::kOnnxDomain, "DequantizeLinear", 10, kMaxOpset, DequantizeDefTypes(),
             FactoryOf<DequantizeLinearKernel>()),
      CpuDef(engine::kOnnxDomain, "DynamicQuantizeLinear", 11, kMaxOpset, {DataType::kFloat32},
             FactoryOf<DynamicQuantizeLinearKernel>()),
  };
}

}  // namespace inferd::kernels::cpu

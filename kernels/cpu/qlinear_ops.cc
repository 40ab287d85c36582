// ONNX Runtime's quantization contrib operators (com.microsoft, version 1) that its quantizer
// writes in the QOperator format, on uint8 / int8 tensors with per-tensor scales and zero points
// (schemas: engine/quant_schemas.cc):
//
//   QLinearAdd / QLinearMul: C = q((dq(A) op dq(B))), numpy broadcasting;
//   QLinearSigmoid / QLinearLeakyRelu (alpha): Y = q(f(dq(X))), through a 256-entry table;
//   QLinearGlobalAveragePool (channels_last): Y = q(mean over the spatial dims of dq(X));
//   QLinearConcat (axis): Y = concat of q_Y(dq_i(X_i)), each input through a 256-entry table
//     (copied as it is where its scale and zero point are Y's).
//
// where dq(v) = (v - zero_point) * scale and q(f) = saturate(round_half_even(f / scale) +
// zero_point), in float32. ONNX Runtime computes QLinearAdd / QLinearMul with fixed-point
// multipliers in its vector kernels, so a value on a half step may round the other way there:
// results agree within one quantization step (the ORT cases allow exactly that).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
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
using Dims = absl::InlinedVector<int64_t, 8>;
using Quantized8 = TypeList<uint8_t, int8_t>;

absl::Status CheckQuantized(const Tensor& t, int index, const NodeLabel& node) {
  if (t.dtype() != DataType::kUint8 && t.dtype() != DataType::kInt8) {
    return node.Unimplemented(absl::StrCat("input ", index, " is ", engine::DataTypeName(t.dtype()),
                                           "; supported are uint8 and int8"));
  }
  return absl::OkStatus();
}

// QLinearAdd, QLinearMul.
class QLinearBinaryKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearBinaryKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<QLinearBinaryKernel>(
        new QLinearBinaryKernel(info, info.op_type() == "QLinearMul"));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 3, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*a, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, a->dtype(), 3, node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant pa, ScalarQuant::Read(ctx, 1, 2, a->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant pb, ScalarQuant::Read(ctx, 4, 5, a->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant pc, ScalarQuant::Read(ctx, 6, 7, a->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(a->shape(), b->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * c, ctx.MakeOutputTensor(0, a->dtype(), out));
    if (c->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Quantized8{}, a->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run<T>(*a, *b, pa, pb, pc, *c, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  QLinearBinaryKernel(const KernelInfo& info, bool mul) : node_(info), mul_(mul) {}

  template <typename T>
  void Run(const Tensor& a, const Tensor& b, const ScalarQuant& pa, const ScalarQuant& pb,
           const ScalarQuant& pc, Tensor& c, engine::ThreadPool& pool) const {
    // Strides of A and B over C's dims (0 where broadcast).
    const Shape& out = c.shape();
    const size_t r = out.rank();
    Dims as(r, 0), bs(r, 0);
    int64_t sa = 1, sb = 1;
    for (size_t d = r; d-- > 0;) {
      const size_t ra = a.shape().rank(), rb = b.shape().rank();
      const int64_t da = d + ra >= r ? a.shape()[d + ra - r] : 1;
      const int64_t db = d + rb >= r ? b.shape()[d + rb - r] : 1;
      as[d] = da == 1 ? 0 : sa;
      bs[d] = db == 1 ? 0 : sb;
      sa *= da;
      sb *= db;
    }
    const T* pa_data = a.data<T>();
    const T* pb_data = b.data<T>();
    T* dst = c.mutable_data<T>();
    const bool mul = mul_;
    if (!mul && a.shape() == out && b.shape() == out) {
      // Same shapes (the residual adds of quantized CNNs): a flat loop the compiler vectorizes.
      pool.ParallelFor(out.NumElements(), 16384, [&](int64_t begin, int64_t end) {
        quant_vec::AddQuantized(pa_data + begin, pb_data + begin, end - begin, pa.scale,
                                pa.zero_point, pb.scale, pb.zero_point, pc.scale, pc.zero_point,
                                dst + begin);
      });
      return;
    }
    pool.ParallelFor(out.NumElements(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int64_t rest = i, ia = 0, ib = 0;
        for (size_t d = r; d-- > 0;) {
          const int64_t pos = rest % out[d];
          rest /= out[d];
          ia += pos * as[d];
          ib += pos * bs[d];
        }
        const float x = pa.Dequantize(pa_data[ia]), y = pb.Dequantize(pb_data[ib]);
        dst[i] = pc.Quantize<T>(mul ? x * y : x + y);
      }
    });
  }

  const NodeLabel node_;
  const bool mul_;
};

// QLinearSigmoid, QLinearLeakyRelu.
class QLinearUnaryKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearUnaryKernel>> Create(const KernelInfo& info) {
    const bool leaky = info.op_type() == "QLinearLeakyRelu";
    return std::unique_ptr<QLinearUnaryKernel>(
        new QLinearUnaryKernel(info, leaky, info.GetFloat("alpha", 0.01f)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*x, 0, node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant px, ScalarQuant::Read(ctx, 1, 2, x->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant py, ScalarQuant::Read(ctx, 3, 4, x->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Quantized8{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      // The table: every one of the 256 input values mapped once.
      T table[256];
      for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v) {
        const float f = px.Dequantize(v);
        const float g = leaky_ ? (f >= 0.0f ? f : f * alpha_) : 1.0f / (1.0f + std::exp(-f));
        table[static_cast<uint8_t>(v)] = py.Quantize<T>(g);
      }
      const T* src = x->data<T>();
      T* dst = y->mutable_data<T>();
      ctx.threads().ParallelFor(x->NumElements(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = table[static_cast<uint8_t>(src[i])];
      });
      return absl::OkStatus();
    });
  }

 private:
  QLinearUnaryKernel(const KernelInfo& info, bool leaky, float alpha)
      : node_(info), leaky_(leaky), alpha_(alpha) {}

  const NodeLabel node_;
  const bool leaky_;
  const float alpha_;
};

// QLinearGlobalAveragePool.
class QLinearGlobalAveragePoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearGlobalAveragePoolKernel>> Create(
      const KernelInfo& info) {
    return std::unique_ptr<QLinearGlobalAveragePoolKernel>(
        new QLinearGlobalAveragePoolKernel(info, info.GetInt("channels_last", 0) != 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*x, 0, node_));
    const Shape& in = x->shape();
    if (in.rank() < 3) {
      return node_.InvalidArgument(
          absl::StrCat("X must be [N, C, spatial...] (rank >= 3), got ", in.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(ScalarQuant px, ScalarQuant::Read(ctx, 1, 2, x->dtype(), node_));
    INFERD_ASSIGN_OR_RETURN(ScalarQuant py, ScalarQuant::Read(ctx, 3, 4, x->dtype(), node_));
    const size_t r = in.rank();
    const int64_t n = in[0], c = channels_last_ ? in[r - 1] : in[1];
    const int64_t size = channels_last_ ? in.SizeBetween(1, r - 1) : in.SizeFrom(2);
    Shape out = in;
    for (size_t d = 1; d < r; ++d) {
      if (d != (channels_last_ ? r - 1 : 1)) out[d] = 1;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Quantized8{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = x->data<T>();
      T* dst = y->mutable_data<T>();
      const bool last = channels_last_;
      // mean = scale * (sum - zp * size) / size, the sum exact in int64.
      ctx.threads().ParallelFor(n * c, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t img = p / c, ch = p % c;
          int64_t sum = 0;
          if (last) {
            const T* base = src + img * size * c + ch;
            for (int64_t i = 0; i < size; ++i) sum += base[i * c];
          } else {
            const T* base = src + p * size;
            for (int64_t i = 0; i < size; ++i) sum += base[i];
          }
          const float mean = (static_cast<float>(sum) - px.zero_point * static_cast<float>(size)) *
                             px.scale / static_cast<float>(size);
          dst[last ? img * c + ch : p] = py.Quantize<T>(mean);
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  QLinearGlobalAveragePoolKernel(const KernelInfo& info, bool channels_last)
      : node_(info), channels_last_(channels_last) {}

  const NodeLabel node_;
  const bool channels_last_;
};

// QLinearConcat: inputs Y_scale, Y_zero_point, then (X_i, X_i_scale, X_i_zero_point) per input.
class QLinearConcatKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<QLinearConcatKernel>> Create(const KernelInfo& info) {
    if (!info.HasAttribute("axis")) return info.Error("attribute 'axis' is required");
    if (info.num_inputs() < 5 || (info.num_inputs() - 2) % 3 != 0) {
      return info.Error(
          absl::StrCat("takes Y_scale, Y_zero_point and then (X, X_scale, "
                       "X_zero_point) per input: 2 + 3n inputs, got ",
                       info.num_inputs()));
    }
    return std::unique_ptr<QLinearConcatKernel>(
        new QLinearConcatKernel(info, info.GetInt("axis", 0)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const int n = (ctx.num_inputs() - 2) / 3;
    INFERD_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 2, node_));
    INFERD_RETURN_IF_ERROR(CheckQuantized(*first, 2, node_));
    const DataType type = first->dtype();
    const size_t rank = first->shape().rank();
    if (rank == 0) return node_.InvalidArgument("inputs must have rank >= 1");
    const int64_t r = static_cast<int64_t>(rank);
    if (axis_ < -r || axis_ >= r) {
      return node_.InvalidArgument(absl::StrCat("axis ", axis_, " is out of range for rank ", r));
    }
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    Dims out(first->shape().dims().begin(), first->shape().dims().end());
    out[axis] = 0;
    for (int i = 0; i < n; ++i) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 2 + 3 * i, node_));
      if (x->dtype() != type) {
        return node_.InvalidArgument(
            absl::StrCat("input ", 2 + 3 * i, " is ", engine::DataTypeName(x->dtype()),
                         " but the first is ", engine::DataTypeName(type)));
      }
      const Shape& s = x->shape();
      bool same = s.rank() == rank;
      for (size_t d = 0; same && d < rank; ++d) same = d == axis || s[d] == out[d];
      if (!same) {
        return node_.InvalidArgument(absl::StrCat("input ", 2 + 3 * i, " has shape ", s.ToString(),
                                                  "; it must match ", first->shape().ToString(),
                                                  " except along axis ", axis));
      }
      std::optional<int64_t> sum = CheckedAdd<int64_t>(out[axis], s[axis]);
      if (!sum) return node_.InvalidArgument("the concatenated axis overflows");
      out[axis] = *sum;
    }
    INFERD_ASSIGN_OR_RETURN(ScalarQuant py, ScalarQuant::Read(ctx, 0, 1, type, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type, Shape(out)));
    if (y->NumElements() == 0) return absl::OkStatus();
    int64_t outer = 1;
    for (size_t d = 0; d < axis; ++d) outer *= out[d];
    const int64_t row = y->NumElements() / outer;  // output elements per outer index
    return Dispatch(Quantized8{}, type, node_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      T* dst = y->mutable_data<T>();
      int64_t offset = 0;  // of input i's block within an output row
      for (int i = 0; i < n; ++i) {
        const Tensor* x = ctx.input(2 + 3 * i);
        INFERD_ASSIGN_OR_RETURN(ScalarQuant px,
                                ScalarQuant::Read(ctx, 3 + 3 * i, 4 + 3 * i, type, node_));
        const int64_t block = outer > 0 ? x->NumElements() / outer : 0;
        const bool copy = px.scale == py.scale && px.zero_point == py.zero_point;
        T table[256];
        for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v) {
          table[static_cast<uint8_t>(v)] = py.Quantize<T>(px.Dequantize(v));
        }
        const T* src = x->data<T>();
        ctx.threads().ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, block)),
                                  [&](int64_t begin, int64_t end) {
                                    for (int64_t o = begin; o < end; ++o) {
                                      const T* in = src + o * block;
                                      T* to = dst + o * row + offset;
                                      if (copy) {
                                        std::copy(in, in + block, to);
                                      } else {
                                        for (int64_t k = 0; k < block; ++k)
                                          to[k] = table[static_cast<uint8_t>(in[k])];
                                      }
                                    }
                                  });
        offset += block;
      }
      return absl::OkStatus();
    });
  }

 private:
  QLinearConcatKernel(const KernelInfo& info, int64_t axis) : node_(info), axis_(axis) {}

  const NodeLabel node_;
  const int64_t axis_;
};

// QLinearConcat's input 0 is Y's float scale: the def is keyed on its output's type.
engine::KernelDef ConcatDef(const std::vector<DataType>& types) {
  engine::KernelDef def = CpuDef(engine::kMicrosoftDomain, "QLinearConcat", 1, 1, types,
                                 FactoryOf<QLinearConcatKernel>());
  def.type_input = -1;
  return def;
}

}  // namespace

std::vector<engine::KernelDef> QLinearContribKernelDefs() {
  const std::vector<DataType> types = TypesOf(Quantized8{});
  const char* ms = engine::kMicrosoftDomain;
  return {
      CpuDef(ms, "QLinearAdd", 1, 1, types, FactoryOf<QLinearBinaryKernel>()),
      CpuDef(ms, "QLinearMul", 1, 1, types, FactoryOf<QLinearBinaryKernel>()),
      CpuDef(ms, "QLinearSigmoid", 1, 1, types, FactoryOf<QLinearUnaryKernel>()),
      CpuDef(ms, "QLinearLeakyRelu", 1, 1, types, FactoryOf<QLinearUnaryKernel>()),
      CpuDef(ms, "QLinearGlobalAveragePool", 1, 1, types,
             FactoryOf<QLinearGlobalAveragePoolKernel>()),
      ConcatDef(types),
  };
}

}  // namespace inferd::kernels::cpu

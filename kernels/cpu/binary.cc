// Binary arithmetic with numpy multidirectional broadcasting (broadcast.h):
//   Add, Sub, Mul, Div  float, double and every integer type; integers wrap on overflow, integer
//                       Div truncates toward zero (x / 0 gives 0, as numpy's does).
//   Pow                 base float, double, int32, int64; exponent any numeric type (opset 12+;
//                       earlier opsets' exponent has the base's type). x^2, x^3, x^0.5, x^1 with a
//                       one-element exponent take a fast path.
//   Mod                 fmod=0: the result takes the divisor's sign (Python, numpy.mod); fmod=1:
//                       the dividend's (C fmod). Integers mod 0 give 0.
//   PRelu               slope broadcasts to X (unidirectional); opsets < 7: a 1-D slope of X's
//                       channel count applies along dimension 1.
// Opsets 1-6 of Add/Sub/Mul/Div/Pow are served too, with their broadcast/axis attributes
// (LegacyBroadcast, broadcast.h).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/binary_kernel.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Unsigned arithmetic at least as wide as int, so that integer ops wrap instead of overflowing
// (uint16 * uint16 would otherwise be a signed int multiply).
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct AddOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) + static_cast<Wide<T>>(y));
    } else {
      return x + y;
    }
  }
};

struct SubOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) - static_cast<Wide<T>>(y));
    } else {
      return x - y;
    }
  }
};

struct MulOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(x) * static_cast<Wide<T>>(y));
    } else {
      return x * y;
    }
  }
};

struct DivOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return x / y;
    } else if constexpr (std::is_signed_v<T>) {
      // y = -1 is a negation: MIN / -1 would trap.
      if (y == -1) return static_cast<T>(Wide<T>(0) - static_cast<Wide<T>>(x));
      return y == 0 ? T(0) : static_cast<T>(x / y);
    } else {
      return y == 0 ? T(0) : static_cast<T>(x / y);
    }
  }
};

// The remainder with the sign of the dividend (C fmod, C++ %).
struct FModOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, Float16>) {
      return Float16::From(std::fmod(x.ToFloat(), y.ToFloat()));
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return T(0);
      }
      return y == 0 ? T(0) : static_cast<T>(x % y);
    }
  }
};

// The remainder with the sign of the divisor (Python %, numpy.mod).
struct PyModOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, Float16>) {
      return Float16::From(PyMod(x.ToFloat(), y.ToFloat()));
    } else {
      return PyMod(x, y);
    }
  }
  template <typename T>
  static T PyMod(T x, T y) {
    const T r = FModOp()(x, y);
    if constexpr (std::is_unsigned_v<T>) {
      return r;
    } else {
      return (r != 0 && ((r < 0) != (y < 0))) ? static_cast<T>(r + y) : r;
    }
  }
};

// ---- Mod ----

using ModTypes = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                          uint16_t, uint32_t, uint64_t>;

class ModKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ModKernel>> Create(const KernelInfo& info) {
    const int64_t fmod = info.GetInt("fmod", 0);
    if (fmod != 0 && fmod != 1) return info.Error(absl::StrCat("fmod must be 0 or 1, got ", fmod));
    return std::unique_ptr<ModKernel>(new ModKernel(info, fmod == 1));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, a->dtype(), 1, node_));
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(a->shape(), b->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, a->dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Dispatch(ModTypes{}, a->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (fmod_) {
        BinaryBroadcast(a->data<T>(), a->shape(), b->data<T>(), b->shape(), out->mutable_data<T>(),
                        out_shape, ctx.threads(), FModOp());
      } else {
        BinaryBroadcast(a->data<T>(), a->shape(), b->data<T>(), b->shape(), out->mutable_data<T>(),
                        out_shape, ctx.threads(), PyModOp());
      }
      return absl::OkStatus();
    });
  }

 private:
  ModKernel(const KernelInfo& info, bool fmod) : node_(info), fmod_(fmod) {}

  const NodeLabel node_;
  const bool fmod_;
};

// ---- Pow ----

using PowBaseTypes = TypeList<float, double, int32_t, int64_t>;

// Rounds toward zero into T's range (NaN gives 0), for integer results computed in double.
template <typename T>
T SaturateToInt(double v) {
  if (!(v == v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// x^e for an integer base and exponent, by squaring (wrapping on overflow); a negative exponent
// gives the truncated reciprocal (0 unless |x| = 1).
template <typename T, typename E>
T IntPow(T x, E e) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (x == 1) return 1;
      if (x == -1) return (e % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  using U = Wide<T>;
  U result = 1, base = static_cast<U>(x);
  for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}

struct PowOp {
  template <typename T, typename E>
  T operator()(T x, E e) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(x, static_cast<T>(e));
    } else if constexpr (std::is_integral_v<E>) {
      return IntPow(x, e);
    } else {
      return SaturateToInt<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
    }
  }
};

class PowKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PowKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<PowKernel>(new PowKernel(info, LegacyBroadcast::FromInfo(info)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(Shape b_shape, legacy_.BShape(a->shape(), b->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(a->shape(), b_shape, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, a->dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Dispatch(PowBaseTypes{}, a->dtype(), node_, [&](auto base_tag) {
      using T = typename decltype(base_tag)::type;
      return Dispatch(NumericTypes{}, b->dtype(), node_, [&](auto exp_tag) {
        using E = typename decltype(exp_tag)::type;
        const T* x = a->data<T>();
        const E* e = b->data<E>();
        T* y = out->mutable_data<T>();
        if constexpr (std::is_floating_point_v<T>) {
          if (b->NumElements() == 1 &&
              FastPow(x, static_cast<double>(e[0]), y, out->NumElements(), ctx.threads())) {
            return absl::OkStatus();
          }
        }
        BinaryBroadcast(x, a->shape(), e, b_shape, y, out_shape, ctx.threads(), PowOp());
        return absl::OkStatus();
      });
    });
  }

 private:
  PowKernel(const KernelInfo& info, LegacyBroadcast legacy) : node_(info), legacy_(legacy) {}

  // The common constant exponents as plain vectorized loops; false for any other exponent.
  template <typename T>
  static bool FastPow(const T* x, double e, T* y, int64_t n, engine::ThreadPool& pool) {
    if (e == 2.0) {
      UnaryMap(x, y, n, pool, [](T v) { return v * v; });
    } else if (e == 3.0) {
      UnaryMap(x, y, n, pool, [](T v) { return v * v * v; });
    } else if (e == 1.0) {
      UnaryMap(x, y, n, pool, [](T v) { return v; });
    } else if (e == 0.5) {
      // pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf where sqrt gives -0 and NaN.
      UnaryMap(x, y, n, pool, [](T v) {
        return v == -std::numeric_limits<T>::infinity() ? -v : std::sqrt(v) + T(0);
      });
    } else {
      return false;
    }
    return true;
  }

  const NodeLabel node_;
  const LegacyBroadcast legacy_;
};

// ---- PRelu ----

using PReluTypes = TypeList<float, double, int32_t, int64_t>;

struct PReluOp {
  template <typename T>
  T operator()(T x, T slope) const {
    return x < T(0) ? MulOp()(x, slope) : x;
  }
};

class PReluKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PReluKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<PReluKernel>(new PReluKernel(info, info.opset() < 7));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* slope, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*slope, x->dtype(), 1, node_));
    const Shape& xs = x->shape();
    Shape slope_shape = slope->shape();
    // Opsets < 7: a slope of C values is per channel (dimension 1).
    if (per_channel_ && slope_shape.rank() == 1 && slope_shape[0] != 1 && xs.rank() >= 2 &&
        slope_shape[0] == xs[1]) {
      slope_shape.resize(xs.rank() - 1, 1);
    }
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(xs, slope_shape, node_));
    if (out_shape != xs) {
      return node_.InvalidArgument(absl::StrCat("slope of shape ", slope->shape().ToString(),
                                                " does not broadcast to X's shape ",
                                                xs.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, x->dtype(), xs));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Dispatch(PReluTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      BinaryBroadcast(x->data<T>(), xs, slope->data<T>(), slope_shape, out->mutable_data<T>(), xs,
                      ctx.threads(), PReluOp());
      return absl::OkStatus();
    });
  }

 private:
  PReluKernel(const KernelInfo& info, bool per_channel) : node_(info), per_channel_(per_channel) {}

  const NodeLabel node_;
  const bool per_channel_;
};

}  // namespace

std::vector<engine::KernelDef> BinaryKernelDefs() {
  const std::vector<DataType> numeric = TypesOf(NumericTypes{});
  return {CpuDef(engine::kOnnxDomain, "Add", 1, kMaxOpset, numeric,
                 FactoryOf<BinaryKernel<AddOp, NumericTypes>>()),
          CpuDef(engine::kOnnxDomain, "Sub", 1, kMaxOpset, numeric,
                 FactoryOf<BinaryKernel<SubOp, NumericTypes>>()),
          CpuDef(engine::kOnnxDomain, "Mul", 1, kMaxOpset, numeric,
                 FactoryOf<BinaryKernel<MulOp, NumericTypes>>()),
          CpuDef(engine::kOnnxDomain, "Div", 1, kMaxOpset, numeric,
                 FactoryOf<BinaryKernel<DivOp, NumericTypes>>()),
          CpuDef(engine::kOnnxDomain, "Pow", 1, kMaxOpset, TypesOf(PowBaseTypes{}),
                 FactoryOf<PowKernel>()),
          CpuDef(engine::kOnnxDomain, "Mod", 10, kMaxOpset, TypesOf(ModTypes{}),
                 FactoryOf<ModKernel>()),
          CpuDef(engine::kOnnxDomain, "PRelu", 1, kMaxOpset, TypesOf(PReluTypes{}),
                 FactoryOf<PReluKernel>())};
}

}  // namespace inferd::kernels::cpu

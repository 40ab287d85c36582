// Unary math, elementwise, same shape:
//   Neg, Abs, Sign                     float, double, every integer type (Neg: signed ones);
//                                      integers wrap (Neg/Abs of the minimum stay the minimum)
//   Sqrt, Reciprocal, Exp, Log, Erf,   float, double; float32 Exp/Tanh/Sigmoid/Erf use the
//   Tanh, Sigmoid, Sin, Cos            vectorized approximations of fast_math.h (relative
//                                      error < 1e-6), the rest the C library
//   Floor, Ceil, Round                 float, double; Round is half to even
//   IsNaN                              float, double, float16 -> bool
//   Not                                bool
// Every ONNX version from the first (opset 1, 6, 7, 9 or 11) to 17 is served: later versions only
// added element types.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "engine/domain.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/unary_kernel.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;

template <typename T>
using WideUnsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct NegFn : SimpleUnary<NegFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(WideUnsigned<T>(0) - static_cast<WideUnsigned<T>>(x));
    } else {
      return -x;
    }
  }
};

struct AbsFn : SimpleUnary<AbsFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<T>) {
      return x < 0 ? NegFn()(x) : x;
    } else {
      return x;
    }
  }
};

struct SignFn : SimpleUnary<SignFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);  // 0 and NaN stay
    } else {
      return static_cast<T>((x > T(0)) - (x < T(0)));
    }
  }
};

struct SqrtFn : SimpleUnary<SqrtFn> {
  template <typename T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
};

struct ReciprocalFn : SimpleUnary<ReciprocalFn> {
  template <typename T>
  T operator()(T x) const {
    return T(1) / x;
  }
};

struct ExpFn : SimpleUnary<ExpFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return FastExp(x);
    } else {
      return std::exp(x);
    }
  }
};

struct LogFn : SimpleUnary<LogFn> {
  template <typename T>
  T operator()(T x) const {
    return std::log(x);
  }
};

struct ErfFn : SimpleUnary<ErfFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return FastErf(x);
    } else {
      return std::erf(x);
    }
  }
};

struct TanhFn : SimpleUnary<TanhFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return FastTanh(x);
    } else {
      return std::tanh(x);
    }
  }
};

struct SigmoidFn : SimpleUnary<SigmoidFn> {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return FastSigmoid(x);
    } else {
      return T(1) / (T(1) + std::exp(-x));
    }
  }
};

struct SinFn : SimpleUnary<SinFn> {
  template <typename T>
  T operator()(T x) const {
    return std::sin(x);
  }
};

struct CosFn : SimpleUnary<CosFn> {
  template <typename T>
  T operator()(T x) const {
    return std::cos(x);
  }
};

struct FloorFn : SimpleUnary<FloorFn> {
  template <typename T>
  T operator()(T x) const {
    return std::floor(x);
  }
};

struct CeilFn : SimpleUnary<CeilFn> {
  template <typename T>
  T operator()(T x) const {
    return std::ceil(x);
  }
};

struct RoundFn : SimpleUnary<RoundFn> {
  template <typename T>
  T operator()(T x) const {
    return std::nearbyint(x);  // the default rounding mode: half to even
  }
};

struct IsNaNFn : SimpleUnary<IsNaNFn> {
  template <typename T>
  using Out = bool;
  template <typename T>
  bool operator()(T x) const {
    if constexpr (std::is_same_v<T, Float16>) {
      return (x.bits & 0x7fffu) > 0x7c00u;
    } else {
      return x != x;
    }
  }
};

struct NotFn : SimpleUnary<NotFn> {
  bool operator()(bool x) const { return !x; }
};

template <typename Fn, typename Types>
engine::KernelDef Def(const char* op, int since) {
  return CpuDef(engine::kOnnxDomain, op, since, kMaxOpset, TypesOf(Types{}),
                FactoryOf<UnaryKernel<Fn, Types>>());
}

}  // namespace

std::vector<engine::KernelDef> UnaryKernelDefs() {
  using Signed = SignedNumericTypes;
  return {Def<NegFn, Signed>("Neg", 1),
          Def<AbsFn, NumericTypes>("Abs", 1),
          Def<SignFn, NumericTypes>("Sign", 9),
          Def<SqrtFn, FloatTypes>("Sqrt", 1),
          Def<ReciprocalFn, FloatTypes>("Reciprocal", 1),
          Def<ExpFn, FloatTypes>("Exp", 1),
          Def<LogFn, FloatTypes>("Log", 1),
          Def<ErfFn, FloatTypes>("Erf", 9),
          Def<TanhFn, FloatTypes>("Tanh", 1),
          Def<SigmoidFn, FloatTypes>("Sigmoid", 1),
          Def<SinFn, FloatTypes>("Sin", 7),
          Def<CosFn, FloatTypes>("Cos", 7),
          Def<FloorFn, FloatTypes>("Floor", 1),
          Def<CeilFn, FloatTypes>("Ceil", 1),
          Def<RoundFn, FloatTypes>("Round", 11),
          Def<IsNaNFn, TypeList<float, double, Float16>>("IsNaN", 9),
          Def<NotFn, TypeList<bool>>("Not", 1)};
}

}  // namespace inferd::kernels::cpu

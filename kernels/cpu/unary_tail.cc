// The elementwise tail, same shape in and out (own code, the C library's math in double where
// float would lose accuracy):
//   Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh   float, double (opsets 7 / 9 on)
//   Softsign      x / (1 + |x|)                               float, double
//   ThresholdedRelu  alpha (1): x > alpha ? x : 0             float, double
//   Celu          alpha (1): max(0, x) + min(0, alpha (e^(x/alpha) - 1))   float, double
//   Mish          x tanh(log(1 + e^x))                        float, double
//   Gelu          approximate "none" (erf) or "tanh"          float, double (opset 20)
//   Shrink        lambd (0.5), bias (0): x < -lambd ? x + bias : x > lambd ? x - bias : 0,
//                 every numeric type (integers: computed in double, then converted back)
//   IsInf         detect_positive, detect_negative (1, 1)    float, double -> bool
//   BitwiseNot    every integer type (opset 18)
// Attributes are read once at creation; kernels are immutable: thread-safe.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/unary_kernel.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelInfo;

using IntegerTypes =
    TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

#define INFERD_LIBM_UNARY(Name, expr) \
  struct Name : SimpleUnary<Name> {   \
    template <typename T>             \
    T operator()(T x) const {         \
      return static_cast<T>(expr);    \
    }                                 \
  };

INFERD_LIBM_UNARY(TanFn, std::tan(x))
INFERD_LIBM_UNARY(AsinFn, std::asin(x))
INFERD_LIBM_UNARY(AcosFn, std::acos(x))
INFERD_LIBM_UNARY(AtanFn, std::atan(x))
INFERD_LIBM_UNARY(SinhFn, std::sinh(x))
INFERD_LIBM_UNARY(CoshFn, std::cosh(x))
INFERD_LIBM_UNARY(AsinhFn, std::asinh(x))
INFERD_LIBM_UNARY(AcoshFn, std::acosh(x))
INFERD_LIBM_UNARY(AtanhFn, std::atanh(x))
INFERD_LIBM_UNARY(SoftsignFn, x / (T(1) + std::fabs(x)))
#undef INFERD_LIBM_UNARY

struct MishFn : SimpleUnary<MishFn> {
  template <typename T>
  T operator()(T x) const {
    // softplus(x) = max(x, 0) + log1p(e^-|x|), without overflow.
    const double xd = static_cast<double>(x);
    const double sp = (xd > 0 ? xd : 0.0) + std::log1p(std::exp(-std::fabs(xd)));
    return static_cast<T>(xd * std::tanh(sp));
  }
};

struct ThresholdedReluFn {
  template <typename T>
  using Out = T;
  float alpha;
  static absl::StatusOr<ThresholdedReluFn> FromInfo(const KernelInfo& info) {
    return ThresholdedReluFn{info.GetFloat("alpha", 1.0f)};
  }
  template <typename T>
  T operator()(T x) const {
    return x > static_cast<T>(alpha) ? x : T(0);
  }
};

struct CeluFn {
  template <typename T>
  using Out = T;
  float alpha;
  static absl::StatusOr<CeluFn> FromInfo(const KernelInfo& info) {
    const float alpha = info.GetFloat("alpha", 1.0f);
    if (alpha == 0.0f || !std::isfinite(alpha)) {
      return info.Error(absl::StrCat("alpha must be finite and non-zero, got ", alpha));
    }
    return CeluFn{alpha};
  }
  template <typename T>
  T operator()(T x) const {
    const double a = alpha, xd = static_cast<double>(x);
    return static_cast<T>((xd > 0 ? xd : 0.0) + std::min(0.0, a * std::expm1(xd / a)));
  }
};

struct GeluFn {
  template <typename T>
  using Out = T;
  bool tanh_approx;
  static absl::StatusOr<GeluFn> FromInfo(const KernelInfo& info) {
    const std::string mode = info.GetString("approximate", "none");
    if (mode != "none" && mode != "tanh") {
      return info.Error(absl::StrCat("approximate must be 'none' or 'tanh', got '", mode, "'"));
    }
    return GeluFn{mode == "tanh"};
  }
  template <typename T>
  T operator()(T x) const {
    const double xd = static_cast<double>(x);
    if (tanh_approx) {
      constexpr double kSqrt2OverPi = 0.79788456080286535588;
      return static_cast<T>(0.5 * xd *
                            (1.0 + std::tanh(kSqrt2OverPi * (xd + 0.044715 * xd * xd * xd))));
    }
    constexpr double kInvSqrt2 = 0.70710678118654752440;
    return static_cast<T>(0.5 * xd * (1.0 + std::erf(xd * kInvSqrt2)));
  }
};

struct ShrinkFn {
  template <typename T>
  using Out = T;
  float lambd, bias;
  static absl::StatusOr<ShrinkFn> FromInfo(const KernelInfo& info) {
    return ShrinkFn{info.GetFloat("lambd", 0.5f), info.GetFloat("bias", 0.0f)};
  }
  template <typename T>
  T operator()(T x) const {
    const double xd = static_cast<double>(x), l = lambd, b = bias;
    if (xd < -l) return static_cast<T>(xd + b);
    if (xd > l) return static_cast<T>(xd - b);
    return T(0);
  }
};

struct IsInfFn {
  template <typename T>
  using Out = bool;
  bool positive, negative;
  static absl::StatusOr<IsInfFn> FromInfo(const KernelInfo& info) {
    return IsInfFn{info.GetInt("detect_positive", 1) != 0, info.GetInt("detect_negative", 1) != 0};
  }
  template <typename T>
  bool operator()(T x) const {
    constexpr T kInf = std::numeric_limits<T>::infinity();
    return (positive && x == kInf) || (negative && x == -kInf);
  }
};

struct BitwiseNotFn : SimpleUnary<BitwiseNotFn> {
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(~x);
  }
};

template <typename Fn, typename Types>
engine::KernelDef Def(const char* op, int since) {
  return CpuDef(engine::kOnnxDomain, op, since, kMaxOpset, TypesOf(Types{}),
                FactoryOf<UnaryKernel<Fn, Types>>());
}

}  // namespace

std::vector<engine::KernelDef> UnaryTailKernelDefs() {
  return {Def<TanFn, FloatTypes>("Tan", 7),
          Def<AsinFn, FloatTypes>("Asin", 7),
          Def<AcosFn, FloatTypes>("Acos", 7),
          Def<AtanFn, FloatTypes>("Atan", 7),
          Def<SinhFn, FloatTypes>("Sinh", 9),
          Def<CoshFn, FloatTypes>("Cosh", 9),
          Def<AsinhFn, FloatTypes>("Asinh", 9),
          Def<AcoshFn, FloatTypes>("Acosh", 9),
          Def<AtanhFn, FloatTypes>("Atanh", 9),
          Def<SoftsignFn, FloatTypes>("Softsign", 1),
          Def<ThresholdedReluFn, FloatTypes>("ThresholdedRelu", 10),
          Def<CeluFn, TypeList<float>>("Celu", 12),
          Def<MishFn, FloatTypes>("Mish", 18),
          Def<GeluFn, FloatTypes>("Gelu", 20),
          Def<ShrinkFn, NumericTypes>("Shrink", 9),
          Def<IsInfFn, FloatTypes>("IsInf", 10),
          Def<BitwiseNotFn, IntegerTypes>("BitwiseNot", 18)};
}

}  // namespace inferd::kernels::cpu

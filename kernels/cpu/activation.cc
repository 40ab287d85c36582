// Activations, elementwise, same shape:
//   Relu         float, double, int8..int64 (integers from opset 14; served for every version)
//   LeakyRelu    alpha (0.01)                        x < 0 ? alpha x : x
//   Elu          alpha (1)                           x < 0 ? alpha (e^x - 1) : x
//   Selu         alpha (1.6732...), gamma (1.0507...) gamma (x <= 0 ? alpha (e^x - 1) : x)
//   HardSigmoid  alpha (0.2), beta (0.5)             max(0, min(1, alpha x + beta))
//   HardSwish                                        x max(0, min(1, (x + 3) / 6))
//   Softplus                                         log(1 + e^x), computed without overflow
//   Clip         opsets 6-10: min/max attributes; 11+: optional scalar inputs min and max (any
//                numeric type from 12); NaN stays NaN.
// All float and double except Relu and Clip; attributes are read once at creation.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/unary_kernel.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

// e^x - 1 without cancellation near 0 (float: vectorized, fast_math.h).
template <typename T>
T ExpM1(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return FastExpM1(x);
  } else {
    return std::expm1(x);
  }
}

struct ReluFn : SimpleUnary<ReluFn> {
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? T(0) : x;  // NaN stays
  }
};

struct LeakyReluFn {
  template <typename T>
  using Out = T;
  float alpha;
  static absl::StatusOr<LeakyReluFn> FromInfo(const KernelInfo& info) {
    return LeakyReluFn{info.GetFloat("alpha", 0.01f)};
  }
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? static_cast<T>(alpha) * x : x;
  }
};

struct EluFn {
  template <typename T>
  using Out = T;
  float alpha;
  static absl::StatusOr<EluFn> FromInfo(const KernelInfo& info) {
    return EluFn{info.GetFloat("alpha", 1.0f)};
  }
  template <typename T>
  T operator()(T x) const {
    return x < T(0) ? static_cast<T>(alpha) * ExpM1(x) : x;
  }
};

struct SeluFn {
  template <typename T>
  using Out = T;
  float alpha, gamma;
  static absl::StatusOr<SeluFn> FromInfo(const KernelInfo& info) {
    return SeluFn{info.GetFloat("alpha", 1.67326319217681884765625f),
                  info.GetFloat("gamma", 1.05070102214813232421875f)};
  }
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(gamma) * (x <= T(0) ? static_cast<T>(alpha) * ExpM1(x) : x);
  }
};

struct HardSigmoidFn {
  template <typename T>
  using Out = T;
  float alpha, beta;
  static absl::StatusOr<HardSigmoidFn> FromInfo(const KernelInfo& info) {
    return HardSigmoidFn{info.GetFloat("alpha", 0.2f), info.GetFloat("beta", 0.5f)};
  }
  template <typename T>
  T operator()(T x) const {
    const T v = static_cast<T>(alpha) * x + static_cast<T>(beta);
    return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
  }
};

struct HardSwishFn : SimpleUnary<HardSwishFn> {
  template <typename T>
  T operator()(T x) const {
    const T v = (x + T(3)) * static_cast<T>(1.0 / 6.0);  // exact near -3, unlike x / 6 + 0.5
    return x * (v < T(0) ? T(0) : (v > T(1) ? T(1) : v));
  }
};

struct SoftplusFn : SimpleUnary<SoftplusFn> {
  template <typename T>
  T operator()(T x) const {
    // log(1 + e^x) = max(x, 0) + log(1 + e^-|x|).
    const T ax = std::fabs(x);
    return (x > T(0) ? x : T(0)) + std::log1p(std::exp(-ax));
  }
};

// ---- Clip ----

class ClipKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ClipKernel>> Create(const KernelInfo& info) {
    const bool from_inputs = info.opset() >= 11;
    const float lo = info.GetFloat("min", std::numeric_limits<float>::lowest());
    const float hi = info.GetFloat("max", std::numeric_limits<float>::max());
    return std::unique_ptr<ClipKernel>(new ClipKernel(info, from_inputs, lo, hi));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    return Dispatch(NumericTypes{}, x->dtype(), node_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (from_inputs_) {
        INFERD_RETURN_IF_ERROR(Bound(ctx, 1, x->dtype(), &lo));
        INFERD_RETURN_IF_ERROR(Bound(ctx, 2, x->dtype(), &hi));
      } else if constexpr (std::is_floating_point_v<T>) {
        lo = static_cast<T>(attr_lo_);
        hi = static_cast<T>(attr_hi_);
      }
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
      UnaryMap(x->data<T>(), y->mutable_data<T>(), x->NumElements(), ctx.threads(), [=](T v) {
        const T low = v < lo ? lo : v;
        return low > hi ? hi : low;
      });
      return absl::OkStatus();
    });
  }

 private:
  ClipKernel(const KernelInfo& info, bool from_inputs, float lo, float hi)
      : node_(info), from_inputs_(from_inputs), attr_lo_(lo), attr_hi_(hi) {}

  // Optional input `i`, a one-element tensor of X's type, read into *value when present.
  template <typename T>
  absl::Status Bound(const KernelContext& ctx, int i, engine::DataType type, T* value) const {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) return absl::OkStatus();
    INFERD_RETURN_IF_ERROR(CheckType(*t, type, i, node_));
    if (t->NumElements() != 1) {
      return node_.InvalidArgument(absl::StrCat(
          i == 1 ? "min" : "max", " must be a scalar, got shape ", t->shape().ToString()));
    }
    *value = t->data<T>()[0];
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const bool from_inputs_;
  const float attr_lo_, attr_hi_;
};

template <typename Fn, typename Types>
engine::KernelDef Def(const char* op, int since) {
  return CpuDef(engine::kOnnxDomain, op, since, kMaxOpset, TypesOf(Types{}),
                FactoryOf<UnaryKernel<Fn, Types>>());
}

}  // namespace

std::vector<engine::KernelDef> ActivationKernelDefs() {
  return {Def<ReluFn, SignedNumericTypes>("Relu", 1),
          Def<LeakyReluFn, FloatTypes>("LeakyRelu", 1),
          Def<EluFn, FloatTypes>("Elu", 1),
          Def<SeluFn, FloatTypes>("Selu", 1),
          Def<HardSigmoidFn, FloatTypes>("HardSigmoid", 1),
          Def<HardSwishFn, FloatTypes>("HardSwish", 14),
          Def<SoftplusFn, FloatTypes>("Softplus", 1),
          CpuDef(engine::kOnnxDomain, "Clip", 1, kMaxOpset, TypesOf(NumericTypes{}),
                 FactoryOf<ClipKernel>())};
}

}  // namespace inferd::kernels::cpu

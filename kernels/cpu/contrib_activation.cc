// ONNX Runtime's contrib activations (com.microsoft, version 1), float32, own code:
//   Gelu       x * (1 + erf(x / sqrt 2)) / 2
//   FastGelu   the tanh form x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 of x + bias,
//              bias optional, broadcast along the last dim
//   BiasGelu   Gelu(A + B), B [last dim of A]
//   QuickGelu  x * sigmoid(alpha x), alpha 1.702 by default
//   BiasAdd    X + bias + skip: X and skip [B, S, C], bias [C]
// ONNX's own Gelu (opset 20) is unary_tail.cc's.
// The vectorizable erf / tanh / sigmoid of fast_math.h; parallel over rows of the last dim.
#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kGrain = 16 * 1024;  // elements per thread, at least

enum class Act { kGelu, kFastGelu, kBiasGelu, kQuickGelu, kBiasAdd };

// One row of n values: y = f(x + bias) (bias may be null), or x + bias + skip for BiasAdd.
inline void ActivateRow(Act act, float alpha, const float* x, const float* bias, const float* skip,
                        float* y, int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  switch (act) {
    case Act::kGelu:
    case Act::kBiasGelu:
      if (bias != nullptr) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) {
          const float v = x[i] + bias[i];
          y[i] = 0.5f * v * (1.0f + FastErf(v * kInvSqrt2));
        }
      } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + FastErf(x[i] * kInvSqrt2));
      }
      return;
    case Act::kFastGelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        const float v = bias != nullptr ? x[i] + bias[i] : x[i];
        y[i] = 0.5f * v * (1.0f + FastTanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
      }
      return;
    case Act::kQuickGelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * FastSigmoid(alpha * x[i]);
      return;
    case Act::kBiasAdd:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] + bias[i] + skip[i];
      return;
  }
}

class ContribActivationKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ContribActivationKernel>> Create(const KernelInfo& info) {
    const std::string& op = info.op_type();
    Act act = Act::kGelu;
    if (op == "FastGelu") act = Act::kFastGelu;
    if (op == "BiasGelu") act = Act::kBiasGelu;
    if (op == "QuickGelu") act = Act::kQuickGelu;
    if (op == "BiasAdd") act = Act::kBiasAdd;
    const float alpha = info.GetFloat("alpha", 1.702f);
    if (!std::isfinite(alpha)) return info.Error("alpha must be finite");
    return std::unique_ptr<ContribActivationKernel>(new ContribActivationKernel(info, act, alpha));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& shape = x->shape();
    const Tensor* bias = nullptr;
    const Tensor* skip = nullptr;
    if (act_ == Act::kBiasGelu || act_ == Act::kBiasAdd) {
      INFERD_ASSIGN_OR_RETURN(bias, RequiredInput(ctx, 1, node_));
    } else if (act_ == Act::kFastGelu && ctx.num_inputs() > 1) {
      bias = ctx.input(1);
    }
    if (act_ == Act::kBiasAdd) {
      INFERD_ASSIGN_OR_RETURN(skip, RequiredInput(ctx, 2, node_));
      if (shape.rank() != 3) {
        return node_.InvalidArgument(absl::StrCat("X must be [B, S, C], got ", shape.ToString()));
      }
      INFERD_RETURN_IF_ERROR(CheckType(*skip, DataType::kFloat32, 2, node_));
      if (skip->shape() != shape) {
        return node_.InvalidArgument(absl::StrCat("skip must have X's shape ", shape.ToString(),
                                                  ", got ", skip->shape().ToString()));
      }
    }
    if (shape.rank() == 0 && bias != nullptr) {
      return node_.InvalidArgument("X must have rank >= 1 when a bias is given");
    }
    const int64_t d = shape.rank() == 0 ? 1 : shape[shape.rank() - 1];
    if (bias != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 1, node_));
      if (bias->shape().rank() != 1 || bias->shape()[0] != d) {
        return node_.InvalidArgument(
            absl::StrCat("bias must be [", d, "] (X's last dim), got ", bias->shape().ToString()));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    const int64_t n = shape.NumElements();
    if (n == 0) return absl::OkStatus();
    const float* in = x->data<float>();
    const float* b = bias != nullptr ? bias->data<float>() : nullptr;
    const float* s = skip != nullptr ? skip->data<float>() : nullptr;
    float* out = y->mutable_data<float>();
    const int64_t rows = n / d;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        ActivateRow(act_, alpha_, in + r * d, b, s != nullptr ? s + r * d : nullptr, out + r * d,
                    d);
      }
    });
    return absl::OkStatus();
  }

 private:
  ContribActivationKernel(const KernelInfo& info, Act act, float alpha)
      : node_(info), act_(act), alpha_(alpha) {}

  const NodeLabel node_;
  const Act act_;
  const float alpha_;
};

}  // namespace

std::vector<engine::KernelDef> ContribActivationKernelDefs() {
  std::vector<engine::KernelDef> defs;
  for (const char* op : {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd"}) {
    defs.push_back(CpuDef(engine::kMicrosoftDomain, op, 1, 1, {DataType::kFloat32},
                          FactoryOf<ContribActivationKernel>()));
  }
  // ONNX's own Gelu (opset 20) is unary_tail.cc's (float and double).
  return defs;
}

}  // namespace inferd::kernels::cpu

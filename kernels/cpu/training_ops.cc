// The optimizers of the ai.onnx.preview.training domain (opset 1): Adagrad, Adam and Momentum.
// Each takes R (learning rate, scalar) and T (update count, int64 scalar), then n tensors to
// optimize and, per tensor, its gradient and state, and returns the updated tensors and states:
//
//   Adagrad  (X..., G..., H...)        -> (X_new..., H_new...)
//     r = R / (1 + T * decay_factor), g = norm_coefficient * X + G, H_new = H + g^2,
//     X_new = X - r * g / (sqrt(H_new) + epsilon)
//   Adam     (X..., G..., V..., H...)  -> (X_new..., V_new..., H_new...)
//     g as above, V_new = alpha * V + (1 - alpha) * g, H_new = beta * H + (1 - beta) * g^2,
//     r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R,
//     X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon))
//   Momentum (X..., G..., V...)        -> (X_new..., V_new...)
//     g as above, V_new = alpha * V + (T > 0 ? beta : 1) * g,
//     X_new = X - R * V_new ("standard") or X - R * (g + alpha * V_new) ("nesterov")
//
// Elementwise and deterministic; float32 or float64 (R and the tensors of one type). Each X, G
// and state must have the same shape.
#include <cmath>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

enum class Optimizer { kAdagrad, kAdam, kMomentum };

struct Attributes {
  float decay_factor = 0, epsilon = 1e-6f, norm_coefficient = 0, norm_coefficient_post = 0;
  float alpha = 0.9f, beta = 0.999f;
  bool nesterov = false;
};

template <Optimizer kOpt>
class OptimizerKernel final : public engine::OpKernel {
 public:
  // Tensor groups after R and T: X, G and the states.
  static constexpr int kGroups = kOpt == Optimizer::kAdam ? 4 : 3;

  static absl::StatusOr<std::unique_ptr<OptimizerKernel>> Create(const KernelInfo& info) {
    const NodeLabel node(info);
    const int tensors = info.num_inputs() - 2;
    if (tensors <= 0 || tensors % kGroups != 0) {
      return node.InvalidArgument(absl::StrCat("expected R, T and ", kGroups,
                                               " groups of n tensors, got ", info.num_inputs(),
                                               " inputs"));
    }
    const int n = tensors / kGroups;
    if (info.num_outputs() != (kGroups - 1) * n) {
      return node.InvalidArgument(absl::StrCat("expected ", (kGroups - 1) * n, " outputs for ", n,
                                               " optimized tensors, got ", info.num_outputs()));
    }
    Attributes a;
    a.norm_coefficient = info.GetFloat("norm_coefficient", 0.0f);
    if (kOpt == Optimizer::kAdagrad) {
      a.decay_factor = info.GetFloat("decay_factor", 0.0f);
      a.epsilon = info.GetFloat("epsilon", 1e-6f);
    } else if (kOpt == Optimizer::kAdam) {
      a.alpha = info.GetFloat("alpha", 0.9f);
      a.beta = info.GetFloat("beta", 0.999f);
      a.epsilon = info.GetFloat("epsilon", 1e-6f);
      a.norm_coefficient_post = info.GetFloat("norm_coefficient_post", 0.0f);
    } else {
      for (const char* required : {"alpha", "beta", "norm_coefficient", "mode"}) {
        if (!info.HasAttribute(required)) {
          return node.InvalidArgument(absl::StrCat("attribute '", required, "' is required"));
        }
      }
      a.alpha = info.GetFloat("alpha", 0.0f);
      a.beta = info.GetFloat("beta", 0.0f);
      const std::string mode = info.GetString("mode", "");
      if (mode != "standard" && mode != "nesterov") {
        return node.InvalidArgument(
            absl::StrCat("mode must be \"standard\" or \"nesterov\", got \"", mode, "\""));
      }
      a.nesterov = mode == "nesterov";
    }
    return std::unique_ptr<OptimizerKernel>(new OptimizerKernel(info, n, a));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* r, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, 1, node_));
    if (r->NumElements() != 1 || r->shape().rank() > 1) {
      return node_.InvalidArgument(
          absl::StrCat("R must be a scalar, got shape ", r->shape().ToString()));
    }
    if (t->dtype() != DataType::kInt64 || t->NumElements() != 1 || t->shape().rank() > 1) {
      return node_.InvalidArgument(absl::StrCat("T must be an int64 scalar, got ",
                                                engine::DataTypeName(t->dtype()), " ",
                                                t->shape().ToString()));
    }
    const int64_t step = t->data<int64_t>()[0];
    if (r->dtype() == DataType::kFloat32) return Run<float>(ctx, *r, step);
    if (r->dtype() == DataType::kFloat64) return Run<double>(ctx, *r, step);
    return node_.Unimplemented(
        absl::StrCat("R of type ", engine::DataTypeName(r->dtype()), " is not supported"));
  }

 private:
  OptimizerKernel(const KernelInfo& info, int n, Attributes a) : node_(info), n_(n), a_(a) {}

  template <typename F>
  absl::Status Run(KernelContext& ctx, const Tensor& r_tensor, int64_t step) const {
    const F r = r_tensor.data<F>()[0];
    const F norm = a_.norm_coefficient, eps = a_.epsilon, alpha = a_.alpha, beta = a_.beta;
    // The learning rate this step (Adagrad's decay, Adam's bias correction).
    F rate = r;
    if (kOpt == Optimizer::kAdagrad) rate = r / (F(1) + static_cast<F>(step) * a_.decay_factor);
    if (kOpt == Optimizer::kAdam && step > 0) {
      const F s = static_cast<F>(step);
      rate = r * std::sqrt(F(1) - std::pow(beta, s)) / (F(1) - std::pow(alpha, s));
    }
    const F momentum_beta = step > 0 ? beta : F(1);
    for (int k = 0; k < n_; ++k) {
      // Inputs of tensor k: X, G, then the states; all of X's shape and R's type.
      const Tensor* in[4] = {nullptr, nullptr, nullptr, nullptr};
      for (int g = 0; g < kGroups; ++g) {
        INFERD_ASSIGN_OR_RETURN(in[g], RequiredInput(ctx, 2 + g * n_ + k, node_));
        INFERD_RETURN_IF_ERROR(CheckType(*in[g], r_tensor.dtype(), 2 + g * n_ + k, node_));
        if (in[g]->shape() != in[0]->shape()) {
          return node_.InvalidArgument(absl::StrCat(
              "input ", 2 + g * n_ + k, " has shape ", in[g]->shape().ToString(),
              ", expected the shape of input ", 2 + k, " ", in[0]->shape().ToString()));
        }
      }
      // Outputs of tensor k: X_new, then the new states.
      F* out[3] = {nullptr, nullptr, nullptr};
      for (int g = 0; g < kGroups - 1; ++g) {
        INFERD_ASSIGN_OR_RETURN(Tensor * o,
                                ctx.MakeOutputTensor(g * n_ + k, r_tensor.dtype(), in[0]->shape()));
        out[g] = o->mutable_data<F>();
      }
      const F* x = in[0]->data<F>();
      const F* grad = in[1]->data<F>();
      const F* s1 = in[2]->data<F>();
      const F* s2 = kGroups == 4 ? in[3]->data<F>() : nullptr;
      const Attributes& a = a_;
      ctx.threads().ParallelFor(in[0]->NumElements(), 16384, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const F g = norm * x[i] + grad[i];
          if constexpr (kOpt == Optimizer::kAdagrad) {
            const F h = s1[i] + g * g;
            out[1][i] = h;
            out[0][i] = x[i] - rate * g / (std::sqrt(h) + eps);
          } else if constexpr (kOpt == Optimizer::kAdam) {
            const F v = alpha * s1[i] + (F(1) - alpha) * g;
            const F h = beta * s2[i] + (F(1) - beta) * g * g;
            out[1][i] = v;
            out[2][i] = h;
            out[0][i] = (F(1) - static_cast<F>(a.norm_coefficient_post)) *
                        (x[i] - rate * v / (std::sqrt(h) + eps));
          } else {
            const F v = alpha * s1[i] + momentum_beta * g;
            out[1][i] = v;
            out[0][i] = a.nesterov ? x[i] - rate * (g + alpha * v) : x[i] - rate * v;
          }
        }
      });
    }
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int n_;  // tensors optimized
  const Attributes a_;
};

}  // namespace

std::vector<engine::KernelDef> TrainingKernelDefs() {
  const std::vector<DataType> types = {DataType::kFloat32, DataType::kFloat64};
  return {
      CpuDef(kTrainingDomain, "Adagrad", 1, 1, types,
             FactoryOf<OptimizerKernel<Optimizer::kAdagrad>>()),
      CpuDef(kTrainingDomain, "Adam", 1, 1, types, FactoryOf<OptimizerKernel<Optimizer::kAdam>>()),
      CpuDef(kTrainingDomain, "Momentum", 1, 1, types,
             FactoryOf<OptimizerKernel<Optimizer::kMomentum>>()),
  };
}

}  // namespace inferd::kernels::cpu

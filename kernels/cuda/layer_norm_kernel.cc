// Row normalizations on CUDA (float32), the semantics of the CPU kernels (layer_norm.cc,
// contrib_norm.cc); the arithmetic is in layer_norm.cu. No host inputs.
//   LayerNormalization (opset 17): rows of X flattened at `axis`; Scale and the optional B with
//     as many elements as the normalized shape (broadcast ones are UNIMPLEMENTED here); optional
//     Mean and InvStdDev outputs (X's shape with 1s from `axis` on). stash_type 1 only.
//   SimplifiedLayerNormalization (default domain, as ONNX Runtime registers it): RMS over the dims
//     from `axis` on, times scale; optional inv_std_var.
//   com.microsoft SkipLayerNormalization / SkipSimplifiedLayerNormalization: s = input + skip
//     (+ bias) over the hidden size H, then LayerNorm (gamma, beta?) or RMS (gamma); optional
//     outputs mean, inv_std_var ([..., 1]) and input_skip_bias_sum (s).
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/normalize.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Input `index` as `d` float32 values for the row, or an error naming it.
absl::StatusOr<const float*> RowVector(const Tensor& t, int64_t d, int index,
                                       const CudaNode& node) {
  INFERD_RETURN_IF_ERROR(cpu::CheckType(t, DataType::kFloat32, index, node));
  if (t.NumElements() != d) {
    return node.Unimplemented(absl::StrCat("input ", index, " has shape ", t.shape().ToString(),
                                           "; the CUDA kernel takes ", d,
                                           " values (the normalized size), not a broadcast"));
  }
  return t.data<float>();
}

// An optional float32 output `slot` of `shape`, or nullptr when the graph does not use it.
absl::StatusOr<float*> OptionalOutput(KernelContext& ctx, int slot, const Shape& shape) {
  if (ctx.num_outputs() <= slot || !ctx.output_wanted(slot)) return nullptr;
  INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(slot, DataType::kFloat32, shape));
  return t->mutable_data<float>();
}

enum class Form { kLayerNorm, kSimplified, kSkip, kSkipSimplified };

class LayerNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LayerNormKernel>> Create(const KernelInfo& info) {
    Form form = Form::kLayerNorm;
    if (info.op_type() == "SimplifiedLayerNormalization") form = Form::kSimplified;
    if (info.op_type() == "SkipLayerNormalization") form = Form::kSkip;
    if (info.op_type() == "SkipSimplifiedLayerNormalization") form = Form::kSkipSimplified;
    const bool skip = form == Form::kSkip || form == Form::kSkipSimplified;
    const float epsilon = info.GetFloat("epsilon", skip ? 1e-12f : 1e-5f);
    if (!(epsilon >= 0)) return info.Error("epsilon must be >= 0");
    if (const int64_t stash = info.GetInt("stash_type", 1); stash != 1) {
      return cpu::NodeLabel(info).Unimplemented(
          absl::StrCat("stash_type ", stash, " (only 1, float32, is supported)"));
    }
    return std::unique_ptr<LayerNormKernel>(new LayerNormKernel(info, form, epsilon));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& shape = x->shape();
    const bool skip = form_ == Form::kSkip || form_ == Form::kSkipSimplified;
    LayerNormArgs a;
    a.x = x->data<float>();
    a.epsilon = epsilon_;
    a.simplified = form_ == Form::kSimplified || form_ == Form::kSkipSimplified;
    int axis = 0;
    if (skip) {
      if (shape.rank() != 2 && shape.rank() != 3) {
        return node_.InvalidArgument(
            absl::StrCat("input must be [B, S, H] or [N, H], got ", shape.ToString()));
      }
      axis = static_cast<int>(shape.rank()) - 1;
    } else {
      INFERD_ASSIGN_OR_RETURN(axis, cpu::NormalizeAxis(axis_, shape.rank(), node_));
    }
    a.rows = shape.SizeBetween(0, axis);
    a.d = shape.SizeFrom(axis);
    // The parameters: (scale | gamma), then beta / B, skip's bias.
    const int gamma_index = skip ? 2 : 1;
    INFERD_ASSIGN_OR_RETURN(const Tensor* gamma, cpu::RequiredInput(ctx, gamma_index, node_));
    INFERD_ASSIGN_OR_RETURN(a.gamma, RowVector(*gamma, a.d, gamma_index, node_));
    const int beta_index = form_ == Form::kLayerNorm ? 2 : form_ == Form::kSkip ? 3 : -1;
    if (const Tensor* beta = beta_index >= 0 ? ctx.input(beta_index) : nullptr) {
      INFERD_ASSIGN_OR_RETURN(a.beta, RowVector(*beta, a.d, beta_index, node_));
    }
    if (skip) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* s, cpu::RequiredInput(ctx, 1, node_));
      INFERD_RETURN_IF_ERROR(CheckSkip(*s, shape));
      a.skip = s->data<float>();
      a.skip_rows = a.d == 0 ? 1 : s->NumElements() / a.d;
      if (a.skip_rows == 0) a.skip_rows = 1;
      const int bias_index = form_ == Form::kSkip ? 4 : 3;
      if (const Tensor* bias = ctx.input(bias_index)) {
        INFERD_ASSIGN_OR_RETURN(a.bias, RowVector(*bias, a.d, bias_index, node_));
      }
    }

    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    a.y = y->mutable_data<float>();
    Shape stats = shape;
    for (size_t i = axis; i < shape.rank(); ++i) stats[i] = 1;
    if (form_ == Form::kSimplified) {
      INFERD_ASSIGN_OR_RETURN(a.inv_std_dev, OptionalOutput(ctx, 1, stats));
    } else {
      INFERD_ASSIGN_OR_RETURN(a.mean, OptionalOutput(ctx, 1, stats));
      INFERD_ASSIGN_OR_RETURN(a.inv_std_dev, OptionalOutput(ctx, 2, stats));
    }
    if (skip) {
      INFERD_ASSIGN_OR_RETURN(a.sum, OptionalOutput(ctx, 3, shape));
    }
    return node_.Launched(LaunchLayerNorm(a, cuda->cuda_stream()));
  }

 private:
  LayerNormKernel(const KernelInfo& info, Form form, float epsilon)
      : node_(info), form_(form), axis_(info.GetInt("axis", -1)), epsilon_(epsilon) {}

  // skip: the input's shape, or (leading 1s aside) a suffix of it, repeated over the leading dims.
  absl::Status CheckSkip(const Tensor& skip, const Shape& shape) const {
    INFERD_RETURN_IF_ERROR(cpu::CheckType(skip, DataType::kFloat32, 1, node_));
    const Shape& ss = skip.shape();
    size_t lead = 0;
    while (lead + 1 < ss.rank() && ss[lead] == 1) ++lead;
    bool ok = ss.rank() >= 1 && ss.rank() - lead <= shape.rank();
    for (size_t i = lead; ok && i < ss.rank(); ++i)
      ok = ss[i] == shape[shape.rank() - ss.rank() + i];
    if (ok) return absl::OkStatus();
    return node_.InvalidArgument(absl::StrCat("skip must have the input's shape ", shape.ToString(),
                                              " or broadcast over its leading dims, got ",
                                              ss.ToString()));
  }

  const CudaNode node_;
  const Form form_;
  const int64_t axis_;
  const float epsilon_;
};

}  // namespace

std::vector<engine::KernelDef> LayerNormKernelDefs() {
  const auto f = cpu::FactoryOf<LayerNormKernel>();
  const std::vector<DataType> f32 = {DataType::kFloat32};
  return {CudaDef(engine::kOnnxDomain, "LayerNormalization", 17, kMaxOpset, f32, f),
          CudaDef(engine::kOnnxDomain, "SimplifiedLayerNormalization", 1, kMaxOpset, f32, f),
          CudaDef(engine::kMicrosoftDomain, "SkipLayerNormalization", 1, 1, f32, f),
          CudaDef(engine::kMicrosoftDomain, "SkipSimplifiedLayerNormalization", 1, 1, f32, f)};
}

}  // namespace inferd::kernels::cuda

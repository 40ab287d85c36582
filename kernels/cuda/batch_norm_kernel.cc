// BatchNormalization (opsets 1-8, 9-13, 14+, as on the CPU) on CUDA, inference form, float32:
// X [N, C, D...], per-channel scale, B, mean and var ([C]), or, with spatial = 0 of opsets 6-8,
// per-element ones ([C, D...]); the arithmetic in batch_norm.cu, as the CPU kernel does it.
// training_mode = 1 and the running-statistics outputs are refused at creation (UNIMPLEMENTED),
// as on the CPU. No workspace.
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cuda/batch_norm.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class BatchNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BatchNormKernel>> Create(const KernelInfo& info) {
    const cpu::NodeLabel node(info);
    if (info.opset() >= 14 && info.GetInt("training_mode", 0) != 0) {
      return node.Unimplemented("training_mode = 1 is not supported (inference only)");
    }
    for (int i = 1; i < info.num_outputs(); ++i) {
      if (info.output(i).present) {
        return node.Unimplemented(absl::StrCat(
            "output ", i, " (running or saved statistics, training only) is not supported"));
      }
    }
    return std::unique_ptr<BatchNormKernel>(new BatchNormKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_name_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& s = x->shape();
    if (s.rank() < 2) {
      return node_.InvalidArgument(
          absl::StrCat("X must have shape [N, C, ...], got ", s.ToString()));
    }
    const int64_t c = s[1], plane = s.SizeFrom(2);
    // spatial = 0 (opsets 6-8): parameters per element of a sample, unless they have C values.
    const Tensor* scale = ctx.input(1);
    const bool per_element = !spatial_ && scale != nullptr && scale->NumElements() != c;
    const int64_t expected = per_element ? c * plane : c;
    const Tensor* params[4];
    static const char* const kNames[] = {"scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 4; ++i) {
      INFERD_ASSIGN_OR_RETURN(params[i], cpu::RequiredInput(ctx, i + 1, node_));
      INFERD_RETURN_IF_ERROR(cpu::CheckType(*params[i], DataType::kFloat32, i + 1, node_));
      if (params[i]->NumElements() != expected) {
        return node_.InvalidArgument(
            absl::StrCat(kNames[i], " (input ", i + 1, ") has shape ",
                         params[i]->shape().ToString(), ", expected ", expected, " values (",
                         per_element ? "[C, D...] with spatial = 0" : "[C]", ")"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, s));
    if (y->NumElements() == 0) return absl::OkStatus();
    return CudaStatus(
        LaunchBatchNorm(x->data<float>(), params[0]->data<float>(), params[1]->data<float>(),
                        params[2]->data<float>(), params[3]->data<float>(), epsilon_, per_element,
                        s[0], c, plane, y->mutable_data<float>(), cuda->cuda_stream()),
        absl::StrCat(node_.prefix(), "batch_norm.cu"));
  }

 private:
  explicit BatchNormKernel(const KernelInfo& info)
      : node_(info),
        node_name_(info.node_name()),
        epsilon_(info.GetFloat("epsilon", 1e-5f)),
        spatial_(info.opset() >= 9 || info.GetInt("spatial", 1) != 0) {}

  const cpu::NodeLabel node_;
  const std::string node_name_;
  const float epsilon_;
  const bool spatial_;
};

engine::KernelDef Def(int since, int end) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = "BatchNormalization";
  def.since_version = since;
  def.end_version = end;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create = [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<BatchNormKernel> k, BatchNormKernel::Create(info));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  };
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> BatchNormKernelDefs() {
  return {Def(1, 8), Def(9, 13), Def(14, kMaxOpset)};
}

}  // namespace inferd::kernels::cuda

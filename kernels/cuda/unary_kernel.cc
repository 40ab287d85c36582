// Relu, Sigmoid, Tanh, Neg, Abs, Sqrt, Reciprocal, Exp, Log (opsets 6+), Erf (9+) and Gelu (20+,
// approximate "none" or "tanh") on CUDA, float32; the arithmetic is in unary.cu.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

class UnaryKernel final : public engine::OpKernel {
 public:
  UnaryKernel(const KernelInfo& info, UnaryOp op) : node_(info.node_name()), op_(op) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_));
    const Tensor* x = ctx.input(0);
    if (x == nullptr)
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': no input"));
    if (x->dtype() != DataType::kFloat32) {
      return absl::UnimplementedError(absl::StrCat("node '", node_, "': element type ",
                                                   engine::DataTypeName(x->dtype()),
                                                   " has no CUDA kernel (float32 only)"));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), x->shape()));
    return CudaStatus(LaunchUnary(op_, x->data<float>(), y->mutable_data<float>(), x->NumElements(),
                                  cuda->cuda_stream()),
                      absl::StrCat("node '", node_, "'"));
  }

 private:
  const std::string node_;
  const UnaryOp op_;
};

engine::KernelDef Def(const char* op_type, UnaryOp op, int since_version = 6) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = since_version;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32};
  def.create = [op](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return std::make_unique<UnaryKernel>(info, op);
  };
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> UnaryKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(Def("Relu", UnaryOp::kRelu));
  defs.push_back(Def("Sigmoid", UnaryOp::kSigmoid));
  defs.push_back(Def("Tanh", UnaryOp::kTanh));
  defs.push_back(Def("Neg", UnaryOp::kNeg));
  defs.push_back(Def("Abs", UnaryOp::kAbs));
  defs.push_back(Def("Sqrt", UnaryOp::kSqrt));
  defs.push_back(Def("Reciprocal", UnaryOp::kReciprocal));
  defs.push_back(Def("Exp", UnaryOp::kExp));
  defs.push_back(Def("Log", UnaryOp::kLog));
  defs.push_back(Def("Erf", UnaryOp::kErf, 9));
  // Gelu: the form from the `approximate` attribute, read at creation.
  engine::KernelDef gelu = Def("Gelu", UnaryOp::kGelu, 20);
  gelu.create = [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    const std::string mode = info.GetString("approximate", "none");
    if (mode != "none" && mode != "tanh") {
      return info.Error(absl::StrCat("approximate must be 'none' or 'tanh', got '", mode, "'"));
    }
    return std::make_unique<UnaryKernel>(info,
                                         mode == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu);
  };
  defs.push_back(std::move(gelu));
  return defs;
}

}  // namespace inferd::kernels::cuda

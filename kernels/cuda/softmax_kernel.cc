// Softmax and LogSoftmax on CUDA (float32). Opsets 1-12: the input coerced to 2-D at `axis`
// (default 1; axis == rank allowed), each row of [prod(dims[:axis]), prod(dims[axis:])]
// normalized. Opset 13+: along the single dimension `axis` (default -1). The arithmetic is in
// softmax.cu. No host inputs.
#include <memory>
#include <vector>

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

class SoftmaxKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SoftmaxKernel>> Create(const KernelInfo& info) {
    const bool coerce_2d = info.opset() < 13;
    return std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel(
        info, info.op_type() == "LogSoftmax", info.GetInt("axis", coerce_2d ? 1 : -1), coerce_2d));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    int axis = 0;
    if (rank > 0) {
      if (coerce_2d_ && axis_ == rank) {
        axis = static_cast<int>(rank);
      } else {
        INFERD_ASSIGN_OR_RETURN(axis, cpu::NormalizeAxis(axis_, rank, node_));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    const int64_t outer = shape.SizeBetween(0, axis);
    const int64_t n = coerce_2d_ ? shape.SizeFrom(axis) : (rank == 0 ? 1 : shape[axis]);
    const int64_t inner = coerce_2d_ || rank == 0 ? 1 : shape.SizeFrom(axis + 1);
    return node_.Launched(LaunchSoftmax(log_, x->data<float>(), y->mutable_data<float>(), outer, n,
                                        inner, cuda->cuda_stream()));
  }

 private:
  SoftmaxKernel(const KernelInfo& info, bool log, int64_t axis, bool coerce_2d)
      : node_(info), log_(log), axis_(axis), coerce_2d_(coerce_2d) {}

  const CudaNode node_;
  const bool log_;
  const int64_t axis_;
  const bool coerce_2d_;  // opset < 13
};

}  // namespace

std::vector<engine::KernelDef> SoftmaxKernelDefs() {
  std::vector<engine::KernelDef> defs;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    defs.push_back(CudaDef(engine::kOnnxDomain, op, 1, 12, {DataType::kFloat32},
                           cpu::FactoryOf<SoftmaxKernel>()));
    defs.push_back(CudaDef(engine::kOnnxDomain, op, 13, kMaxOpset, {DataType::kFloat32},
                           cpu::FactoryOf<SoftmaxKernel>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cuda

// Add, Sub, Mul, Div, Pow on CUDA (opsets 7+: numpy multidirectional broadcasting): the output
// shape and the operands' strides here, the arithmetic in binary.cu. Pow takes an exponent of the
// base's type only: a node whose exponent has another type is refused at creation
// (UNIMPLEMENTED, so it stays on the CPU), or at run time when its types are not known at load.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cuda/broadcast_index.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class BinaryKernel final : public engine::OpKernel {
 public:
  BinaryKernel(const KernelInfo& info, BinaryOp op) : node_(info.node_name()), op_(op) {}

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda,
                            engine::CudaContextOf(ctx, node_));
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node_, "': needs two inputs"));
    }
    if (a->dtype() != b->dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node_, "': inputs have different element types (",
          engine::DataTypeName(a->dtype()), ", ", engine::DataTypeName(b->dtype()), ")"));
    }
    INFERD_ASSIGN_OR_RETURN(const ElementType type, ElementTypeOf(a->dtype()));
    Shape out_shape;
    absl::StatusOr<BroadcastIndex> index = MakeBroadcastIndex(a->shape(), b->shape(), out_shape);
    if (!index.ok()) {
      return absl::Status(index.status().code(),
                          absl::StrCat("node '", node_, "': ", index.status().message()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, a->dtype(), out_shape));
    return CudaStatus(LaunchBinary(op_, type, a->raw_data(), b->raw_data(), out->raw_mutable_data(),
                                   *index, cuda->cuda_stream()),
                      absl::StrCat("node '", node_, "'"));
  }

 private:
  const std::string node_;
  const BinaryOp op_;
};

engine::KernelDef Def(const char* op_type, BinaryOp op) {
  engine::KernelDef def;
  def.domain = engine::kOnnxDomain;
  def.op_type = op_type;
  def.since_version = 7;
  def.end_version = kMaxOpset;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = {DataType::kFloat32, DataType::kInt32, DataType::kInt64};
  def.create = [op](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return std::make_unique<BinaryKernel>(info, op);
  };
  def.estimate_workspace = [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  return def;
}

}  // namespace

std::vector<engine::KernelDef> BinaryKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(Def("Add", BinaryOp::kAdd));
  defs.push_back(Def("Sub", BinaryOp::kSub));
  defs.push_back(Def("Mul", BinaryOp::kMul));
  defs.push_back(Def("Div", BinaryOp::kDiv));
  engine::KernelDef pow = Def("Pow", BinaryOp::kPow);
  pow.create = [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    const DataType base = info.input(0).type, exponent = info.input(1).type;
    if (base != DataType::kUndefined && exponent != DataType::kUndefined && base != exponent) {
      return absl::UnimplementedError(
          absl::StrCat("node '", info.node_name(), "' (Pow): a ", engine::DataTypeName(exponent),
                       " exponent of a ", engine::DataTypeName(base), " base has no CUDA kernel"));
    }
    return std::make_unique<BinaryKernel>(info, BinaryOp::kPow);
  };
  defs.push_back(std::move(pow));
  return defs;
}

}  // namespace inferd::kernels::cuda

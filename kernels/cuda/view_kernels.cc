// View ops on CUDA: Reshape, Flatten, Squeeze, Unsqueeze and Identity only change the shape, so
// the CUDA kernel is the CPU kernel (kernels/cpu/shape_ops.cc, squeeze.cc, identity.cc) behind a
// wrapper: it computes the output shape on the host and calls MakeOutputAlias, declared in
// OutputAliases, so the output shares the input's device buffer (no copy, no launch). The wrapper
// refuses a host run (no CUDA context) and a sequence or optional input (which the CPU Identity
// would copy on the host).
// Host inputs: Reshape's shape (input 1, opsets 5+), Squeeze's and Unsqueeze's axes (input 1,
// opsets 13+). Where the plan does not allow the alias, the engine copies the bytes: that copy
// must be a device copy for "cuda" kernels (docs/cuda.md, "What is missing").
#include <memory>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using engine::KernelContext;
using engine::KernelInfo;

class DeviceViewKernel final : public engine::OpKernel {
 public:
  DeviceViewKernel(const KernelInfo& info, std::unique_ptr<engine::OpKernel> shape_only)
      : node_(info), shape_only_(std::move(shape_only)) {}

  std::vector<std::pair<int, int>> OutputAliases() const override {
    return shape_only_->OutputAliases();
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_RETURN_IF_ERROR(node_.Context(ctx).status());
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    if (!x->is_tensor()) {
      return node_.Unimplemented("a sequence or optional input has no CUDA kernel");
    }
    return shape_only_->Compute(ctx);
  }

 private:
  const CudaNode node_;
  const std::unique_ptr<engine::OpKernel> shape_only_;
};

// The CUDA definition of a CPU view definition: same op, opsets and types, the CPU kernel
// wrapped, `host_inputs` read on the host.
engine::KernelDef OnCuda(engine::KernelDef def, std::vector<int> host_inputs) {
  engine::KernelFactory cpu_create = std::move(def.create);
  auto create =
      [cpu_create](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> k, cpu_create(info));
    return std::unique_ptr<engine::OpKernel>(new DeviceViewKernel(info, std::move(k)));
  };
  engine::KernelDef cuda = CudaDef(def.domain, def.op_type, def.since_version, def.end_version,
                                   std::move(def.types), create, std::move(host_inputs));
  cuda.type_input = def.type_input;
  return cuda;
}

}  // namespace

std::vector<engine::KernelDef> ViewKernelDefs() {
  std::vector<engine::KernelDef> defs;
  for (engine::KernelDef& def : cpu::ShapeKernelDefs()) {
    if (def.op_type != "Reshape") continue;  // Concat moves bytes: movement_kernel.cc
    std::vector<int> host_inputs;
    if (def.since_version >= 5) host_inputs = {1};
    defs.push_back(OnCuda(std::move(def), std::move(host_inputs)));
  }
  for (engine::KernelDef& def : cpu::ViewKernelDefs()) {  // Flatten, Squeeze, Unsqueeze
    std::vector<int> host_inputs;
    if (def.op_type != "Flatten" && def.since_version >= 13) host_inputs = {1};
    defs.push_back(OnCuda(std::move(def), std::move(host_inputs)));
  }
  for (engine::KernelDef& def : cpu::PassThroughKernelDefs()) {
    if (def.op_type == "Identity") defs.push_back(OnCuda(std::move(def), {}));
  }
  return defs;
}

}  // namespace inferd::kernels::cuda

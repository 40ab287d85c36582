// CudaDef: a KernelDef for device kind "cuda" with no arena workspace (the CUDA kernels here
// take none); CudaNode: a kernel's node as the CPU kernels' NodeLabel (so the shared helpers of
// kernels/cpu/kernel_util.h and movement_util.h take it) plus its CUDA context and launch errors.
// Internal to //kernels/cuda. Value types; thread-compatible.
#ifndef INFERD_KERNELS_CUDA_KERNEL_DEF_H_
#define INFERD_KERNELS_CUDA_KERNEL_DEF_H_

#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/cuda_status.h"
#include "engine/cuda_kernel_context.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {

// `host_inputs`: the inputs the kernel reads on the host (KernelDef::host_inputs).
inline engine::KernelDef CudaDef(absl::string_view domain, absl::string_view op_type,
                                 int since_version, int end_version,
                                 std::vector<engine::DataType> types, engine::KernelFactory create,
                                 std::vector<int> host_inputs = {}) {
  engine::KernelDef def;
  def.domain = std::string(domain);
  def.op_type = std::string(op_type);
  def.since_version = since_version;
  def.end_version = end_version;
  def.device_type = engine::DeviceKind::kCuda;
  def.types = std::move(types);
  def.create = std::move(create);
  def.estimate_workspace = [](const engine::KernelInfo&) -> absl::StatusOr<size_t> { return 0; };
  def.host_inputs = std::move(host_inputs);
  return def;
}

// The element type of the arithmetic kernels (float32, int32, int64), or UNIMPLEMENTED.
inline absl::StatusOr<ElementType> ElementTypeOf(engine::DataType type) {
  switch (type) {
    case engine::DataType::kFloat32:
      return ElementType::kFloat32;
    case engine::DataType::kInt32:
      return ElementType::kInt32;
    case engine::DataType::kInt64:
      return ElementType::kInt64;
    default:
      return absl::UnimplementedError(
          absl::StrCat("element type ", engine::DataTypeName(type), " has no CUDA kernel"));
  }
}

class CudaNode : public cpu::NodeLabel {
 public:
  explicit CudaNode(const engine::KernelInfo& info)
      : cpu::NodeLabel(info), name_(info.node_name()) {}

  // The run's CUDA context, or FAILED_PRECONDITION in a host run.
  absl::StatusOr<const engine::CudaKernelContext*> Context(const engine::KernelContext& ctx) const {
    return engine::CudaContextOf(ctx, name_);
  }
  // A launcher's error as a status naming the node.
  absl::Status Launched(cudaError_t error) const {
    return CudaStatus(error, absl::StrCat("node '", name_, "'"));
  }

 private:
  std::string name_;
};

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_KERNEL_DEF_H_

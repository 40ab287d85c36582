#include "kernels/cuda/cuda_kernels.h"

#include <vector>

#include "base/status_macros.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {

absl::Status RegisterCudaKernels(engine::KernelRegistry& registry) {
  for (auto defs : {BinaryKernelDefs, UnaryKernelDefs, MatMulKernelDefs, ConvKernelDefs,
                    PoolKernelDefs, BatchNormKernelDefs}) {
    for (engine::KernelDef& def : defs()) INFERD_RETURN_IF_ERROR(registry.Register(std::move(def)));
  }
  // Softmax, norms, reductions, data movement, views.
  for (auto defs : {SoftmaxKernelDefs, LayerNormKernelDefs, ReduceKernelDefs, MovementKernelDefs,
                    SelectKernelDefs, ViewKernelDefs}) {
    for (engine::KernelDef& def : defs()) INFERD_RETURN_IF_ERROR(registry.Register(std::move(def)));
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cuda

#include "kernels/cpu/cpu_kernels.h"

#include "base/status_macros.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {

absl::Status RegisterCpuKernels(engine::KernelRegistry& registry) {
  INFERD_RETURN_IF_ERROR(RegisterMatMulKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterGemmKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterConvKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterPoolKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterElementwiseKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterSoftmaxKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterLayerNormKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterGatherKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterShapeKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterTransposeKernels(registry));
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu

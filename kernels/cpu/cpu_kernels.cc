#include "kernels/cpu/cpu_kernels.h"

#include "base/status_macros.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {

absl::Status RegisterCpuKernels(engine::KernelRegistry& registry) {
  INFERD_RETURN_IF_ERROR(RegisterMatMulKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterGemmKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterConvKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterPoolKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterConvTransposeKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterBinaryKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterUnaryKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterCompareLogicalKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterCastKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterVariadicKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterSoftmaxKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterLayerNormKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterNormKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterReduceKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterArgReduceKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterTopKKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterCumSumKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterEinsumKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterGatherKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterShapeKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterTransposeKernels(registry));
  INFERD_RETURN_IF_ERROR(RegisterMovementKernels(registry));
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu

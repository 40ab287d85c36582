#include "kernels/build_kernels.h"

#include "kernels/cpu/cpu_kernels.h"

#ifdef INFERD_WITH_CUDA
#include "engine/cuda_device_runtime.h"
#include "kernels/cuda/cuda_kernels.h"
#endif

namespace inferd::kernels {

absl::Status RegisterBuildKernels(engine::KernelRegistry& registry) {
  absl::Status status = cpu::RegisterCpuKernels(registry);
#ifdef INFERD_WITH_CUDA
  if (status.ok()) status = cuda::RegisterCudaKernels(registry);
#endif
  return status;
}

std::vector<std::shared_ptr<const engine::DeviceRuntime>> BuildDeviceRuntimes() {
#ifdef INFERD_WITH_CUDA
  static const std::shared_ptr<const engine::DeviceRuntime> cuda =
      std::make_shared<engine::CudaDeviceRuntime>();
  return {cuda};
#else
  return {};
#endif
}

bool BuiltWithCuda() {
#ifdef INFERD_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace inferd::kernels

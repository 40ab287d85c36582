// CudaDeviceRuntime: the DeviceRuntime of NVIDIA GPUs (engine/device_runtime.h), built with
// --config=cuda. Device memory from cudaMalloc (memory::CudaSystemAllocator, under the arenas
// that pool it), page-locked host memory for the host IOArena (cudaHostAlloc), free memory from
// cudaMemGetInfo, and one non-blocking CUDA stream per run slot and device. The stream object
// is also the CudaKernelContext the CUDA kernels find through CudaContextOf.
//
// Example (what engine/build_devices.h does):
//   SessionOptions options;
//   options.device_runtimes.push_back(std::make_shared<CudaDeviceRuntime>());
#ifndef INFERD_ENGINE_CUDA_DEVICE_RUNTIME_H_
#define INFERD_ENGINE_CUDA_DEVICE_RUNTIME_H_

#include <memory>
#include <string>

#include "engine/device_runtime.h"

namespace inferd::engine {

class CudaDeviceRuntime final : public DeviceRuntime {
 public:
  DeviceKind kind() const override { return DeviceKind::kCuda; }
  absl::Status CheckPresent(int ordinal) const override;
  int DeviceCount() const override;
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo(int ordinal) const override;
  absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeAllocator(
      const std::string& device, int ordinal) const override;
  absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeHostIoAllocator(
      const std::string& device) const override;
  absl::StatusOr<std::unique_ptr<DeviceStream>> MakeStream(int ordinal) const override;
  absl::Status Upload(int ordinal, void* dst, const void* src, size_t bytes) const override;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CUDA_DEVICE_RUNTIME_H_

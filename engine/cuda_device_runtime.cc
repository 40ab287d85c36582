#include "engine/cuda_device_runtime.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/cuda_stream.h"
#include "memory/cuda_system_allocator.h"

namespace inferd::engine {
namespace {

// One run slot's stream on one GPU, and the CudaKernelContext of the CUDA kernels its steps run.
class CudaRunStream final : public DeviceStream, public CudaKernelContext {
 public:
  explicit CudaRunStream(CudaStream stream) : stream_(std::move(stream)) {}

  int ordinal() const override { return stream_.device(); }
  int cuda_device() const override { return stream_.device(); }
  cudaStream_t cuda_stream() const override { return stream_.get(); }

  absl::Status Enter() override {
    return CudaStatus(cudaSetDevice(stream_.device()), "cudaSetDevice");
  }

  absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    INFERD_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_.get()));
    // From pageable memory the call returns once the bytes are staged; from page-locked memory
    // the DMA reads the source later, so wait for it: the caller may reuse the source at once.
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, src) == cudaSuccess &&
        attributes.type == cudaMemoryTypeHost) {
      return stream_.Synchronize();
    }
    (void)cudaGetLastError();  // an unregistered pointer is not an error here
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_.get()),
                      "cudaMemcpyAsync (device to host)");
  }
  absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) override {
    return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.get()),
                      "cudaMemcpyAsync (device to device)");
  }
  absl::Status Synchronize() override { return stream_.Synchronize(); }

 private:
  CudaStream stream_;
};

}  // namespace

absl::Status CudaDeviceRuntime::CheckPresent(int ordinal) const { return CheckCudaDevice(ordinal); }

int CudaDeviceRuntime::DeviceCount() const {
  absl::StatusOr<int> n = CudaDeviceCount();
  return n.ok() ? *n : 0;
}

absl::StatusOr<DeviceMemoryInfo> CudaDeviceRuntime::MemoryInfo(int ordinal) const {
  INFERD_ASSIGN_OR_RETURN(memory::CudaMemoryInfo info, memory::CudaDeviceMemory(ordinal));
  return DeviceMemoryInfo{info.free_bytes, info.total_bytes};
}

absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> CudaDeviceRuntime::MakeAllocator(
    const std::string& device, int ordinal) const {
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<memory::CudaSystemAllocator> a,
                          memory::CudaSystemAllocator::Create(ordinal));
  return std::shared_ptr<memory::SystemAllocator>(std::move(a));
}

absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> CudaDeviceRuntime::MakeHostIoAllocator(
    const std::string& device) const {
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<memory::PinnedHostSystemAllocator> a,
                          memory::PinnedHostSystemAllocator::Create(device));
  return std::shared_ptr<memory::SystemAllocator>(std::move(a));
}

absl::StatusOr<std::unique_ptr<DeviceStream>> CudaDeviceRuntime::MakeStream(int ordinal) const {
  INFERD_ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create(ordinal));
  return std::unique_ptr<DeviceStream>(new CudaRunStream(std::move(stream)));
}

absl::Status CudaDeviceRuntime::Upload(int ordinal, void* dst, const void* src,
                                       size_t bytes) const {
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
  return CudaStatus(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
                    absl::StrCat("uploading ", bytes, " bytes of weights to cuda:", ordinal));
}

}  // namespace inferd::engine

#include "memory/cuda_system_allocator.h"

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"

namespace inferd::memory {
namespace {

// Makes `ordinal` the calling thread's current device for the scope, then restores the previous
// one. cudaMalloc and cudaMemGetInfo work on the current device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = CudaStatus(cudaSetDevice(ordinal), absl::StrCat("cudaSetDevice(", ordinal, ")"));
  }
  ~ScopedDevice() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  int previous_ = -1;
  absl::Status status_;
};

absl::Status CheckAlignment(size_t alignment, size_t most, absl::string_view device) {
  if ((alignment & (alignment - 1)) != 0 || alignment > most) {
    return absl::InvalidArgumentError(
        absl::StrCat(device, ": alignment ", alignment, " is not a power of 2 of at most ", most));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<CudaSystemAllocator>> CudaSystemAllocator::Create(int ordinal) {
  INFERD_RETURN_IF_ERROR(CheckCudaDevice(ordinal));
  return std::shared_ptr<CudaSystemAllocator>(new CudaSystemAllocator(ordinal));
}

CudaSystemAllocator::CudaSystemAllocator(int ordinal)
    : SystemAllocator(absl::StrCat("cuda:", ordinal)), ordinal_(ordinal) {}

absl::StatusOr<void*> CudaSystemAllocator::DoAllocate(size_t bytes, size_t alignment) {
  INFERD_RETURN_IF_ERROR(CheckAlignment(alignment, kCudaAlignment, device()));
  ScopedDevice scope(ordinal_);
  INFERD_RETURN_IF_ERROR(scope.status());
  void* p = nullptr;
  const cudaError_t error = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess) {
    cudaGetLastError();  // an out-of-memory is not sticky: leave no error for the next launch
    return CudaStatus(error, absl::StrCat(device(), ": cannot allocate ", bytes, " bytes"));
  }
  return p;
}

void CudaSystemAllocator::DoFree(void* ptr, size_t bytes) {
  ScopedDevice scope(ordinal_);
  // Nothing to tell a caller that is returning memory; an error here means the context is
  // already lost, and the next call on the device reports it.
  if (cudaFree(ptr) != cudaSuccess) cudaGetLastError();
}

absl::StatusOr<std::shared_ptr<PinnedHostSystemAllocator>> PinnedHostSystemAllocator::Create(
    std::string device) {
  INFERD_RETURN_IF_ERROR(CudaDeviceCount().status());
  return std::shared_ptr<PinnedHostSystemAllocator>(
      new PinnedHostSystemAllocator(std::move(device)));
}

absl::StatusOr<void*> PinnedHostSystemAllocator::DoAllocate(size_t bytes, size_t alignment) {
  // cudaHostAlloc returns page-aligned memory.
  INFERD_RETURN_IF_ERROR(CheckAlignment(alignment, 4096, device()));
  void* p = nullptr;
  const cudaError_t error = cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable);
  if (error != cudaSuccess) {
    cudaGetLastError();
    return CudaStatus(error,
                      absl::StrCat(device(), ": cannot pin ", bytes, " bytes of host memory"));
  }
  return p;
}

void PinnedHostSystemAllocator::DoFree(void* ptr, size_t bytes) {
  if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
}

absl::StatusOr<CudaMemoryInfo> CudaDeviceMemory(int ordinal) {
  INFERD_RETURN_IF_ERROR(CheckCudaDevice(ordinal));
  ScopedDevice scope(ordinal);
  INFERD_RETURN_IF_ERROR(scope.status());
  size_t free_bytes = 0, total_bytes = 0;
  INFERD_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  return CudaMemoryInfo{free_bytes, total_bytes};
}

}  // namespace inferd::memory

// The system allocators of CUDA builds (--config=cuda), behind the SystemAllocator interface the
// arenas take:
//
// CudaSystemAllocator: device memory of one GPU ("cuda:N") from cudaMalloc / cudaFree. The
// ExecutionArena and IOArena above it are the pool: this allocator caches nothing, so Trim and
// eviction return memory to the driver at once (cudaMemGetInfo sees it). cudaFree waits for the
// device's outstanding work; the arenas call it only on trim, eviction and destruction.
//
// PinnedHostSystemAllocator: page-locked host memory from cudaHostAlloc (portable: usable by
// every device's copies), for the host IOArena of a session that uses a GPU: device-to-host
// copies of graph outputs are then DMA, and the buffers are still plain host memory for gRPC.
//
// CudaDeviceMemory: a device's free and total memory as cudaMemGetInfo reports them (its
// capacity for the partitioner's budget).
//
// Example:
//   absl::StatusOr<std::shared_ptr<CudaSystemAllocator>> gpu = CudaSystemAllocator::Create(0);
//   if (!gpu.ok()) return gpu.status();  // FAILED_PRECONDITION "no CUDA device ..."
//   ExecutionArena arena(*gpu);
//   absl::StatusOr<CudaMemoryInfo> mem = CudaDeviceMemory(0);  // mem->free_bytes, total_bytes
//
// Thread-safe: each call sets the device it works on for its own thread and restores the
// thread's previous device.
#ifndef INFERD_MEMORY_CUDA_SYSTEM_ALLOCATOR_H_
#define INFERD_MEMORY_CUDA_SYSTEM_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "memory/system_allocator.h"

namespace inferd::memory {

// cudaMalloc's alignment, which CudaSystemAllocator guarantees; larger alignments are refused.
inline constexpr size_t kCudaAlignment = 256;

class CudaSystemAllocator final : public SystemAllocator {
 public:
  // FAILED_PRECONDITION when device `ordinal` does not exist (no driver, no device, too few).
  static absl::StatusOr<std::shared_ptr<CudaSystemAllocator>> Create(int ordinal);

  int ordinal() const { return ordinal_; }

 protected:
  // RESOURCE_EXHAUSTED "cuda:N: cannot allocate ... (cudaErrorMemoryAllocation ...)".
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override;
  void DoFree(void* ptr, size_t bytes) override;

 private:
  explicit CudaSystemAllocator(int ordinal);
  const int ordinal_;
};

class PinnedHostSystemAllocator final : public SystemAllocator {
 public:
  // FAILED_PRECONDITION when there is no CUDA device (pinning needs the driver). `device` is the
  // host device the arenas report ("cpu:0").
  static absl::StatusOr<std::shared_ptr<PinnedHostSystemAllocator>> Create(
      std::string device = "cpu:0");

 protected:
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override;
  void DoFree(void* ptr, size_t bytes) override;

 private:
  explicit PinnedHostSystemAllocator(std::string device) : SystemAllocator(std::move(device)) {}
};

struct CudaMemoryInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

// cudaMemGetInfo for device `ordinal`; FAILED_PRECONDITION when it does not exist.
absl::StatusOr<CudaMemoryInfo> CudaDeviceMemory(int ordinal);

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_CUDA_SYSTEM_ALLOCATOR_H_

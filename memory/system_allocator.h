// SystemAllocator: the backing allocator of one device. Arenas take buffers from it only when
// nothing they retain fits, and give them back on trim, eviction, or arena destruction.
// It counts system allocations, frees and bytes. Thread-safe.
//
// CpuSystemAllocator: host memory with 64-byte alignment. Buffers of kMmapThreshold bytes and more
// come from mmap, so that freeing them really returns the pages to the OS (resident memory drops
// after a trim). An optional byte limit models a bounded host memory domain (`cpu:N`).
#ifndef INFERD_MEMORY_SYSTEM_ALLOCATOR_H_
#define INFERD_MEMORY_SYSTEM_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace inferd::memory {

inline constexpr size_t kDefaultAlignment = 64;

struct SystemAllocatorStats {
  uint64_t allocations = 0;  // successful Allocate calls
  uint64_t frees = 0;        // Free calls
  uint64_t failures = 0;     // Allocate calls that returned an error
  uint64_t bytes_in_use = 0;
  uint64_t peak_bytes_in_use = 0;
};

class SystemAllocator {
 public:
  explicit SystemAllocator(std::string device) : device_(std::move(device)) {}
  virtual ~SystemAllocator() = default;
  SystemAllocator(const SystemAllocator&) = delete;
  SystemAllocator& operator=(const SystemAllocator&) = delete;

  // Returns `bytes` of memory aligned to `alignment` (a power of two), or RESOURCE_EXHAUSTED
  // with the sizes in the message. Never throws, never aborts.
  absl::StatusOr<void*> Allocate(size_t bytes, size_t alignment = kDefaultAlignment);
  // Frees memory from Allocate; `bytes` must be the size it was allocated with.
  void Free(void* ptr, size_t bytes);

  SystemAllocatorStats stats() const;
  const std::string& device() const { return device_; }

 protected:
  virtual absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) = 0;
  virtual void DoFree(void* ptr, size_t bytes) = 0;

 private:
  const std::string device_;
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> frees_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> bytes_in_use_{0};
  std::atomic<uint64_t> peak_bytes_in_use_{0};
};

class CpuSystemAllocator final : public SystemAllocator {
 public:
  static constexpr size_t kMmapThreshold = 64 * 1024;
  static constexpr size_t kUnlimited = SIZE_MAX;

  // `limit_bytes`: the most this allocator may hold at once (a host memory domain's size).
  explicit CpuSystemAllocator(std::string device = "cpu:0", size_t limit_bytes = kUnlimited)
      : SystemAllocator(std::move(device)), limit_bytes_(limit_bytes) {}

 protected:
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override;
  void DoFree(void* ptr, size_t bytes) override;

 private:
  const size_t limit_bytes_;
  std::atomic<size_t> held_{0};
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_SYSTEM_ALLOCATOR_H_

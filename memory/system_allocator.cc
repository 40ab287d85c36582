#include "memory/system_allocator.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::memory {

absl::StatusOr<void*> SystemAllocator::Allocate(size_t bytes, size_t alignment) {
  absl::StatusOr<void*> result = DoAllocate(bytes, alignment);
  if (!result.ok()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return result;
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t now = bytes_in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = peak_bytes_in_use_.load(std::memory_order_relaxed);
  while (now > peak &&
         !peak_bytes_in_use_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return result;
}

void SystemAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  DoFree(ptr, bytes);
  frees_.fetch_add(1, std::memory_order_relaxed);
  bytes_in_use_.fetch_sub(bytes, std::memory_order_relaxed);
}

SystemAllocatorStats SystemAllocator::stats() const {
  SystemAllocatorStats s;
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.frees = frees_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  s.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
  s.peak_bytes_in_use = peak_bytes_in_use_.load(std::memory_order_relaxed);
  return s;
}

absl::StatusOr<void*> CpuSystemAllocator::DoAllocate(size_t bytes, size_t alignment) {
  if (bytes == 0) bytes = 1;
  if (alignment < kDefaultAlignment) alignment = kDefaultAlignment;
  if ((alignment & (alignment - 1)) != 0 || alignment > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("alignment ", alignment, " is not a power of 2 of at most 4096"));
  }
  size_t held = held_.load(std::memory_order_relaxed);
  do {
    if (limit_bytes_ != kUnlimited && (bytes > limit_bytes_ || held > limit_bytes_ - bytes)) {
      return absl::ResourceExhaustedError(absl::StrCat(device(), ": cannot allocate ", bytes,
                                                       " bytes: ", held, " of ", limit_bytes_,
                                                       " bytes of this memory domain are in use"));
    }
  } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));

  void* p = nullptr;
  if (bytes >= kMmapThreshold) {
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) p = nullptr;
  } else {
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    p = std::aligned_alloc(alignment, rounded);
  }
  if (p == nullptr) {
    held_.fetch_sub(bytes, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(absl::StrCat(device(), ": the system could not provide ",
                                                     bytes, " bytes (", std::strerror(errno), ")"));
  }
  return p;
}

void CpuSystemAllocator::DoFree(void* ptr, size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes >= kMmapThreshold) {
    munmap(ptr, bytes);
  } else {
    std::free(ptr);
  }
  held_.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace inferd::memory

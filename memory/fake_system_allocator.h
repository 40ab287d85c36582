// FakeSystemAllocator (tests only): a SystemAllocator over aligned_alloc that remembers every
// outstanding buffer, checks that each Free matches an Allocate (size included), and can be told
// to fail: the next N allocations, every allocation, or past a byte limit. Thread-safe.
#ifndef INFERD_MEMORY_FAKE_SYSTEM_ALLOCATOR_H_
#define INFERD_MEMORY_FAKE_SYSTEM_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <mutex>
#include "absl/base/thread_annotations.h"
#include "memory/system_allocator.h"

namespace inferd::memory {

class FakeSystemAllocator final : public SystemAllocator {
 public:
  explicit FakeSystemAllocator(std::string device = "fake:0")
      : SystemAllocator(std::move(device)) {}
  ~FakeSystemAllocator() override;

  void FailNextAllocations(int n);
  void SetFailAll(bool fail);
  void SetLimit(size_t bytes);  // SIZE_MAX: no limit

  // Buffers currently held, by start address.
  std::map<const void*, size_t> Outstanding() const;
  // Frees of unknown pointers or with a size that differs from the allocation.
  uint64_t misuses() const;

 protected:
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override;
  void DoFree(void* ptr, size_t bytes) override;

 private:
  mutable std::mutex mu_;
  int fail_next_ ABSL_GUARDED_BY(mu_) = 0;
  bool fail_all_ ABSL_GUARDED_BY(mu_) = false;
  size_t limit_ ABSL_GUARDED_BY(mu_) = SIZE_MAX;
  size_t held_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misuses_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<const void*, size_t> outstanding_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_FAKE_SYSTEM_ALLOCATOR_H_

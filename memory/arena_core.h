// ArenaCore: the shared implementation behind ExecutionArena and IOArena (internal to memory/).
//
// Retained buffers sit on one doubly linked free list per size class (most recently freed at the
// tail) and on one least-recently-freed list across all classes (eviction order). A bitmap of
// non-empty classes finds the smallest class that fits in O(1). Buffer metadata (BufferRecord)
// comes from slabs allocated when the arena grows, and is recycled; no allocation happens per
// handle. The core is reference-counted: the arena object, every live handle and every lease
// hold it, so buffers stay valid after the arena object is gone.
//
// Thread-safe: every mutable field is guarded by mu_ (a std::mutex: tsan sees it, and Debian's
// Abseil is not tsan-instrumented); a record's lease count is atomic.
#ifndef INFERD_MEMORY_ARENA_CORE_H_
#define INFERD_MEMORY_ARENA_CORE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mutex>
#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "memory/allocation_handle.h"
#include "memory/arena_stats.h"
#include "memory/size_classes.h"
#include "memory/system_allocator.h"

namespace inferd::memory {

inline constexpr uint64_t kUnboundedRetention = UINT64_MAX;

struct BufferRecord {
  enum class State : uint8_t { kUnused, kLive, kLeased, kRetained };
  void* ptr = nullptr;
  size_t capacity = 0;
  size_t requested = 0;
  int size_class = -1;
  State state = State::kUnused;
  BufferRecord* class_prev = nullptr;  // free list of its class
  BufferRecord* class_next = nullptr;
  BufferRecord* lru_prev = nullptr;  // least-recently-freed list (retained only)
  BufferRecord* lru_next = nullptr;
  BufferRecord* next_unused = nullptr;
  std::atomic<int32_t> lease_refs{0};
};

class ArenaCore : public std::enable_shared_from_this<ArenaCore> {
 public:
  ArenaCore(ArenaKind kind, std::shared_ptr<SystemAllocator> system);
  ~ArenaCore();
  ArenaCore(const ArenaCore&) = delete;
  ArenaCore& operator=(const ArenaCore&) = delete;

  absl::StatusOr<AllocationHandle> Allocate(size_t bytes);
  // Called by AllocationHandle::Release: the buffer goes to the free list (or the system).
  void ReturnLive(BufferRecord* record);
  // Turns a live handle of this arena into a leased record with one reference.
  absl::StatusOr<BufferRecord*> Lease(AllocationHandle& handle);
  // Called when a record's last lease is dropped.
  void ReturnLeased(BufferRecord* record);

  uint64_t Trim();
  void SetRetentionCap(uint64_t bytes);
  uint64_t retention_cap() const;
  void ResetPeak();
  ArenaStats Stats() const;
  // The owning arena object is being destroyed: free what is retained; from now on every
  // returned buffer goes straight back to the system.
  void Close();
  // True if `p` lies inside a buffer this arena holds (live, leased or retained). O(buffers);
  // for tests (memory/testing/arena_inspector.h), not part of Arena's API.
  bool HoldsPointer(const void* p) const;

  ArenaKind kind() const { return kind_; }
  const std::string& device() const { return system_->device(); }

 private:
  // Detaches a handle without returning its buffer (used by Lease).
  static BufferRecord* TakeRecord(AllocationHandle& handle);
  BufferRecord* NewRecordLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecycleRecordLocked(BufferRecord* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PushRetainedLocked(BufferRecord* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UnlinkRetainedLocked(BufferRecord* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeToSystemLocked(BufferRecord* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReturnLocked(BufferRecord* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EnforceCapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint64_t FreeAllRetainedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const ArenaKind kind_;
  const std::shared_ptr<SystemAllocator> system_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t cap_ ABSL_GUARDED_BY(mu_) = kUnboundedRetention;
  SizeClassBitmap nonempty_ ABSL_GUARDED_BY(mu_);
  BufferRecord* class_head_[kNumSizeClasses] ABSL_GUARDED_BY(mu_) = {};
  BufferRecord* class_tail_[kNumSizeClasses] ABSL_GUARDED_BY(mu_) = {};
  BufferRecord* lru_head_ ABSL_GUARDED_BY(mu_) = nullptr;  // least recently freed
  BufferRecord* lru_tail_ ABSL_GUARDED_BY(mu_) = nullptr;
  BufferRecord* unused_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<std::unique_ptr<BufferRecord[]>> slabs_ ABSL_GUARDED_BY(mu_);
  std::vector<size_t> slab_sizes_ ABSL_GUARDED_BY(mu_);
  ArenaStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_ARENA_CORE_H_

// AllocationHandle: move-only owner of one arena buffer (pointer, owning arena, logical size,
// capacity). Release() returns the buffer to its arena exactly once; destruction releases it if
// that has not happened yet. Moving a handle is O(1) and moves no payload byte. The handle keeps
// its arena's shared state alive, so it stays valid after the arena object is destroyed (the
// buffer then goes back to the system on release).
//
// A handle can only be made by an arena: there is no way to wrap a foreign or borrowed pointer,
// so borrowed memory can never reach a free list.
//
// Thread-compatible: one handle is used by one thread at a time; different handles of one arena
// may be released concurrently.
#ifndef INFERD_MEMORY_ALLOCATION_HANDLE_H_
#define INFERD_MEMORY_ALLOCATION_HANDLE_H_

#include <cstddef>
#include <memory>

#include "memory/arena_stats.h"

namespace inferd::memory {

class ArenaCore;
struct BufferRecord;

class AllocationHandle {
 public:
  AllocationHandle() = default;
  ~AllocationHandle() { Release(); }
  AllocationHandle(AllocationHandle&& other) noexcept { MoveFrom(other); }
  AllocationHandle& operator=(AllocationHandle&& other) noexcept {
    if (this != &other) {
      Release();
      MoveFrom(other);
    }
    return *this;
  }
  AllocationHandle(const AllocationHandle&) = delete;
  AllocationHandle& operator=(const AllocationHandle&) = delete;

  bool valid() const { return record_ != nullptr; }
  explicit operator bool() const { return valid(); }
  void* data() const { return data_; }
  size_t size() const { return size_; }  // logical size asked for
  size_t capacity() const { return capacity_; }
  ArenaKind arena_kind() const;
  // Identity of the owning arena (compare with ExecutionArena::id() / IOArena::id()).
  const void* arena_id() const { return core_.get(); }

  // Returns the buffer to its arena. Idempotent: later calls do nothing.
  void Release();

 private:
  friend class ArenaCore;
  AllocationHandle(std::shared_ptr<ArenaCore> core, BufferRecord* record, void* data, size_t size,
                   size_t capacity)
      : core_(std::move(core)), record_(record), data_(data), size_(size), capacity_(capacity) {}
  void MoveFrom(AllocationHandle& other) {
    core_ = std::move(other.core_);
    record_ = other.record_;
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.record_ = nullptr;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }

  std::shared_ptr<ArenaCore> core_;
  BufferRecord* record_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_ALLOCATION_HANDLE_H_

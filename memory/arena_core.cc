#include "memory/arena_core.h"

#include <algorithm>
#include <cassert>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::memory {

ArenaCore::ArenaCore(ArenaKind kind, std::shared_ptr<SystemAllocator> system)
    : kind_(kind), system_(std::move(system)) {
  stats_.device = system_->device();
  stats_.kind = kind_;
  stats_.retention_cap_bytes = kUnboundedRetention;
}

ArenaCore::~ArenaCore() {
  std::lock_guard<std::mutex> lock(mu_);
  // Nothing can be live here: every handle and lease holds a reference to this core.
  assert(stats_.live_buffers == 0);
  FreeAllRetainedLocked();
}

absl::StatusOr<AllocationHandle> ArenaCore::Allocate(size_t bytes) {
  const int cls = SizeClassFor(bytes);
  if (cls < 0) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.allocation_failures;
    return absl::ResourceExhaustedError(
        absl::StrCat(device(), "/", ArenaKindName(kind_), " arena: cannot allocate ", bytes,
                     " bytes: larger than the largest size class (", kMaxClassBytes, " bytes)"));
  }
  BufferRecord* r = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int found = nonempty_.FindFirst(cls, cls + kMaxReuseClassDistance);
    if (found >= 0) {
      // pass 1: the smallest retained class that fits; most recently freed buffer in it.
      r = class_tail_[found];
      UnlinkRetainedLocked(r);
      ++stats_.reuses;
    } else {
      // pass 2: nothing retained fits; grow from the system, trimming once on failure.
      const size_t capacity = SizeClassCapacity(cls);
      absl::StatusOr<void*> p = system_->Allocate(capacity, kDefaultAlignment);
      if (!p.ok() && stats_.retained_bytes > 0) {
        stats_.trimmed_bytes += FreeAllRetainedLocked();
        ++stats_.trims;
        p = system_->Allocate(capacity, kDefaultAlignment);
      }
      if (!p.ok()) {
        ++stats_.allocation_failures;
        return absl::ResourceExhaustedError(
            absl::StrCat(device(), "/", ArenaKindName(kind_), " arena: out of memory allocating ",
                         bytes, " bytes (buffer of ", capacity, " bytes) with ", stats_.live_bytes,
                         " bytes live: ", p.status().message()));
      }
      r = NewRecordLocked();
      r->ptr = *p;
      r->capacity = capacity;
      r->size_class = cls;
      ++stats_.system_allocations;
    }
    r->state = BufferRecord::State::kLive;
    r->requested = bytes;
    ++stats_.allocations;
    ++stats_.live_buffers;
    stats_.live_bytes += r->capacity;
    stats_.live_requested_bytes += bytes;
    stats_.peak_live_bytes = std::max(stats_.peak_live_bytes, stats_.live_bytes);
  }
  return AllocationHandle(shared_from_this(), r, r->ptr, bytes, r->capacity);
}

void ArenaCore::ReturnLive(BufferRecord* record) {
  std::lock_guard<std::mutex> lock(mu_);
  assert(record->state == BufferRecord::State::kLive);
  ReturnLocked(record);
}

BufferRecord* ArenaCore::TakeRecord(AllocationHandle& handle) {
  BufferRecord* r = handle.record_;
  handle.record_ = nullptr;
  handle.data_ = nullptr;
  handle.size_ = handle.capacity_ = 0;
  return r;
}

absl::StatusOr<BufferRecord*> ArenaCore::Lease(AllocationHandle& handle) {
  if (!handle.valid()) {
    return absl::InvalidArgumentError("cannot export an empty allocation handle");
  }
  if (handle.core_.get() != this) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot export a buffer of another arena into the ", device(), "/",
                     ArenaKindName(kind_), " arena"));
  }
  // Declared before the lock so the handle's reference is dropped after the lock is released.
  std::shared_ptr<ArenaCore> keep = std::move(handle.core_);
  std::lock_guard<std::mutex> lock(mu_);
  BufferRecord* r = TakeRecord(handle);
  assert(r->state == BufferRecord::State::kLive);
  r->state = BufferRecord::State::kLeased;
  r->lease_refs.store(1, std::memory_order_relaxed);
  ++stats_.outstanding_leases;
  return r;
}

void ArenaCore::ReturnLeased(BufferRecord* record) {
  std::lock_guard<std::mutex> lock(mu_);
  assert(record->state == BufferRecord::State::kLeased);
  --stats_.outstanding_leases;
  ReturnLocked(record);
}

void ArenaCore::ReturnLocked(BufferRecord* r) {
  --stats_.live_buffers;
  stats_.live_bytes -= r->capacity;
  stats_.live_requested_bytes -= r->requested;
  r->requested = 0;
  if (closed_) {
    FreeToSystemLocked(r);
    return;
  }
  if (r->capacity > cap_) {  // can never be retained under this cap
    ++stats_.evictions;
    stats_.evicted_bytes += r->capacity;
    FreeToSystemLocked(r);
    return;
  }
  PushRetainedLocked(r);
  EnforceCapLocked();
}

void ArenaCore::EnforceCapLocked() {
  while (stats_.retained_bytes > cap_ && lru_head_ != nullptr) {
    BufferRecord* victim = lru_head_;
    UnlinkRetainedLocked(victim);
    ++stats_.evictions;
    stats_.evicted_bytes += victim->capacity;
    FreeToSystemLocked(victim);
  }
}

uint64_t ArenaCore::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t released = FreeAllRetainedLocked();
  ++stats_.trims;
  stats_.trimmed_bytes += released;
  return released;
}

uint64_t ArenaCore::FreeAllRetainedLocked() {
  uint64_t released = 0;
  while (lru_head_ != nullptr) {
    BufferRecord* r = lru_head_;
    UnlinkRetainedLocked(r);
    released += r->capacity;
    FreeToSystemLocked(r);
  }
  return released;
}

void ArenaCore::SetRetentionCap(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  cap_ = bytes;
  stats_.retention_cap_bytes = bytes;
  EnforceCapLocked();
}

uint64_t ArenaCore::retention_cap() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cap_;
}

void ArenaCore::ResetPeak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_live_bytes = stats_.live_bytes;
}

ArenaStats ArenaCore::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void ArenaCore::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  FreeAllRetainedLocked();
}

bool ArenaCore::HoldsPointer(const void* p) const {
  const auto* b = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t s = 0; s < slabs_.size(); ++s) {
    for (size_t i = 0; i < slab_sizes_[s]; ++i) {
      const BufferRecord& r = slabs_[s][i];
      if (r.state == BufferRecord::State::kUnused) continue;
      const auto* start = static_cast<const char*>(r.ptr);
      if (b >= start && b < start + r.capacity) return true;
    }
  }
  return false;
}

BufferRecord* ArenaCore::NewRecordLocked() {
  if (unused_ == nullptr) {
    // The arena grows: metadata for a batch of buffers at once, doubling up to 1024.
    const size_t n = slab_sizes_.empty() ? 16 : std::min<size_t>(slab_sizes_.back() * 2, 1024);
    slabs_.push_back(std::make_unique<BufferRecord[]>(n));
    slab_sizes_.push_back(n);
    for (size_t i = n; i-- > 0;) RecycleRecordLocked(&slabs_.back()[i]);
  }
  BufferRecord* r = unused_;
  unused_ = r->next_unused;
  r->next_unused = nullptr;
  return r;
}

void ArenaCore::RecycleRecordLocked(BufferRecord* r) {
  r->ptr = nullptr;
  r->capacity = 0;
  r->requested = 0;
  r->size_class = -1;
  r->state = BufferRecord::State::kUnused;
  r->next_unused = unused_;
  unused_ = r;
}

void ArenaCore::PushRetainedLocked(BufferRecord* r) {
  r->state = BufferRecord::State::kRetained;
  const int c = r->size_class;
  r->class_next = nullptr;
  r->class_prev = class_tail_[c];
  if (class_tail_[c] != nullptr) {
    class_tail_[c]->class_next = r;
  } else {
    class_head_[c] = r;
  }
  class_tail_[c] = r;
  nonempty_.Set(c);
  r->lru_next = nullptr;
  r->lru_prev = lru_tail_;
  if (lru_tail_ != nullptr) {
    lru_tail_->lru_next = r;
  } else {
    lru_head_ = r;
  }
  lru_tail_ = r;
  ++stats_.retained_buffers;
  stats_.retained_bytes += r->capacity;
}

void ArenaCore::UnlinkRetainedLocked(BufferRecord* r) {
  assert(r->state == BufferRecord::State::kRetained);
  const int c = r->size_class;
  if (r->class_prev != nullptr) {
    r->class_prev->class_next = r->class_next;
  } else {
    class_head_[c] = r->class_next;
  }
  if (r->class_next != nullptr) {
    r->class_next->class_prev = r->class_prev;
  } else {
    class_tail_[c] = r->class_prev;
  }
  if (class_head_[c] == nullptr) nonempty_.Clear(c);
  if (r->lru_prev != nullptr) {
    r->lru_prev->lru_next = r->lru_next;
  } else {
    lru_head_ = r->lru_next;
  }
  if (r->lru_next != nullptr) {
    r->lru_next->lru_prev = r->lru_prev;
  } else {
    lru_tail_ = r->lru_prev;
  }
  r->class_prev = r->class_next = r->lru_prev = r->lru_next = nullptr;
  --stats_.retained_buffers;
  stats_.retained_bytes -= r->capacity;
}

void ArenaCore::FreeToSystemLocked(BufferRecord* r) {
  system_->Free(r->ptr, r->capacity);
  ++stats_.system_frees;
  RecycleRecordLocked(r);
}

}  // namespace inferd::memory

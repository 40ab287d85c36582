// Arena: what ExecutionArena and IOArena have in common: size-classed, capacity-preserving reuse
// of buffers from one device's SystemAllocator, a retention cap with least-recently-freed
// eviction, Trim, and live / retained / peak accounting. Buffers are handed out as
// AllocationHandles.
//
// Example:
//   ExecutionArena arena(std::make_shared<CpuSystemAllocator>("cpu:0"));
//   absl::StatusOr<AllocationHandle> h = arena.Allocate(1 << 20);
//   if (!h.ok()) return h.status();          // RESOURCE_EXHAUSTED, with sizes
//   Fill(h->data(), h->size());
//   h->Release();                            // now retained: the next 1 MiB request reuses it
//   arena.SetRetentionCap(256 << 10);        // evicts at once: 1 MiB > 256 KiB
//
// Thread-safe. Destroying the arena object frees what it retains; buffers still owned by handles
// or leases stay valid and go back to the system when released.
#ifndef INFERD_MEMORY_ARENA_H_
#define INFERD_MEMORY_ARENA_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "memory/allocation_handle.h"
#include "memory/arena_stats.h"
#include "memory/system_allocator.h"

namespace inferd::memory {

class ArenaCore;
namespace testing {
class ArenaInspector;
}  // namespace testing

class Arena {
 public:
  static constexpr uint64_t kUnbounded = UINT64_MAX;

  virtual ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A buffer of at least `bytes` (64-byte aligned), reused from the free lists when one fits.
  absl::StatusOr<AllocationHandle> Allocate(size_t bytes);

  // Frees every retained buffer; live and leased buffers are untouched. Returns bytes released.
  uint64_t Trim();
  // Bounds the retained capacity; evicts least-recently-freed buffers at once if needed.
  void SetRetentionCap(uint64_t bytes);
  uint64_t retention_cap() const;
  void ResetPeak();
  ArenaStats Stats() const;

  ArenaKind kind() const;
  const std::string& device() const;
  const void* id() const { return core_.get(); }
  bool Owns(const AllocationHandle& h) const { return h.valid() && h.arena_id() == id(); }

 protected:
  friend class testing::ArenaInspector;  // memory/testing/arena_inspector.h (tests only)
  Arena(ArenaKind kind, std::shared_ptr<SystemAllocator> system);
  const std::shared_ptr<ArenaCore> core_;
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_ARENA_H_

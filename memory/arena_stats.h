// ArenaStats: a snapshot of one arena's counters, taken under the arena's lock, so the numbers
// in one snapshot are consistent with each other. Plain value type.
#ifndef INFERD_MEMORY_ARENA_STATS_H_
#define INFERD_MEMORY_ARENA_STATS_H_

#include <cstdint>
#include <string>

namespace inferd::memory {

enum class ArenaKind : uint8_t { kExecution, kIO };

// "execution" or "io": the label value used in metrics and the admin API.
const char* ArenaKindName(ArenaKind kind);

struct ArenaStats {
  std::string device;  // e.g. "cpu:0"
  ArenaKind kind = ArenaKind::kExecution;

  // Bytes are buffer capacities (what is really held); live_requested_bytes is what callers asked.
  uint64_t live_bytes = 0;  // owned by handles or leases; never includes retained capacity
  uint64_t live_requested_bytes = 0;
  uint64_t live_buffers = 0;
  uint64_t retained_bytes = 0;  // on the free lists, ready for reuse
  uint64_t retained_buffers = 0;
  uint64_t peak_live_bytes = 0;      // since creation or the last ResetPeak()
  uint64_t retention_cap_bytes = 0;  // UINT64_MAX when unbounded

  uint64_t allocations = 0;          // handles handed out
  uint64_t reuses = 0;               // of which served from retained buffers
  uint64_t allocation_failures = 0;  // RESOURCE_EXHAUSTED returned to a caller
  uint64_t system_allocations = 0;   // buffers taken from the SystemAllocator
  uint64_t system_frees = 0;         // buffers given back to it
  uint64_t evictions = 0;            // retained buffers freed because of the retention cap
  uint64_t evicted_bytes = 0;
  uint64_t trims = 0;  // Trim() calls
  uint64_t trimmed_bytes = 0;
  uint64_t outstanding_leases = 0;  // IOArena: buffers pinned by IOLeases

  // live + retained: what this arena holds from the system allocator right now.
  uint64_t system_bytes() const { return live_bytes + retained_bytes; }
  std::string ToString() const;
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_ARENA_STATS_H_

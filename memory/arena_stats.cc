#include "memory/arena_stats.h"

#include "absl/strings/str_cat.h"

namespace inferd::memory {

const char* ArenaKindName(ArenaKind kind) {
  return kind == ArenaKind::kExecution ? "execution" : "io";
}

std::string ArenaStats::ToString() const {
  std::string cap =
      retention_cap_bytes == UINT64_MAX ? "unbounded" : absl::StrCat(retention_cap_bytes);
  return absl::StrCat(device, "/", ArenaKindName(kind), ": live ", live_bytes, " B in ",
                      live_buffers, " buffers, retained ", retained_bytes, " B in ",
                      retained_buffers, " buffers, peak live ", peak_live_bytes, " B, cap ", cap,
                      ", system allocations ", system_allocations, ", frees ", system_frees,
                      ", evictions ", evictions, ", trims ", trims, " (", trimmed_bytes,
                      " B), leases ", outstanding_leases);
}

}  // namespace inferd::memory

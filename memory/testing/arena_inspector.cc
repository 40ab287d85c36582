#include "memory/testing/arena_inspector.h"

#include "memory/arena_core.h"

namespace inferd::memory::testing {

bool ArenaInspector::HoldsPointer(const Arena& arena, const void* p) {
  return arena.core_->HoldsPointer(p);
}

}  // namespace inferd::memory::testing

// Test helpers for code that uses arenas: which arena holds a pointer. Tests only (testonly
// target //memory:arena_inspector); production code asks an arena about its handles (Owns).
#ifndef INFERD_MEMORY_TESTING_ARENA_INSPECTOR_H_
#define INFERD_MEMORY_TESTING_ARENA_INSPECTOR_H_

#include "memory/arena.h"

namespace inferd::memory::testing {

class ArenaInspector {
 public:
  // True if `p` points into a buffer `arena` holds (live, leased or retained). O(buffers).
  static bool HoldsPointer(const Arena& arena, const void* p);
};

// Shorthand: ArenaInspector::HoldsPointer.
inline bool HoldsPointer(const Arena& arena, const void* p) {
  return ArenaInspector::HoldsPointer(arena, p);
}

}  // namespace inferd::memory::testing

#endif  // INFERD_MEMORY_TESTING_ARENA_INSPECTOR_H_

// ExecutionArena: the buffers of one device that live only inside a run: node intermediates
// (freed at their last use) and kernel workspaces. Never holds graph outputs. Thread-safe; see
// memory/arena.h for the reuse, cap and trim behaviour.
#ifndef INFERD_MEMORY_EXECUTION_ARENA_H_
#define INFERD_MEMORY_EXECUTION_ARENA_H_

#include <memory>

#include "memory/arena.h"

namespace inferd::memory {

class ExecutionArena final : public Arena {
 public:
  explicit ExecutionArena(std::shared_ptr<SystemAllocator> system)
      : Arena(ArenaKind::kExecution, std::move(system)) {}
};

}  // namespace inferd::memory

#endif  // INFERD_MEMORY_EXECUTION_ARENA_H_

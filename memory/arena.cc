#include "memory/arena.h"

#include "memory/arena_core.h"

namespace inferd::memory {

Arena::Arena(ArenaKind kind, std::shared_ptr<SystemAllocator> system)
    : core_(std::make_shared<ArenaCore>(kind, std::move(system))) {}

Arena::~Arena() { core_->Close(); }

absl::StatusOr<AllocationHandle> Arena::Allocate(size_t bytes) { return core_->Allocate(bytes); }
uint64_t Arena::Trim() { return core_->Trim(); }
void Arena::SetRetentionCap(uint64_t bytes) { core_->SetRetentionCap(bytes); }
uint64_t Arena::retention_cap() const { return core_->retention_cap(); }
void Arena::ResetPeak() { core_->ResetPeak(); }
ArenaStats Arena::Stats() const { return core_->Stats(); }
ArenaKind Arena::kind() const { return core_->kind(); }
const std::string& Arena::device() const { return core_->device(); }

}  // namespace inferd::memory

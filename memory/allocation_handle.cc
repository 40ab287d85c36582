#include "memory/allocation_handle.h"

#include "memory/arena_core.h"

namespace inferd::memory {

ArenaKind AllocationHandle::arena_kind() const { return core_->kind(); }

void AllocationHandle::Release() {
  if (record_ == nullptr) return;
  BufferRecord* r = record_;
  record_ = nullptr;
  data_ = nullptr;
  size_ = capacity_ = 0;
  core_->ReturnLive(r);
  core_.reset();
}

}  // namespace inferd::memory

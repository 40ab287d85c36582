#include "memory/io_arena.h"

#include "absl/strings/str_cat.h"
#include "memory/arena_core.h"

namespace inferd::memory {

absl::StatusOr<IOLease> IOArena::Export(AllocationHandle&& handle) {
  void* data = handle.data();
  const size_t size = handle.size();
  const size_t capacity = handle.capacity();
  absl::StatusOr<BufferRecord*> record = core_->Lease(handle);
  if (!record.ok()) return record.status();
  return IOLease(core_, *record, data, size, capacity);
}

IOLease::IOLease(const IOLease& other)
    : core_(other.core_),
      record_(other.record_),
      data_(other.data_),
      size_(other.size_),
      capacity_(other.capacity_) {
  if (record_ != nullptr) record_->lease_refs.fetch_add(1, std::memory_order_relaxed);
}

IOLease& IOLease::operator=(const IOLease& other) {
  if (this != &other) {
    IOLease copy(other);
    *this = std::move(copy);
  }
  return *this;
}

IOLease::IOLease(IOLease&& other) noexcept
    : core_(std::move(other.core_)),
      record_(other.record_),
      data_(other.data_),
      size_(other.size_),
      capacity_(other.capacity_) {
  other.record_ = nullptr;
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
}

IOLease& IOLease::operator=(IOLease&& other) noexcept {
  if (this != &other) {
    Reset();
    core_ = std::move(other.core_);
    record_ = other.record_;
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.record_ = nullptr;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  return *this;
}

absl::StatusOr<IOLease> IOLease::Slice(size_t offset, size_t size) const {
  if (record_ == nullptr) return absl::InvalidArgumentError("cannot slice an empty lease");
  // offset + size may overflow; offset <= size_ makes size_ - offset safe.
  if (offset > size_ || size > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrCat("slice [", offset, ", +", size,
                                                   ") is outside the lease of ", size_, " bytes"));
  }
  IOLease slice(*this);  // shares the pin
  slice.data_ = static_cast<uint8_t*>(data_) + offset;
  slice.size_ = size;
  slice.capacity_ = size;
  return slice;
}

int IOLease::use_count() const {
  return record_ == nullptr ? 0 : record_->lease_refs.load(std::memory_order_acquire);
}

void IOLease::Reset() {
  if (record_ == nullptr) return;
  BufferRecord* r = record_;
  record_ = nullptr;
  data_ = nullptr;
  size_ = capacity_ = 0;
  if (r->lease_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) core_->ReturnLeased(r);
  core_.reset();
}

}  // namespace inferd::memory

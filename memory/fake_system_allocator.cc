#include "memory/fake_system_allocator.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::memory {

FakeSystemAllocator::~FakeSystemAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [p, bytes] : outstanding_) std::free(const_cast<void*>(p));
}

void FakeSystemAllocator::FailNextAllocations(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = n;
}

void FakeSystemAllocator::SetFailAll(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_all_ = fail;
}

void FakeSystemAllocator::SetLimit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  limit_ = bytes;
}

std::map<const void*, size_t> FakeSystemAllocator::Outstanding() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outstanding_;
}

uint64_t FakeSystemAllocator::misuses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misuses_;
}

absl::StatusOr<void*> FakeSystemAllocator::DoAllocate(size_t bytes, size_t alignment) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fail_all_ || fail_next_ > 0 || (limit_ != SIZE_MAX && held_ + bytes > limit_)) {
    if (fail_next_ > 0) --fail_next_;
    return absl::ResourceExhaustedError(
        absl::StrCat(device(), ": fake allocator refused ", bytes, " bytes (", held_, " held)"));
  }
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  if (p == nullptr) return absl::ResourceExhaustedError("aligned_alloc failed");
  outstanding_[p] = bytes;
  held_ += bytes;
  return p;
}

void FakeSystemAllocator::DoFree(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outstanding_.find(ptr);
  if (it == outstanding_.end() || it->second != bytes) {
    ++misuses_;
    return;
  }
  held_ -= bytes;
  outstanding_.erase(it);
  std::free(ptr);
}

}  // namespace inferd::memory

#include "server/kv_budget.h"

#include "absl/strings/str_cat.h"

namespace inferd::server {

KvBudget::Reservation& KvBudget::Reservation::operator=(Reservation&& o) noexcept {
  if (this != &o) {
    Release();
    budget_ = std::move(o.budget_);
    bytes_ = o.bytes_;
    o.bytes_ = 0;
  }
  return *this;
}

void KvBudget::Reservation::Release() {
  if (budget_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(budget_->mu_);
    budget_->reserved_ -= bytes_;
    --budget_->sequences_;
  }
  budget_.reset();
  bytes_ = 0;
}

absl::StatusOr<KvBudget::Reservation> KvBudget::Reserve(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > budget_ - std::min(reserved_, budget_)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(absl::StrCat(
        "KV cache budget: this sequence needs ", bytes, " bytes, ", reserved_, " of ", budget_,
        " are held by ", sequences_, " running sequence(s); retry later or ask for fewer tokens"));
  }
  reserved_ += bytes;
  ++sequences_;
  return Reservation(shared_from_this(), bytes);
}

uint64_t KvBudget::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

uint64_t KvBudget::sequences() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sequences_;
}

}  // namespace inferd::server

// KvBudget: the bytes of KV cache one generative model's sequences may hold together
// (`generation.kv_cache_budget`, docs/generation.md). A sequence reserves its block's bytes
// before it starts; when they do not fit beside the others it is refused then, with the figures,
// never stopped midway. A Reservation gives its bytes back when destroyed (move-only).
// Thread-safe; counters are read by the metrics.
#ifndef INFERD_SERVER_KV_BUDGET_H_
#define INFERD_SERVER_KV_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "absl/status/statusor.h"

namespace inferd::server {

class KvBudget : public std::enable_shared_from_this<KvBudget> {
 public:
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& o) noexcept : budget_(std::move(o.budget_)), bytes_(o.bytes_) {
      o.bytes_ = 0;
    }
    Reservation& operator=(Reservation&& o) noexcept;
    ~Reservation() { Release(); }
    uint64_t bytes() const { return bytes_; }
    void Release();

   private:
    friend class KvBudget;
    Reservation(std::shared_ptr<KvBudget> b, uint64_t bytes)
        : budget_(std::move(b)), bytes_(bytes) {}
    std::shared_ptr<KvBudget> budget_;
    uint64_t bytes_ = 0;
  };

  explicit KvBudget(uint64_t budget_bytes) : budget_(budget_bytes) {}

  // `bytes` more, or RESOURCE_EXHAUSTED naming the budget, what is in use and by how many
  // sequences. Create the KvBudget with std::make_shared.
  absl::StatusOr<Reservation> Reserve(uint64_t bytes);

  uint64_t budget_bytes() const { return budget_; }
  uint64_t reserved_bytes() const;
  uint64_t sequences() const;
  uint64_t refused() const { return refused_.load(); }

 private:
  const uint64_t budget_;
  mutable std::mutex mu_;
  // Protected by mu_.
  uint64_t reserved_ = 0;
  uint64_t sequences_ = 0;
  std::atomic<uint64_t> refused_{0};
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_KV_BUDGET_H_

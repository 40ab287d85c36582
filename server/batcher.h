// Batcher: a model's queue with Triton's dynamic batching (config.h's `dynamic_batching`), a
// ModelWorker whose workers gather compatible requests into one model run.
//
// Each of the max_concurrent_runs workers takes the oldest request of the highest priority level
// (1 is the highest) and then the requests behind it, while they are compatible with it
// (WorkItem::BatchesWith: the same inputs apart from dim 0, the same outputs) and the batch
// (each request counts its batch_size(), its dim 0) stays within max_batch_size:
//   - a batch of max_batch_size, or one that the next request would not fit or could not join
//     (an incompatible request starts the next batch), runs at once;
//   - else, when the gathered requests reach preferred sizes, the largest such prefix runs;
//   - else the worker waits for more until the oldest request has waited max_queue_delay, then
//     runs what it has.
// Before a batch forms, requests whose client cancelled or whose deadline passed are dropped
// (WorkItem::Drop), and the queue policy of their level applies: a request queued longer than
// its timeout (the level's, or with allow_timeout_override the request's own if shorter) is
// answered UNAVAILABLE (REJECT) or served after every request that has not timed out (DELAY).
// Submit answers RESOURCE_EXHAUSTED when the level already holds max_queue_size requests (0:
// queue_length). With preserve_ordering, batches answer in the order they were formed: arrival
// order within a priority level (queue errors are answered at once).
//
// Thread-safe.
#ifndef INFERD_SERVER_BATCHER_H_
#define INFERD_SERVER_BATCHER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/config.h"
#include "server/model_stats.h"
#include "server/model_worker.h"

namespace inferd::server {

class Batcher final : public ModelWorker {
 public:
  // `policy` must be consistent with `max_batch_size` (config's BatchingError); `stats` must
  // outlive the batcher. Starts `runs` workers.
  Batcher(std::string model_name, int max_batch_size, DynamicBatching policy, int runs,
          int queue_length, ModelStats* stats);
  ~Batcher() override;  // Drain()

  // UNAVAILABLE once Drain has begun, RESOURCE_EXHAUSTED when the item's level is full,
  // INVALID_ARGUMENT for a batch_size() past max_batch_size or a priority past the levels; on
  // error the item stays with the caller.
  absl::Status Submit(std::unique_ptr<WorkItem>& item) override;
  void Drain() override;
  int queued() const override;
  int running() const override;

 private:
  struct Entry {
    std::unique_ptr<WorkItem> item;
    absl::Time enqueued;
    absl::Time timeout_at;  // InfiniteFuture: none
    bool reject_on_timeout = true;
  };
  struct Dropped {
    std::unique_ptr<WorkItem> item;
    absl::Status why;
  };
  // A batch the calling worker is to run, or none and when to look again.
  struct Formed {
    std::vector<Entry> batch;
    absl::Time wake = absl::InfiniteFuture();
  };

  void Loop();
  void RunFormed(std::vector<Entry> batch, uint64_t ticket);
  // Under mu_: drops what must not wait any longer into `dropped`, moves DELAY timeouts.
  void Sweep(absl::Time now, std::vector<Dropped>* dropped, absl::Time* next_event);
  // Under mu_: the batch to run now, or when to look again.
  Formed Form(absl::Time now, absl::Time next_event);
  const QueuePolicy& PolicyOf(int level) const;
  int QueuedLocked() const;  // under mu_

  // Constant after construction.
  const std::string model_name_;
  const int max_batch_size_;
  const DynamicBatching policy_;
  const int queue_length_;
  ModelStats* const stats_;
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable work_;
  std::condition_variable turn_;  // preserve_ordering: answered_ moved on
  // levels_[0..L-1]: priority 1..L; levels_[L]: timed-out requests of DELAY policies.
  std::vector<std::deque<Entry>> levels_;
  int running_ = 0;
  bool stopping_ = false;
  uint64_t next_ticket_ = 0;  // batches formed
  uint64_t answered_ = 0;     // batches answered, in ticket order (preserve_ordering)
  std::once_flag joined_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_BATCHER_H_

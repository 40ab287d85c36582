// ModelWorker: one model's bounded request queue and the threads that run it.
//
// Submit never blocks: it queues the item, or answers RESOURCE_EXHAUSTED at once when
// `queue_length` items already wait (beyond the ones free workers are about to take). Each of the
// `threads` workers takes the oldest item; an item whose client cancelled or whose deadline
// passed while it waited is dropped (WorkItem::Drop) without running, and counted. Queue time is
// recorded in ModelStats. gRPC's threads only call Submit; the model runs on these threads.
//
// Drain stops taking new items, lets the workers finish every queued and running item, and joins
// them (unload and shutdown both wait for in-flight requests this way).
//
// A model with dynamic batching gets a Batcher (server/batcher.h) instead: the same interface,
// its workers gather compatible items into one run through WorkItem's batching hooks.
//
// Thread-safe.
#ifndef INFERD_SERVER_MODEL_WORKER_H_
#define INFERD_SERVER_MODEL_WORKER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/model_stats.h"

namespace inferd::server {

// One unit of work (a ModelInfer call). Exactly one of Run and Drop is called, then the item is
// destroyed, on a worker thread (or on the caller's thread if Submit fails: neither is called).
class WorkItem {
 public:
  virtual ~WorkItem() = default;
  // Runs the model and answers the call.
  virtual void Run(absl::Duration queued) = 0;
  // Answers the call with `why` (CANCELLED, DEADLINE_EXCEEDED) without running the model.
  virtual void Drop(const absl::Status& why) = 0;
  // Polled when a worker takes the item.
  virtual bool Cancelled() const { return false; }
  virtual absl::Time deadline() const { return absl::InfiniteFuture(); }

  // Batching hooks (a Batcher's items). An item counts batch_size() toward a run's batch; it
  // joins a run only when BatchesWith(leader) holds.
  struct Queued {
    WorkItem* item;
    absl::Duration queued;
  };
  virtual int64_t batch_size() const { return 1; }
  // 1 is the highest; 0: the model's default level.
  virtual int priority() const { return 0; }
  // The request's own queue timeout (Triton's `timeout` parameter); zero: none.
  virtual absl::Duration requested_timeout() const { return absl::ZeroDuration(); }
  virtual bool BatchesWith(const WorkItem& leader) const { return false; }
  // Runs `batch` (batch[0] is this item, the others BatchesWith it) as one model run and
  // answers every item; calls `before_answer` once, after the run and before the first answer
  // (the Batcher's turn when responses keep their order). The default runs them one by one.
  virtual void RunBatch(absl::Span<const Queued> batch, const std::function<void()>& before_answer);
};

class ModelWorker {
 public:
  // `stats` must outlive the worker.
  ModelWorker(std::string model_name, int threads, int queue_length, ModelStats* stats);
  virtual ~ModelWorker();  // Drain()
  ModelWorker(const ModelWorker&) = delete;
  ModelWorker& operator=(const ModelWorker&) = delete;

  // Queues `item` (ownership passes on success). RESOURCE_EXHAUSTED when the queue is full,
  // UNAVAILABLE once Drain has begun; on error the item stays with the caller.
  virtual absl::Status Submit(std::unique_ptr<WorkItem>& item);

  // Stops accepting, waits for every queued and running item to finish, joins the workers.
  virtual void Drain();

  virtual int queued() const;
  virtual int running() const;

 protected:
  // For a subclass that keeps its own queue and threads: this object starts none.
  explicit ModelWorker(ModelStats* stats);

 private:
  struct Entry {
    std::unique_ptr<WorkItem> item;
    absl::Time enqueued;
  };
  void Loop();

  // Constant after construction.
  const std::string model_name_;
  const int queue_length_;
  ModelStats* const stats_;
  std::vector<std::thread> threads_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable work_;
  std::deque<Entry> queue_;
  int running_ = 0;
  bool stopping_ = false;
  std::once_flag joined_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_MODEL_WORKER_H_

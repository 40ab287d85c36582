#include "server/model_worker.h"

#include <system_error>

#include "absl/strings/str_cat.h"

namespace inferd::server {

ModelWorker::ModelWorker(std::string model_name, int threads, int queue_length, ModelStats* stats)
    : model_name_(std::move(model_name)), queue_length_(std::max(0, queue_length)), stats_(stats) {
  threads = std::max(1, threads);
  threads_.reserve(threads);
  try {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  } catch (const std::system_error&) {
    // The system would not start one more thread: stop and join those started (a joinable
    // std::thread would terminate the process), then let the load fail.
    Drain();
    throw;
  }
}

ModelWorker::ModelWorker(ModelStats* stats) : queue_length_(0), stats_(stats) {}

ModelWorker::~ModelWorker() { Drain(); }

void WorkItem::RunBatch(absl::Span<const Queued> batch,
                        const std::function<void()>& before_answer) {
  // Items that cannot share a run answer as they finish: the turn is taken before the first.
  before_answer();
  for (const Queued& q : batch) q.item->Run(q.queued);
}

absl::Status ModelWorker::Submit(std::unique_ptr<WorkItem>& item) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    return absl::UnavailableError(absl::StrCat("model '", model_name_, "' is unloading"));
  }
  // Items that free workers are about to take do not count as waiting.
  const int free_workers = static_cast<int>(threads_.size()) - running_;
  const int waiting = static_cast<int>(queue_.size()) - free_workers;
  if (waiting >= queue_length_) {
    stats_->rejected_queue_full.fetch_add(1, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(
        absl::StrCat("model '", model_name_, "' is busy: ", running_, " running and ",
                     queue_length_, " waiting (queue_length ", queue_length_, "); retry later"));
  }
  queue_.push_back({std::move(item), absl::Now()});
  work_.notify_one();
  return absl::OkStatus();
}

void ModelWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping and nothing left
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    const absl::Time now = absl::Now();
    const absl::Duration queued = now - e.enqueued;
    stats_->queue.Record(queued);
    if (e.item->Cancelled()) {
      stats_->dropped_cancelled.fetch_add(1, std::memory_order_relaxed);
      e.item->Drop(absl::CancelledError("the client cancelled the request while it was queued"));
    } else if (now >= e.item->deadline()) {
      stats_->dropped_deadline.fetch_add(1, std::memory_order_relaxed);
      e.item->Drop(absl::DeadlineExceededError(absl::StrCat(
          "the deadline passed while the request was queued for ", absl::FormatDuration(queued))));
    } else {
      e.item->Run(queued);
    }
    e.item.reset();
    lock.lock();
    --running_;
    if (stopping_) work_.notify_all();
  }
}

void ModelWorker::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

int ModelWorker::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

int ModelWorker::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace inferd::server

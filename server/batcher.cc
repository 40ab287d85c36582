#include "server/batcher.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"

namespace inferd::server {

Batcher::Batcher(std::string model_name, int max_batch_size, DynamicBatching policy, int runs,
                 int queue_length, ModelStats* stats)
    : ModelWorker(stats),
      model_name_(std::move(model_name)),
      max_batch_size_(std::max(1, max_batch_size)),
      policy_(std::move(policy)),
      queue_length_(std::max(0, queue_length)),
      stats_(stats),
      levels_(std::max(1, policy_.priority_levels) + 1) {
  runs = std::max(1, runs);
  threads_.reserve(runs);
  try {
    for (int i = 0; i < runs; ++i) threads_.emplace_back([this] { Loop(); });
  } catch (const std::system_error&) {
    Drain();  // join the workers started (see ModelWorker's constructor)
    throw;
  }
}

Batcher::~Batcher() { Drain(); }

const QueuePolicy& Batcher::PolicyOf(int level) const {
  auto it = policy_.priority_queue_policy.find(level);
  return it == policy_.priority_queue_policy.end() ? policy_.default_queue_policy : it->second;
}

absl::Status Batcher::Submit(std::unique_ptr<WorkItem>& item) {
  const int64_t size = item->batch_size();
  if (size < 1 || size > max_batch_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request's batch size (dim 0) is ", size, "; model '", model_name_,
                     "' takes at most max_batch_size ", max_batch_size_, " per request"));
  }
  const int levels = std::max(1, policy_.priority_levels);
  int level = item->priority();
  if (policy_.priority_levels == 0) {
    level = 1;  // one level: Triton ignores the priority
  } else if (level == 0) {
    level = policy_.default_priority_level;
  }
  if (level < 1 || level > levels) {
    return absl::InvalidArgumentError(absl::StrCat("priority ", level, ": model '", model_name_,
                                                   "' has priority levels 1 (highest) to ",
                                                   levels));
  }
  const QueuePolicy& policy = PolicyOf(level);
  absl::Duration timeout = policy.default_timeout;
  const absl::Duration own = item->requested_timeout();
  if (policy.allow_timeout_override && own > absl::ZeroDuration()) {
    timeout = timeout == absl::ZeroDuration() ? own : std::min(timeout, own);
  }
  const size_t max_queued = policy.max_queue_size > 0 ? policy.max_queue_size : queue_length_;

  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    return absl::UnavailableError(absl::StrCat("model '", model_name_, "' is unloading"));
  }
  std::deque<Entry>& queue = levels_[level - 1];
  if (queue.size() >= max_queued) {
    stats_->rejected_queue_full.fetch_add(1, std::memory_order_relaxed);
    return absl::ResourceExhaustedError(absl::StrCat(
        "model '", model_name_, "' is busy: ", queue.size(), " requests wait at priority ", level,
        " (max_queue_size ", max_queued, "); retry later"));
  }
  const absl::Time now = absl::Now();
  Entry e{std::move(item), now,
          timeout > absl::ZeroDuration() ? now + timeout : absl::InfiniteFuture(),
          policy.reject_on_timeout};
  queue.push_back(std::move(e));
  work_.notify_one();
  return absl::OkStatus();
}

void Batcher::Sweep(absl::Time now, std::vector<Dropped>* dropped, absl::Time* next_event) {
  std::deque<Entry>& delayed = levels_.back();
  for (std::deque<Entry>& level : levels_) {
    std::deque<Entry> kept;
    for (Entry& e : level) {
      const absl::Duration waited = now - e.enqueued;
      if (e.item->Cancelled()) {
        stats_->dropped_cancelled.fetch_add(1, std::memory_order_relaxed);
        dropped->push_back(
            {std::move(e.item), absl::CancelledError("the client cancelled the request while it "
                                                     "was queued")});
      } else if (now >= e.item->deadline()) {
        stats_->dropped_deadline.fetch_add(1, std::memory_order_relaxed);
        dropped->push_back(
            {std::move(e.item), absl::DeadlineExceededError(absl::StrCat(
                                    "the deadline passed while the request was queued for ",
                                    absl::FormatDuration(waited)))});
      } else if (now >= e.timeout_at && e.reject_on_timeout) {
        dropped->push_back({std::move(e.item), absl::UnavailableError(absl::StrCat(
                                                   "the request timed out in the queue after ",
                                                   absl::FormatDuration(waited), " (model '",
                                                   model_name_, "' queue policy timeout)"))});
      } else if (now >= e.timeout_at && &level != &delayed) {
        e.timeout_at = absl::InfiniteFuture();  // DELAY: served after the others
        delayed.push_back(std::move(e));
      } else {
        *next_event = std::min({*next_event, e.item->deadline(), e.timeout_at});
        kept.push_back(std::move(e));
      }
    }
    level = std::move(kept);  // the delayed level comes last: it keeps what moved there
  }
}

Batcher::Formed Batcher::Form(absl::Time now, absl::Time next_event) {
  Formed out;
  size_t first = 0;
  while (first < levels_.size() && levels_[first].empty()) ++first;
  if (first == levels_.size()) return out;
  const Entry& head = levels_[first].front();
  int64_t total = 0;
  bool closed = false;  // the next request cannot join: waiting gains nothing
  std::vector<int64_t> sums;
  for (size_t l = first; l < levels_.size() && !closed; ++l) {
    for (const Entry& e : levels_[l]) {
      const int64_t size = e.item->batch_size();
      if ((!sums.empty() && !e.item->BatchesWith(*head.item)) || total + size > max_batch_size_) {
        closed = true;
        break;
      }
      total += size;
      sums.push_back(total);
    }
  }
  size_t take = 0;
  if (total == max_batch_size_ || closed || stopping_) {
    take = sums.size();
  } else {
    const std::vector<int>& preferred = policy_.preferred_batch_sizes;
    for (size_t k = sums.size(); k > 0 && take == 0; --k) {
      if (std::binary_search(preferred.begin(), preferred.end(), sums[k - 1])) take = k;
    }
  }
  const absl::Time due = head.enqueued + policy_.max_queue_delay;
  if (take == 0 && now >= due) take = sums.size();
  if (take == 0) {
    out.wake = std::min(due, next_event);
    return out;
  }
  out.batch.reserve(take);
  for (size_t l = first; out.batch.size() < take; ++l) {
    while (!levels_[l].empty() && out.batch.size() < take) {
      out.batch.push_back(std::move(levels_[l].front()));
      levels_[l].pop_front();
    }
  }
  return out;
}

void Batcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const absl::Time now = absl::Now();
    std::vector<Dropped> dropped;
    absl::Time next_event = absl::InfiniteFuture();
    Sweep(now, &dropped, &next_event);
    if (!dropped.empty()) {
      lock.unlock();
      for (Dropped& d : dropped) {
        d.item->Drop(d.why);
        d.item.reset();
      }
      lock.lock();
      continue;
    }
    Formed formed = Form(now, next_event);
    if (!formed.batch.empty()) {
      const uint64_t ticket = next_ticket_++;
      ++running_;
      if (QueuedLocked() > 0) work_.notify_one();  // what is left may be another worker's batch
      lock.unlock();
      RunFormed(std::move(formed.batch), ticket);
      lock.lock();
      --running_;
      if (stopping_) work_.notify_all();
      continue;
    }
    if (stopping_ && formed.wake == absl::InfiniteFuture()) return;  // nothing is left
    if (formed.wake == absl::InfiniteFuture()) {
      work_.wait(lock);
    } else {
      work_.wait_until(lock, absl::ToChronoTime(formed.wake));
    }
  }
}

void Batcher::RunFormed(std::vector<Entry> batch, uint64_t ticket) {
  const absl::Time now = absl::Now();
  std::vector<WorkItem::Queued> queued;
  queued.reserve(batch.size());
  for (const Entry& e : batch) {
    queued.push_back({e.item.get(), now - e.enqueued});
    stats_->queue.Record(now - e.enqueued);
  }
  bool took_turn = false;
  const auto take_turn = [&] {
    if (!policy_.preserve_ordering || took_turn) return;
    std::unique_lock<std::mutex> lock(mu_);
    turn_.wait(lock, [&] { return answered_ == ticket; });
    took_turn = true;
  };
  batch.front().item->RunBatch(queued, take_turn);
  {
    take_turn();  // a RunBatch that answered nothing still passes the turn on
    std::lock_guard<std::mutex> lock(mu_);
    answered_ = std::max(answered_, ticket + 1);
  }
  turn_.notify_all();
  batch.clear();  // the items go outside the lock
}

void Batcher::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

int Batcher::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return QueuedLocked();
}

int Batcher::QueuedLocked() const {
  size_t n = 0;
  for (const std::deque<Entry>& level : levels_) n += level.size();
  return static_cast<int>(n);
}

int Batcher::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

}  // namespace inferd::server

#include "engine/thread_pool.h"

#include <algorithm>

namespace inferd::engine {

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk,
                             absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int64_t max_chunks = std::min<int64_t>(num_threads_, (n + min_chunk - 1) / min_chunk);
  if (max_chunks <= 1 || !busy_.try_lock()) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  fn_ = &fn;
  n_ = n;
  chunks_ = max_chunks;
  chunk_ = (n + chunks_ - 1) / chunks_;
  next_chunk_ = 0;
  pending_ = chunks_;
  ++generation_;
  work_cv_.notify_all();
  // The caller takes chunks too.
  while (next_chunk_ < chunks_) {
    const int64_t c = next_chunk_++;
    lock.unlock();
    fn(c * chunk_, std::min(n, (c + 1) * chunk_));
    lock.lock();
    --pending_;
  }
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
  lock.unlock();
  busy_.unlock();
}

void ThreadPool::WorkerLoop(int) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || (generation_ != seen && next_chunk_ < chunks_); });
    if (stop_) return;
    seen = generation_;
    while (fn_ != nullptr && next_chunk_ < chunks_) {
      const int64_t c = next_chunk_++;
      const auto* fn = fn_;
      const int64_t n = n_, chunk = chunk_;
      lock.unlock();
      (*fn)(c * chunk, std::min(n, (c + 1) * chunk));
      lock.lock();
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
}

}  // namespace inferd::engine

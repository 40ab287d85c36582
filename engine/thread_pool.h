// ThreadPool: a session's intra-op threads. ParallelFor splits [0, n) into contiguous chunks and
// runs them on the pool's threads plus the caller. One ParallelFor runs at a time per pool; a
// second caller (another concurrent run) that finds the pool busy runs its loop inline instead of
// waiting. No allocation per call. Thread-safe.
//
// Waking a sleeping thread costs tens of microseconds on a VM, as much as a small kernel's whole
// work, so workers spin for a short while (kSpin) after each loop before they sleep on a condition
// variable, and the caller spins before it sleeps waiting for the last chunk.
//
// Example:
//   pool.ParallelFor(rows, /*min_chunk=*/16, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) Row(r);
//   });
#ifndef INFERD_ENGINE_THREAD_POOL_H_
#define INFERD_ENGINE_THREAD_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace inferd::engine {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kSpin{50};

  // `num_threads` counts the caller: 1 means everything runs inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n), each at least `min_chunk` long
  // (except possibly the last). Returns when every chunk is done. `fn` is a FunctionRef: no
  // allocation per call, whatever the lambda captures.
  void ParallelFor(int64_t n, int64_t min_chunk, absl::FunctionRef<void(int64_t, int64_t)> fn);

 private:
  void WorkerLoop();
  // Claims and runs chunks of loop `generation` until none is left.
  void RunChunks(uint32_t generation);

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller of the ParallelFor in progress

  // The loop in progress: written by its caller while `work_` says there is nothing to claim,
  // then published by `work_`; unchanged until `pending_` is back to 0. Atomics (relaxed) because
  // a thread finishing the previous loop may still look at them; the claim on `work_` orders them.
  std::atomic<const absl::FunctionRef<void(int64_t, int64_t)>*> fn_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<int64_t> chunk_{0};
  std::atomic<uint32_t> chunks_{0};
  // (generation << 32) | next chunk to claim: a thread claims a chunk only of the loop it saw.
  std::atomic<uint64_t> work_{0};
  std::atomic<uint32_t> pending_{0};  // chunks not yet finished
  std::atomic<bool> stop_{false};

  std::mutex mu_;  // for the sleeping side of the condition variables only
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_THREAD_POOL_H_

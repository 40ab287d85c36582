// ThreadPool: a session's intra-op threads. ParallelFor splits [0, n) into contiguous chunks and
// runs them on the pool's threads plus the caller. One ParallelFor runs at a time per pool; a
// second caller (another concurrent run) that finds the pool busy runs its loop inline instead of
// waiting. No allocation per call. Thread-safe.
//
// Example:
//   pool.ParallelFor(rows, /*min_chunk=*/16, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) Row(r);
//   });
#ifndef INFERD_ENGINE_THREAD_POOL_H_
#define INFERD_ENGINE_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>
#include "absl/functional/function_ref.h"

namespace inferd::engine {

class ThreadPool {
 public:
  // `num_threads` counts the caller: 1 means everything runs inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n), each at least `min_chunk` long
  // (except possibly the last). Returns when every chunk is done.
  // `fn` is a FunctionRef: no allocation per call, whatever the lambda captures.
  void ParallelFor(int64_t n, int64_t min_chunk, absl::FunctionRef<void(int64_t, int64_t)> fn);

 private:
  void WorkerLoop(int index);

  const int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller of the ParallelFor in progress

  std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const absl::FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  int64_t chunks_ = 0;
  int64_t next_chunk_ = 0;
  int64_t pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_THREAD_POOL_H_

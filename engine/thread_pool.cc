#include "engine/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#define INFERD_PAUSE() _mm_pause()
#else
#define INFERD_PAUSE() std::this_thread::yield()
#endif

namespace inferd::engine {
namespace {

constexpr uint32_t kNothingToClaim = UINT32_MAX;

uint32_t GenerationOf(uint64_t work) { return static_cast<uint32_t>(work >> 32); }
uint32_t NextOf(uint64_t work) { return static_cast<uint32_t>(work); }

// Spins until `done()` or kSpin has passed; true if done.
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + ThreadPool::kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    INFERD_PAUSE();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return done();
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::RunChunks(uint32_t generation) {
  uint64_t cur = work_.load(std::memory_order_acquire);
  while (GenerationOf(cur) == generation && NextOf(cur) < chunks_.load(std::memory_order_relaxed)) {
    if (!work_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel)) continue;
    // The claim succeeded on this generation: its parameters are stable until pending_ is 0.
    const int64_t c = NextOf(cur);
    const int64_t n = n_.load(std::memory_order_relaxed);
    const int64_t chunk = chunk_.load(std::memory_order_relaxed);
    (*fn_.load(std::memory_order_relaxed))(c * chunk, std::min(n, (c + 1) * chunk));
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      { std::lock_guard<std::mutex> lock(mu_); }
      done_cv_.notify_all();
    }
    cur = work_.load(std::memory_order_acquire);
  }
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
  // pass 1: close the previous loop to late claimers, describe this one, then publish it.
  const uint32_t generation = GenerationOf(work_.load(std::memory_order_relaxed)) + 1;
  work_.store((static_cast<uint64_t>(generation) << 32) | kNothingToClaim,
              std::memory_order_release);
  fn_.store(&fn, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  chunks_.store(static_cast<uint32_t>(max_chunks), std::memory_order_relaxed);
  chunk_.store((n + max_chunks - 1) / max_chunks, std::memory_order_relaxed);
  pending_.store(static_cast<uint32_t>(max_chunks), std::memory_order_relaxed);
  work_.store(static_cast<uint64_t>(generation) << 32, std::memory_order_release);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  // pass 2: the caller takes chunks too, then waits for the others (spinning first).
  RunChunks(generation);
  auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(done)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, done);
  }
  busy_.unlock();
}

void ThreadPool::WorkerLoop() {
  uint32_t seen = GenerationOf(work_.load(std::memory_order_acquire));
  while (true) {
    auto ready = [&] {  // stopping, or a loop newer than the last one, fully published
      if (stop_.load(std::memory_order_acquire)) return true;
      const uint64_t w = work_.load(std::memory_order_acquire);
      return GenerationOf(w) != seen && NextOf(w) != kNothingToClaim;
    };
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, ready);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = GenerationOf(work_.load(std::memory_order_acquire));
    RunChunks(seen);
  }
}

}  // namespace inferd::engine

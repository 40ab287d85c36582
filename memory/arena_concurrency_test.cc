// Several threads allocate, write, verify, export, share and drop buffers of one ExecutionArena
// and one IOArena while another thread trims and changes caps. Run under --config=tsan in CI.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "memory/execution_arena.h"
#include "memory/io_arena.h"
#include "memory/system_allocator.h"

namespace inferd::memory {
namespace {

TEST(ArenaConcurrency, ManyThreadsKeepBuffersIntactAndAccountingExact) {
  auto sys = std::make_shared<CpuSystemAllocator>();
  ExecutionArena exec(sys);
  IOArena io(sys);
  std::mutex queue_mu;
  std::deque<IOLease> queue;  // leases handed between threads
  std::atomic<bool> stop{false};
  std::atomic<int> corrupt{0};
  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 15000;

  std::thread admin([&] {
    std::mt19937 rng(7);
    while (!stop.load()) {
      exec.Trim();
      io.SetRetentionCap(rng() % 2 ? Arena::kUnbounded : (rng() % (1 << 20)));
      exec.ResetPeak();
      (void)io.Stats();
      std::this_thread::yield();
    }
  });

  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      for (int op = 0; op < kOpsPerThread; ++op) {
        const size_t bytes = 1 + rng() % 20000;
        const unsigned char tag = static_cast<unsigned char>(rng());
        Arena& arena = (op % 3 == 0) ? static_cast<Arena&>(io) : exec;
        absl::StatusOr<AllocationHandle> h = arena.Allocate(bytes);
        if (!h.ok()) {
          corrupt++;
          continue;
        }
        std::memset(h->data(), tag, bytes);
        const auto* b = static_cast<unsigned char*>(h->data());
        if (b[0] != tag || b[bytes - 1] != tag) corrupt++;
        if (&arena == &io && op % 2 == 0) {
          absl::StatusOr<IOLease> lease = io.Export(std::move(*h));
          if (!lease.ok()) {
            corrupt++;
            continue;
          }
          std::lock_guard<std::mutex> lock(queue_mu);
          queue.push_back(std::move(*lease));
          if (queue.size() > 16) queue.pop_front();  // dropped here, maybe by another thread
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  admin.join();
  queue.clear();

  EXPECT_EQ(corrupt.load(), 0);
  const ArenaStats e = exec.Stats(), i = io.Stats();
  EXPECT_EQ(e.live_bytes, 0u);
  EXPECT_EQ(i.live_bytes, 0u);
  EXPECT_EQ(i.outstanding_leases, 0u);
  EXPECT_EQ(e.system_bytes() + i.system_bytes(), sys->stats().bytes_in_use);
  EXPECT_EQ(e.allocations + i.allocations, static_cast<uint64_t>(kThreads) * kOpsPerThread);
}

}  // namespace
}  // namespace inferd::memory

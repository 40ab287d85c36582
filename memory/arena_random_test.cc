// Seeded random operations over an ExecutionArena and an IOArena that share one fake system
// allocator. After every step: live + retained of both arenas equals what the system allocator
// holds, each arena's live bytes equal what its handles and leases own, retained stays under the
// cap, and no two live buffers overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "memory/execution_arena.h"
#include "memory/fake_system_allocator.h"
#include "memory/io_arena.h"

namespace inferd::memory {
namespace {

struct Live {
  const void* p;
  size_t capacity;
};

class RandomOps {
 public:
  explicit RandomOps(uint32_t seed) : rng_(seed) {}

  void Step() {
    switch (Uniform(0, 11)) {
      case 0:
      case 1:
      case 2:
        Allocate(Uniform(0, 1) == 0 ? exec_handles_ : io_handles_, exec_handles_);
        break;
      case 3:
      case 4:
        DropRandom(exec_handles_);
        break;
      case 5:
        DropRandom(io_handles_);
        break;
      case 6:
        if (!io_handles_.empty()) {
          const size_t k = Uniform(0, io_handles_.size() - 1);
          absl::StatusOr<IOLease> l = io_.Export(std::move(io_handles_[k]));
          ASSERT_TRUE(l.ok()) << l.status();
          io_handles_.erase(io_handles_.begin() + k);
          leases_.push_back(std::move(*l));
        }
        break;
      case 7:
        if (!leases_.empty()) leases_.push_back(leases_[Uniform(0, leases_.size() - 1)]);
        break;
      case 8:
        if (!leases_.empty()) leases_.erase(leases_.begin() + Uniform(0, leases_.size() - 1));
        break;
      case 9:
        (Uniform(0, 1) ? static_cast<Arena&>(exec_) : io_).Trim();
        break;
      case 10: {
        const uint64_t cap = Uniform(0, 3) == 0 ? Arena::kUnbounded : Uniform(0, 4 << 20);
        (Uniform(0, 1) ? static_cast<Arena&>(exec_) : io_).SetRetentionCap(cap);
        break;
      }
      case 11:
        exec_.ResetPeak();
        break;
    }
  }

  void Check(int step) {
    const ArenaStats e = exec_.Stats(), i = io_.Stats();
    uint64_t held = 0;
    std::vector<Live> live;
    for (auto& [p, bytes] : sys_->Outstanding()) held += bytes;
    ASSERT_EQ(e.system_bytes() + i.system_bytes(), held) << "step " << step;
    ASSERT_EQ(sys_->misuses(), 0u);

    uint64_t exec_live = 0, io_live = 0;
    for (auto& h : exec_handles_) {
      exec_live += h.capacity();
      live.push_back({h.data(), h.capacity()});
    }
    for (auto& h : io_handles_) {
      io_live += h.capacity();
      live.push_back({h.data(), h.capacity()});
    }
    std::vector<const void*> seen;
    for (auto& l : leases_) {
      if (std::find(seen.begin(), seen.end(), l.data()) != seen.end()) continue;
      seen.push_back(l.data());
      io_live += l.capacity();
      live.push_back({l.data(), l.capacity()});
    }
    ASSERT_EQ(e.live_bytes, exec_live) << "step " << step;
    ASSERT_EQ(i.live_bytes, io_live) << "step " << step;
    ASSERT_EQ(i.outstanding_leases, seen.size()) << "step " << step;
    ASSERT_LE(e.retained_bytes, e.retention_cap_bytes);
    ASSERT_LE(i.retained_bytes, i.retention_cap_bytes);
    ASSERT_GE(e.peak_live_bytes, e.live_bytes);

    std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.p < b.p; });
    for (size_t k = 1; k < live.size(); ++k) {
      ASSERT_LE(static_cast<const char*>(live[k - 1].p) + live[k - 1].capacity,
                static_cast<const char*>(live[k].p))
          << "live buffers overlap at step " << step;
    }
  }

  void Finish() {
    exec_handles_.clear();
    io_handles_.clear();
    leases_.clear();
    EXPECT_EQ(exec_.Stats().live_bytes, 0u);
    EXPECT_EQ(io_.Stats().live_bytes, 0u);
    exec_.Trim();
    io_.Trim();
    EXPECT_TRUE(sys_->Outstanding().empty());
  }

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  void Allocate(std::vector<AllocationHandle>& into, std::vector<AllocationHandle>& exec) {
    Arena& arena = (&into == &exec) ? static_cast<Arena&>(exec_) : io_;
    // Log-uniform sizes from 1 byte to 1 MiB, so small and large classes both recur.
    const size_t bytes =
        static_cast<size_t>(std::exp2(std::uniform_real_distribution<double>(0, 20)(rng_)));
    absl::StatusOr<AllocationHandle> h = arena.Allocate(bytes);
    ASSERT_TRUE(h.ok()) << h.status();
    ASSERT_GE(h->capacity(), bytes);
    static_cast<char*>(h->data())[0] = 1;
    static_cast<char*>(h->data())[h->size() == 0 ? 0 : h->size() - 1] = 1;
    into.push_back(std::move(*h));
  }
  void DropRandom(std::vector<AllocationHandle>& hs) {
    if (hs.empty()) return;
    hs.erase(hs.begin() + Uniform(0, hs.size() - 1));
  }

  std::mt19937_64 rng_;
  std::shared_ptr<FakeSystemAllocator> sys_ = std::make_shared<FakeSystemAllocator>();
  ExecutionArena exec_{sys_};
  IOArena io_{sys_};
  std::vector<AllocationHandle> exec_handles_, io_handles_;
  std::vector<IOLease> leases_;
};

TEST(ArenaRandom, AccountingAddsUpAndLiveBuffersNeverOverlap) {
  for (uint32_t seed : {1u, 2u, 3u, 20261130u}) {
    SCOPED_TRACE(seed);
    RandomOps ops(seed);
    for (int step = 0; step < 4000; ++step) {
      ops.Step();
      ops.Check(step);
      if (::testing::Test::HasFatalFailure()) return;
    }
    ops.Finish();
  }
}

}  // namespace
}  // namespace inferd::memory

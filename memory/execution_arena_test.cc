#include "memory/execution_arena.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "memory/fake_system_allocator.h"
#include "memory/process_stats.h"
#include "memory/size_classes.h"
#include "memory/testing/arena_inspector.h"

// Counts every global operator new in this test binary, to check that the arena allocates its
// metadata when it grows and never per allocation.
static std::atomic<long> g_news{0};
void* operator new(size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace inferd::memory {
namespace {

class ExecutionArenaTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeSystemAllocator> sys_ = std::make_shared<FakeSystemAllocator>();
  ExecutionArena arena_{sys_};
};

TEST_F(ExecutionArenaTest, SteadyStateReusesWithoutSystemCalls) {
  for (int i = 0; i < 100; ++i) {
    AllocationHandle a = *arena_.Allocate(1000);
    AllocationHandle b = *arena_.Allocate(50000);
  }
  const ArenaStats s = arena_.Stats();
  EXPECT_EQ(s.system_allocations, 2u);
  EXPECT_EQ(s.system_frees, 0u);
  EXPECT_EQ(s.reuses, 198u);
  EXPECT_EQ(s.allocations, 200u);
}

TEST_F(ExecutionArenaTest, CapacityIsPreservedOnReuse) {
  void* p;
  {
    AllocationHandle h = *arena_.Allocate(100);  // class 112
    p = h.data();
  }
  AllocationHandle h = *arena_.Allocate(112);
  EXPECT_EQ(h.data(), p);
  EXPECT_EQ(h.size(), 112u);
  EXPECT_EQ(h.capacity(), 112u);
}

TEST_F(ExecutionArenaTest, PicksTheSmallestRetainedClassThatFits) {
  void *p1k, *p2k;
  {
    AllocationHandle a = *arena_.Allocate(1024);
    AllocationHandle b = *arena_.Allocate(2048);
    p1k = a.data();
    p2k = b.data();
  }
  AllocationHandle small = *arena_.Allocate(900);
  EXPECT_EQ(small.data(), p1k);
  AllocationHandle bigger = *arena_.Allocate(1500);
  EXPECT_EQ(bigger.data(), p2k);
  EXPECT_EQ(arena_.Stats().system_allocations, 2u);
}

TEST_F(ExecutionArenaTest, ATinyRequestNeverPinsAHugeBuffer) {
  { AllocationHandle big = *arena_.Allocate(1 << 20); }
  AllocationHandle tiny = *arena_.Allocate(64);
  EXPECT_EQ(tiny.capacity(), 64u);
  EXPECT_EQ(arena_.Stats().retained_bytes, 1u << 20);
}

TEST_F(ExecutionArenaTest, EvictsLeastRecentlyFreedBeyondTheCap) {
  arena_.SetRetentionCap(3 * 1024);
  AllocationHandle a = *arena_.Allocate(1024);
  AllocationHandle b = *arena_.Allocate(1024);
  AllocationHandle c = *arena_.Allocate(1024);
  AllocationHandle d = *arena_.Allocate(1024);
  void* pb = b.data();
  void* pc = c.data();
  void* pd = d.data();
  a.Release();  // freed first: the first to go
  b.Release();
  c.Release();
  d.Release();  // retained would be 4 KiB > 3 KiB cap: evict a
  ArenaStats s = arena_.Stats();
  EXPECT_EQ(s.retained_bytes, 3u * 1024);
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.system_frees, 1u);
  EXPECT_TRUE(testing::HoldsPointer(arena_, pb));
  EXPECT_TRUE(testing::HoldsPointer(arena_, pc));
  EXPECT_TRUE(testing::HoldsPointer(arena_, pd));
}

TEST_F(ExecutionArenaTest, LoweringTheCapEvictsAtOnceOldestFirst) {
  std::vector<AllocationHandle> hs;
  std::vector<void*> ptrs;
  for (int i = 0; i < 4; ++i) {
    hs.push_back(*arena_.Allocate(4096));
    ptrs.push_back(hs.back().data());
  }
  for (auto& h : hs) h.Release();
  EXPECT_EQ(arena_.Stats().retained_bytes, 4u * 4096);
  arena_.SetRetentionCap(2 * 4096);
  ArenaStats s = arena_.Stats();
  EXPECT_EQ(s.retained_bytes, 2u * 4096);
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_FALSE(testing::HoldsPointer(arena_, ptrs[0]));
  EXPECT_FALSE(testing::HoldsPointer(arena_, ptrs[1]));
  EXPECT_TRUE(testing::HoldsPointer(arena_, ptrs[2]));
  EXPECT_TRUE(testing::HoldsPointer(arena_, ptrs[3]));
  EXPECT_EQ(arena_.retention_cap(), 2u * 4096);
}

TEST_F(ExecutionArenaTest, LiveBuffersAreNeverEvictedOrTrimmed) {
  AllocationHandle live = *arena_.Allocate(8192);
  std::memset(live.data(), 0x5A, 8192);
  { AllocationHandle other = *arena_.Allocate(8192); }
  arena_.SetRetentionCap(0);
  EXPECT_EQ(arena_.Trim(), 0u);  // the cap already evicted the free one
  EXPECT_EQ(arena_.Stats().live_bytes, 8192u);
  EXPECT_EQ(static_cast<unsigned char*>(live.data())[8191], 0x5A);
  live.Release();
  EXPECT_EQ(arena_.Stats().retained_bytes, 0u);  // cap 0: freed on return
  EXPECT_TRUE(sys_->Outstanding().empty());
}

TEST_F(ExecutionArenaTest, TrimFreesEveryRetainedBufferAndReportsBytes) {
  AllocationHandle keep = *arena_.Allocate(1000);
  { AllocationHandle a = *arena_.Allocate(4096), b = *arena_.Allocate(100); }
  EXPECT_EQ(arena_.Trim(), 4096u + 112u);
  ArenaStats s = arena_.Stats();
  EXPECT_EQ(s.trims, 1u);
  EXPECT_EQ(s.trimmed_bytes, 4096u + 112u);
  EXPECT_EQ(s.retained_bytes, 0u);
  EXPECT_EQ(s.live_bytes, 1024u);
  EXPECT_EQ(sys_->Outstanding().size(), 1u);
}

TEST_F(ExecutionArenaTest, OutOfMemoryIsAStatusWithSizesAndACounter) {
  sys_->SetFailAll(true);
  absl::StatusOr<AllocationHandle> h = arena_.Allocate(123456);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(h.status().message().find("123456"), std::string::npos) << h.status();
  EXPECT_NE(h.status().message().find("execution"), std::string::npos) << h.status();
  EXPECT_EQ(arena_.Stats().allocation_failures, 1u);
}

TEST_F(ExecutionArenaTest, OutOfMemoryTrimsRetainedBuffersAndRetries) {
  { AllocationHandle a = *arena_.Allocate(600); }
  sys_->SetLimit(1100);  // 640 held + 1024 would not fit; after trimming it does
  absl::StatusOr<AllocationHandle> h = arena_.Allocate(1000);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(arena_.Stats().trims, 1u);
}

TEST_F(ExecutionArenaTest, TooLargeARequestIsRefused) {
  absl::StatusOr<AllocationHandle> h = arena_.Allocate(kMaxClassBytes + 1);
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(ExecutionArenaTest, MetadataIsAllocatedOnGrowthNeverPerAllocation) {
  {  // warm-up: the arena grows once
    AllocationHandle a = *arena_.Allocate(1000), b = *arena_.Allocate(3000);
  }
  const long before = g_news.load();
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<AllocationHandle> a = arena_.Allocate(1000);
    absl::StatusOr<AllocationHandle> b = arena_.Allocate(3000);
    ASSERT_TRUE(a.ok() && b.ok());
  }
  EXPECT_EQ(g_news.load(), before);
}

TEST_F(ExecutionArenaTest, PeakIsResettable) {
  { AllocationHandle a = *arena_.Allocate(4096), b = *arena_.Allocate(4096); }
  EXPECT_EQ(arena_.Stats().peak_live_bytes, 8192u);
  AllocationHandle c = *arena_.Allocate(4096);
  arena_.ResetPeak();
  EXPECT_EQ(arena_.Stats().peak_live_bytes, 4096u);
}

TEST(ExecutionArenaOnCpu, TrimReturnsPagesToTheOs) {
  ExecutionArena arena(std::make_shared<CpuSystemAllocator>());
  constexpr size_t kBytes = 64 << 20;
  const long before = ResidentBytes();
  {
    AllocationHandle h = *arena.Allocate(kBytes);
    std::memset(h.data(), 1, kBytes);  // materialize every page
  }
  const long retained = ResidentBytes();
  EXPECT_GE(retained - before, static_cast<long>(kBytes) * 9 / 10);
  EXPECT_EQ(arena.Trim(), kBytes);
  const long after = ResidentBytes();
  EXPECT_LE(after - before, static_cast<long>(kBytes) / 10)
      << "resident before " << before << ", retained " << retained << ", after trim " << after;
}

}  // namespace
}  // namespace inferd::memory

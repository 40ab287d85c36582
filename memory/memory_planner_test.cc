#include "memory/memory_planner.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace inferd::memory {
namespace {

struct Spec {
  size_t bytes;
  int first, last;
};

// The planner's invariants: live-at-the-same-time buffers never overlap; every buffer lies inside
// the block; the peak is never above the naive sum.
void CheckInvariants(MemoryPlanner& planner, const std::vector<Spec>& specs) {
  const size_t peak = planner.GetPeakBytes();
  size_t naive = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const size_t bytes_i = (specs[i].bytes + 63) / 64 * 64;
    naive += bytes_i;
    const size_t off_i = planner.GetOffset(static_cast<int>(i));
    ASSERT_EQ(off_i % kPlanAlignment, 0u);
    ASSERT_LE(off_i + bytes_i, peak) << "buffer " << i << " outside the block";
    for (size_t j = i + 1; j < specs.size(); ++j) {
      const bool live_together = specs[i].first <= specs[j].last && specs[j].first <= specs[i].last;
      if (!live_together) continue;
      const size_t bytes_j = (specs[j].bytes + 63) / 64 * 64;
      const size_t off_j = planner.GetOffset(static_cast<int>(j));
      ASSERT_TRUE(off_i + bytes_i <= off_j || off_j + bytes_j <= off_i)
          << "buffers " << i << " and " << j << " overlap";
    }
  }
  ASSERT_LE(peak, naive);
}

TEST(GreedyMemoryPlanner, ReusesMemoryOfDeadBuffers) {
  GreedyMemoryPlanner p;
  std::vector<Spec> specs = {{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 4}};
  for (const Spec& s : specs) p.AddBuffer(s.bytes, s.first, s.last);
  EXPECT_EQ(p.GetPeakBytes(), 2u * 4096);  // a chain needs two buffers at a time
  CheckInvariants(p, specs);
}

TEST(GreedyMemoryPlanner, FillsGapsBetweenLargerBuffers) {
  GreedyMemoryPlanner p;
  std::vector<Spec> specs = {{1000, 0, 5}, {1000, 0, 1}, {3000, 2, 3}, {500, 0, 0}, {500, 4, 5}};
  for (const Spec& s : specs) p.AddBuffer(s.bytes, s.first, s.last);
  CheckInvariants(p, specs);
  EXPECT_LT(p.GetPeakBytes(), 1024u + 3008u + 1024u);
}

TEST(GreedyMemoryPlanner, RandomGraphsKeepTheInvariants) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    GreedyMemoryPlanner greedy;
    LinearMemoryPlanner linear;
    std::vector<Spec> specs;
    const int n = 1 + rng() % 60;
    for (int i = 0; i < n; ++i) {
      const int first = rng() % 40;
      specs.push_back({1 + rng() % 100000, first, first + static_cast<int>(rng() % 8)});
      greedy.AddBuffer(specs.back().bytes, specs.back().first, specs.back().last);
      linear.AddBuffer(specs.back().bytes, specs.back().first, specs.back().last);
    }
    CheckInvariants(greedy, specs);
    CheckInvariants(linear, specs);
    ASSERT_LE(greedy.GetPeakBytes(), linear.GetPeakBytes());
    if (HasFatalFailure()) return;
  }
}

TEST(LinearMemoryPlanner, IsTheNaiveSum) {
  LinearMemoryPlanner p;
  p.AddBuffer(100, 0, 0);
  p.AddBuffer(200, 5, 5);
  EXPECT_EQ(p.GetPeakBytes(), 128u + 256u);
  EXPECT_EQ(p.GetOffset(1), 128u);
}

// Sizes from hostile shapes saturate: the block is then too large for any allocator, never a
// wrapped, small one that the buffers overrun.
TEST(GreedyMemoryPlanner, SizesThatDoNotFitSaturate) {
  GreedyMemoryPlanner greedy;
  const int a = greedy.AddBuffer(SIZE_MAX - 10, 0, 1);  // rounding up to 64 would wrap
  const int b = greedy.AddBuffer(SIZE_MAX / 2, 0, 1);
  EXPECT_EQ(greedy.GetPeakBytes(), SIZE_MAX);
  EXPECT_EQ(greedy.GetOffset(a), 0u);
  EXPECT_GT(greedy.GetOffset(b), 0u);
  LinearMemoryPlanner linear;
  linear.AddBuffer(SIZE_MAX / 2, 0, 0);
  linear.AddBuffer(SIZE_MAX / 2, 1, 1);
  linear.AddBuffer(SIZE_MAX / 2, 2, 2);
  EXPECT_EQ(linear.GetPeakBytes(), SIZE_MAX);
}

}  // namespace
}  // namespace inferd::memory

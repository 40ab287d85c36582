#include "loadtest/latency_stats.h"

#include <algorithm>
#include <random>

#include "gtest/gtest.h"

namespace inferd::loadtest {
namespace {

std::vector<int64_t> OneTo(int n) {
  std::vector<int64_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1;
  return v;
}

// Percentile itself (nearest rank) is tested in base/percentile_test.cc.

TEST(SummarizeTest, EmptyIsZero) {
  std::vector<int64_t> v;
  const LatencySummary s = Summarize(v);
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.max_ns, 0);
  EXPECT_EQ(s.p99_ns, 0);
}

TEST(SummarizeTest, UnsortedInputWithOutlier) {
  std::vector<int64_t> v = OneTo(1000);
  v[500] = 1000000;  // one outlier replaces 501
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  const LatencySummary s = Summarize(v);
  EXPECT_EQ(s.count, 1000);
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.max_ns, 1000000);
  EXPECT_EQ(s.p50_ns, 500);
  EXPECT_EQ(s.p90_ns, 901);  // 501 is gone, so ranks above 500 hold value rank + 1
  EXPECT_EQ(s.p99_ns, 991);
  EXPECT_EQ(s.p999_ns, 1000);
  EXPECT_NEAR(s.mean_ns, (500500.0 - 501 + 1000000) / 1000, 1e-6);
}

TEST(LatencyRecorderTest, MergeKeepsEverySample) {
  LatencyRecorder a, b;
  for (int i = 1; i <= 50; ++i) a.Add(i);
  for (int i = 51; i <= 100; ++i) b.Add(i);
  a.Merge(b);
  EXPECT_EQ(a.count(), 100u);
  const LatencySummary s = a.Summarize();
  EXPECT_EQ(s.p50_ns, 50);
  EXPECT_EQ(s.p99_ns, 99);
  EXPECT_EQ(s.max_ns, 100);
}

}  // namespace
}  // namespace inferd::loadtest

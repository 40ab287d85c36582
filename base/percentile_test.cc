#include "base/percentile.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace inferd {
namespace {

std::vector<int64_t> OneTo(int n) {
  std::vector<int64_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1;
  return v;
}

TEST(PercentileTest, NearestRankOnOneToHundred) {
  const std::vector<int64_t> v = OneTo(100);
  EXPECT_EQ(Percentile(v, 0), 1);
  EXPECT_EQ(Percentile(v, 1), 1);
  EXPECT_EQ(Percentile(v, 50), 50);
  EXPECT_EQ(Percentile(v, 90), 90);
  EXPECT_EQ(Percentile(v, 99), 99);
  EXPECT_EQ(Percentile(v, 99.9), 100);
  EXPECT_EQ(Percentile(v, 100), 100);
}

TEST(PercentileTest, RoundingDoesNotShiftExactRanks) {
  // 99.9% of 1000 is exactly rank 999, and 90% of 10 rank 9, despite binary fractions.
  EXPECT_EQ(Percentile(OneTo(1000), 99.9), 999);
  EXPECT_EQ(Percentile(OneTo(10), 90), 9);
  EXPECT_EQ(Percentile(OneTo(10), 99), 10);
  EXPECT_EQ(Percentile(OneTo(3), 50), 2);
  EXPECT_EQ(Percentile(OneTo(2), 50), 1);
}

TEST(PercentileTest, SingleSample) {
  const std::vector<int64_t> v = {42};
  for (double p : {0.0, 50.0, 99.9, 100.0}) EXPECT_EQ(Percentile(v, p), 42) << p;
}

TEST(PercentileTest, OutOfRangeIsClamped) {
  const std::vector<int64_t> v = OneTo(10);
  EXPECT_EQ(Percentile(v, -5), 1);
  EXPECT_EQ(Percentile(v, 150), 10);
}

// The same samples as doubles (inferctl run's milliseconds) give the same ranks: nearest rank,
// never an interpolated value between two samples.
TEST(PercentileTest, DoublesUseTheSameRanks) {
  std::vector<double> ms;
  for (int i = 1; i <= 10; ++i) ms.push_back(i * 0.5);
  EXPECT_DOUBLE_EQ(Percentile(ms, 50), 2.5);  // rank 5 (interpolation would give 2.75)
  EXPECT_DOUBLE_EQ(Percentile(ms, 90), 4.5);  // rank 9
  EXPECT_DOUBLE_EQ(Percentile(ms, 99), 5.0);  // rank 10
  EXPECT_EQ(NearestRankIndex(10, 99), 9u);
  EXPECT_EQ(NearestRankIndex(1000, 99.9), 998u);
}

}  // namespace
}  // namespace inferd

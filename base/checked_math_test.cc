#include "base/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace inferd {
namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

TEST(CheckedMath, MultiplyAndAddDetectOverflow) {
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 31, 1 << 30), int64_t{1} << 61);
  EXPECT_EQ(CheckedMul<int64_t>(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul<int64_t>(kI64Max, -1), -kI64Max);
  EXPECT_EQ(CheckedMul<int64_t>(std::numeric_limits<int64_t>::min(), -1), std::nullopt);
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32), std::nullopt);
  EXPECT_EQ(CheckedMul<uint64_t>(0, kU64Max), 0u);
  EXPECT_EQ(CheckedAdd<int64_t>(kI64Max, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(kI64Max - 1, 1), kI64Max);
  EXPECT_EQ(CheckedAdd<uint64_t>(kU64Max, 1), std::nullopt);
}

TEST(CheckedMath, SaturatingTotalsStopAtTheMaximum) {
  EXPECT_EQ(SaturatingAdd<uint64_t>(kU64Max - 1, 5), kU64Max);
  EXPECT_EQ(SaturatingAdd<uint64_t>(2, 3), 5u);
  EXPECT_EQ(SaturatingMul<uint64_t>(uint64_t{1} << 40, uint64_t{1} << 30), kU64Max);
  EXPECT_EQ(SaturatingMul<uint64_t>(6, 7), 42u);
}

TEST(CheckedMath, RoundUpAndProduct) {
  EXPECT_EQ(CheckedRoundUp(0, 64), 0u);
  EXPECT_EQ(CheckedRoundUp(1, 64), 64u);
  EXPECT_EQ(CheckedRoundUp(128, 64), 128u);
  EXPECT_EQ(CheckedRoundUp(kU64Max - 10, 64), std::nullopt);
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_EQ(CheckedProduct({2, 3, 4}), 24);
  EXPECT_EQ(CheckedProduct({int64_t{1} << 34, 64}), int64_t{1} << 40);
  EXPECT_EQ(CheckedProduct({0, -1}), std::nullopt);  // negative dims never count
  EXPECT_EQ(CheckedProduct({int64_t{1} << 40, int64_t{1} << 30}), std::nullopt);
  EXPECT_EQ(CheckedProduct({3, 0, 5}), 0);
  // A zero dim does not hide an overflow of the others (a kernel's strides multiply them).
  EXPECT_EQ(CheckedProduct({int64_t{1} << 40, int64_t{1} << 30, 0}), std::nullopt);
  EXPECT_EQ(CheckedProduct({0, int64_t{1} << 40, int64_t{1} << 30}), std::nullopt);
}

}  // namespace
}  // namespace inferd

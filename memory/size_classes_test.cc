#include "memory/size_classes.h"

#include <gtest/gtest.h>

namespace inferd::memory {
namespace {

TEST(SizeClasses, SmallestClassThatFits) {
  EXPECT_EQ(SizeClassFor(0), 0);
  EXPECT_EQ(SizeClassFor(1), 0);
  EXPECT_EQ(SizeClassFor(64), 0);
  EXPECT_EQ(SizeClassFor(65), 1);
  EXPECT_EQ(SizeClassCapacity(1), 80u);
  EXPECT_EQ(SizeClassFor(128), 4);
  EXPECT_EQ(SizeClassFor(129), 5);
  EXPECT_EQ(SizeClassCapacity(5), 160u);
  EXPECT_EQ(SizeClassCapacity(SizeClassFor(1 << 20)), 1u << 20);
}

TEST(SizeClasses, CapacityCoversRequestAndPreviousClassDoesNot) {
  for (size_t bytes = 1; bytes < (1u << 22); bytes = bytes * 5 / 4 + 1) {
    const int c = SizeClassFor(bytes);
    ASSERT_GE(c, 0);
    EXPECT_GE(SizeClassCapacity(c), bytes) << bytes;
    if (c > 0) EXPECT_LT(SizeClassCapacity(c - 1), bytes) << bytes;
    // Four classes per doubling: waste is at most 25% above the minimum class.
    if (bytes > kMinClassBytes) EXPECT_LE(SizeClassCapacity(c), bytes + bytes / 4 + 1);
  }
}

TEST(SizeClasses, CapacitiesIncreaseStrictly) {
  for (int c = 1; c < kNumSizeClasses; ++c) {
    EXPECT_GT(SizeClassCapacity(c), SizeClassCapacity(c - 1)) << c;
  }
  EXPECT_EQ(SizeClassFor(SizeClassCapacity(kNumSizeClasses - 1)), kNumSizeClasses - 1);
  EXPECT_EQ(SizeClassFor(kMaxClassBytes + 1), -1);
}

TEST(SizeClassBitmap, FindsSmallestSetIndexInRange) {
  SizeClassBitmap b;
  EXPECT_EQ(b.FindFirst(0, kNumSizeClasses - 1), -1);
  b.Set(3);
  b.Set(70);
  b.Set(191);
  EXPECT_EQ(b.FindFirst(0, 191), 3);
  EXPECT_EQ(b.FindFirst(4, 191), 70);
  EXPECT_EQ(b.FindFirst(4, 69), -1);
  EXPECT_EQ(b.FindFirst(71, 300), 191);
  b.Clear(70);
  EXPECT_EQ(b.FindFirst(4, 191), 191);
  EXPECT_TRUE(b.Test(3));
  EXPECT_FALSE(b.Test(70));
}

}  // namespace
}  // namespace inferd::memory

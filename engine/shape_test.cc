#include "engine/shape.h"

#include <gtest/gtest.h>

#include <vector>

namespace inferd::engine {
namespace {

TEST(Shape, ElementsAndText) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.NumElements(), 24);
  EXPECT_EQ(s.SizeFrom(1), 12);
  EXPECT_EQ(s.SizeBetween(0, 2), 6);
  EXPECT_EQ(s.ToString(), "[2,3,4]");
  EXPECT_EQ(Shape{}.NumElements(), 1);
}

TEST(Shape, CheckedNumElementsRefusesHostileDims) {
  EXPECT_EQ(CheckedNumElements({2, 3}, 4), 6);
  EXPECT_FALSE(CheckedNumElements({-1, 3}, 4).has_value());
  EXPECT_FALSE(CheckedNumElements({INT64_MAX, 2}, 1).has_value());
  EXPECT_FALSE(CheckedNumElements({INT64_MAX / 2}, 4).has_value());
  // A zero dim no longer excuses a dim beyond the bounds: a kernel's strides multiply it.
  EXPECT_FALSE(CheckedNumElements({0, INT64_MAX}, 4).has_value());
  EXPECT_EQ(CheckedNumElements({0, kMaxDim}, 4), 0);
}

TEST(Shape, BoundsNameWhatIsBroken) {
  EXPECT_TRUE(CheckShapeBounds({kMaxDim, 16384}, 4).ok());  // 2^47 - 2^16 bytes
  EXPECT_EQ(CheckedNumElements({kMaxDim, 16384}, 4), kMaxDim * 16384);
  EXPECT_NE(CheckShapeBounds({int64_t{1} << 34, 64}, 4).message().find("dim 0 is 17179869184"),
            std::string::npos);
  EXPECT_NE(CheckShapeBounds({kMaxDim, 32768}, 4).message().find("140737488355328 bytes"),
            std::string::npos);
  EXPECT_NE(CheckShapeBounds(std::vector<int64_t>(65, 1), 4).message().find("rank 65"),
            std::string::npos);
  EXPECT_TRUE(CheckShapeBounds({-1, kMaxDim, -1}, 8).ok());  // unknown dims are skipped
}

TEST(Shape, MessagesShowShortShapesInFull) {
  EXPECT_EQ(ShapeForMessage({}), "[]");
  EXPECT_EQ(ShapeForMessage({1, 3, 224, 224}), "[1,3,224,224]");
  EXPECT_EQ(ShapeForMessage({-1, 2, 3, 4, 5, 6, 7, 8}), "[-1,2,3,4,5,6,7,8]");
  EXPECT_EQ(ShapeForMessage(std::vector<int64_t>(kMaxDimsInMessage, 2)).size(),
            2 * kMaxDimsInMessage + 1);
}

TEST(Shape, MessagesShowLongShapesByTheirFirstDimsAndRank) {
  EXPECT_EQ(ShapeForMessage(std::vector<int64_t>(kMaxDimsInMessage + 1, 7)),
            "[7,7,7,7,7,7,7,7,... (rank 17)]");
  EXPECT_EQ(ShapeForMessage(std::vector<int64_t>(100000, 1)),
            "[1,1,1,1,1,1,1,1,... (rank 100000)]");
}

TEST(Shape, ProductsSaturateInsteadOfOverflowing) {
  const Shape hostile{INT64_MAX, 2};  // never accepted from outside, but never UB either
  EXPECT_EQ(hostile.NumElements(), INT64_MAX);
  EXPECT_EQ(hostile.SizeFrom(1), 2);
}

TEST(ShapeInfo, MatchesAndPrints) {
  ShapeInfo info;
  info.rank_known = true;
  info.dims = {DimInfo{-1, "batch"}, DimInfo{3, ""}};
  EXPECT_FALSE(info.IsStatic());
  EXPECT_TRUE(info.Matches(Shape{7, 3}));
  EXPECT_FALSE(info.Matches(Shape{7, 4}));
  EXPECT_FALSE(info.Matches(Shape{7, 3, 1}));
  EXPECT_EQ(info.ToString(), "[batch,3]");
  EXPECT_TRUE(ShapeInfo::Unknown().Matches(Shape{1, 2, 3}));
  EXPECT_EQ(ShapeInfo::FromShape(Shape{4, 5}).ToShape(), (Shape{4, 5}));
}

}  // namespace
}  // namespace inferd::engine

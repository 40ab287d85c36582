#include "engine/shape.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(CheckedNumElements({0, INT64_MAX}, 4), 0);
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

// MakeBroadcastIndex: the output shape, merged dimensions and strides. Host code: runs without a
// GPU.
#include "kernels/cuda/broadcast_index.h"

#include <vector>

#include "gtest/gtest.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;

std::vector<int64_t> Dims(const int64_t* p, int rank) { return std::vector<int64_t>(p, p + rank); }

TEST(BroadcastIndexTest, SameShapesMergeToOneContiguousDimension) {
  Shape out;
  absl::StatusOr<BroadcastIndex> i = MakeBroadcastIndex({2, 3, 4}, {2, 3, 4}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  EXPECT_EQ(i->rank, 1);
  EXPECT_EQ(i->count, 24);
  EXPECT_EQ(i->out_dims[0], 24);
  EXPECT_EQ(i->a_strides[0], 1);
  EXPECT_EQ(i->b_strides[0], 1);
}

TEST(BroadcastIndexTest, ScalarOperandHasStrideZero) {
  Shape out;
  absl::StatusOr<BroadcastIndex> i = MakeBroadcastIndex({}, {5, 2}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, (Shape{5, 2}));
  EXPECT_EQ(i->rank, 1);
  EXPECT_EQ(i->a_strides[0], 0);
  EXPECT_EQ(i->b_strides[0], 1);

  i = MakeBroadcastIndex({}, {}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, Shape{});
  EXPECT_EQ(i->rank, 0);
  EXPECT_EQ(i->count, 1);
}

TEST(BroadcastIndexTest, TrailingVectorKeepsTwoDimensions) {
  Shape out;
  absl::StatusOr<BroadcastIndex> i = MakeBroadcastIndex({2, 3, 4}, {4}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_EQ(i->rank, 2);
  EXPECT_EQ(Dims(i->out_dims, 2), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(Dims(i->a_strides, 2), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(Dims(i->b_strides, 2), (std::vector<int64_t>{0, 1}));
}

TEST(BroadcastIndexTest, BothSidesBroadcast) {
  Shape out;
  absl::StatusOr<BroadcastIndex> i = MakeBroadcastIndex({2, 1, 4}, {3, 1}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_EQ(i->rank, 3);
  EXPECT_EQ(Dims(i->out_dims, 3), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Dims(i->a_strides, 3), (std::vector<int64_t>{4, 0, 1}));
  EXPECT_EQ(Dims(i->b_strides, 3), (std::vector<int64_t>{0, 1, 0}));
}

TEST(BroadcastIndexTest, Errors) {
  Shape out;
  EXPECT_EQ(MakeBroadcastIndex({2, 3}, {4}, out).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Nine alternating dimensions cannot merge below kMaxBroadcastRank.
  EXPECT_EQ(MakeBroadcastIndex({2, 1, 2, 1, 2, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1, 2, 1}, out)
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

TEST(BroadcastIndexTest, EmptyOutput) {
  Shape out;
  absl::StatusOr<BroadcastIndex> i = MakeBroadcastIndex({0, 3}, {3}, out);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(out, (Shape{0, 3}));
  EXPECT_EQ(i->count, 0);
}

}  // namespace
}  // namespace inferd::kernels::cuda

// GatherElements (every axis, negative axes and indices, indices smaller than data, int32 and
// int64 indices, element types, threads) and GatherND (k < rank and k == rank, batch_dims,
// negative indices), each against a naive reference; out-of-range indices and bad shapes give
// errors naming the node.
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::Strides;
using testing::Unflatten;

template <typename T, typename I>
void CheckGatherElements(const Shape& ds, const Shape& is, int64_t axis, int threads = 1) {
  SCOPED_TRACE(ds.ToString() + " indices " + is.ToString() + " axis " + std::to_string(axis));
  const int a = axis < 0 ? axis + ds.rank() : axis;
  std::vector<T> data(ds.NumElements());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<T>(i % 127);
  std::vector<I> idx(is.NumElements());
  for (size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<I>(static_cast<int64_t>(i * 7 % (2 * ds[a])) - ds[a]);  // [-d, d)
  }
  std::vector<T> expected;
  const std::vector<int64_t> st = Strides(ds);
  for (size_t i = 0; i < idx.size(); ++i) {
    std::vector<int64_t> at = Unflatten(i, is);
    at[a] = idx[i] < 0 ? idx[i] + ds[a] : idx[i];
    int64_t off = 0;
    for (size_t d = 0; d < at.size(); ++d) off += at[d] * st[d];
    expected.push_back(data[off]);
  }
  KernelTester t("GatherElements", 13);
  t.Attr("axis", axis).template Input<T>(ds, data).template Input<I>(is, idx).Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), is);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(GatherElementsTest, AxesTypesAndShapes) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    CheckGatherElements<float, int64_t>({3, 4, 5}, {3, 4, 5}, axis);
    CheckGatherElements<float, int32_t>({3, 4, 5}, {2, 3, 2}, axis);  // smaller than data
    CheckGatherElements<int64_t, int64_t>({3, 4, 5}, {1, 4, 5}, axis);
    CheckGatherElements<uint8_t, int32_t>({3, 4, 5}, {1, 1, 1}, axis);
  }
  CheckGatherElements<int64_t, int64_t>({3, 4, 5}, {3, 4, 7}, 2);  // longer along the axis
  CheckGatherElements<double, int64_t>({6}, {10}, 0);
  CheckGatherElements<float, int64_t>({3, 4}, {3, 0}, 1);  // empty
  CheckGatherElements<float, int64_t>({300, 200}, {300, 200}, 0, 2);
  CheckGatherElements<float, int64_t>({300, 200}, {300, 200}, 1, 2);
}

TEST(GatherElementsTest, Errors) {
  KernelTester t("GatherElements", 13);
  t.Attr("axis", int64_t{1})
      .Input<float>({2, 3}, std::vector<float>(6))
      .Input<int64_t>({2, 1}, {0, 3});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_GatherElements' (GatherElements): index 3 (at position 1) is out of "
            "range for a dimension of size 3");
  KernelTester shape("GatherElements", 13);
  shape.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({1, 4}, {0, 0, 0, 0});
  EXPECT_FALSE(shape.Run(CpuRegistry()).ok());
  KernelTester rank("GatherElements", 13);
  rank.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({2}, {0, 0});
  EXPECT_FALSE(rank.Run(CpuRegistry()).ok());
}

template <typename I>
void CheckGatherNd(const Shape& ds, const Shape& is, const std::vector<I>& idx, int64_t batch_dims,
                   const Shape& expected_shape, const std::vector<float>& expected) {
  SCOPED_TRACE(ds.ToString() + " indices " + is.ToString());
  std::vector<float> data(ds.NumElements());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  KernelTester t("GatherND", 13);
  if (batch_dims != 0) t.Attr("batch_dims", batch_dims);
  t.Input<float>(ds, data).template Input<I>(is, idx);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  EXPECT_EQ(Values<float>((*out)[0]), expected);
}

TEST(GatherNdTest, TuplesAndBatchDims) {
  // data [2,2] = [[0,1],[2,3]]
  CheckGatherNd<int64_t>({2, 2}, {2, 2}, {0, 0, 1, 1}, 0, {2}, {0, 3});
  CheckGatherNd<int64_t>({2, 2}, {2, 1}, {1, 0}, 0, {2, 2}, {2, 3, 0, 1});
  CheckGatherNd<int32_t>({2, 2}, {2, 1}, {-1, -2}, 0, {2, 2}, {2, 3, 0, 1});
  // data [2,2,2] = 0..7
  CheckGatherNd<int64_t>({2, 2, 2}, {2, 2}, {0, 1, 1, 0}, 0, {2, 2}, {2, 3, 4, 5});
  CheckGatherNd<int64_t>({2, 2, 2}, {2, 1, 2}, {0, 1, 1, 0}, 0, {2, 1, 2}, {2, 3, 4, 5});
  // batch_dims = 1: batch b picks data[b, idx].
  CheckGatherNd<int64_t>({2, 2, 2}, {2, 1}, {1, 0}, 1, {2, 2}, {2, 3, 4, 5});
  CheckGatherNd<int64_t>({2, 2, 2}, {2, 2}, {1, 1, 0, 1}, 1, {2}, {3, 5});
  CheckGatherNd<int64_t>({2, 3}, {0, 2}, {}, 0, {0}, {});  // no tuples
}

TEST(GatherNdTest, Errors) {
  auto run = [](const Shape& is, const std::vector<int64_t>& idx, int64_t batch_dims) {
    KernelTester t("GatherND", 13);
    t.Attr("batch_dims", batch_dims)
        .Input<float>({2, 3}, std::vector<float>(6))
        .Input<int64_t>(is, idx);
    return t.Run(CpuRegistry()).status();
  };
  EXPECT_EQ(run({1, 2}, {1, 3}, 0).message(),
            "node 'test_GatherND' (GatherND): index 3 (tuple 0, position 1) is out of range for "
            "dimension 1 of data [2,3]");
  EXPECT_FALSE(run({1, 3}, {0, 0, 0}, 0).ok());  // k > rank
  EXPECT_FALSE(run({3, 1}, {0, 0, 0}, 1).ok());  // batch dims differ
  EXPECT_FALSE(run({2, 1}, {0, 0}, 2).ok());     // batch_dims too large
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Gather: every axis (negative too), int32 and int64 indices, negative indices, scalar and
// multi-dimensional indices, float32/int64/int32 data, out-of-range indices, threads.
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

// out[outer][i][inner] = data[outer][idx[i]][inner], written out directly.
template <typename T, typename I>
std::vector<T> RefGather(const std::vector<T>& data, const Shape& ds, const std::vector<I>& idx,
                         int axis) {
  const int64_t outer = ds.SizeBetween(0, axis), dim = ds[axis], inner = ds.SizeFrom(axis + 1);
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o)
    for (I i : idx)
      for (int64_t j = 0; j < inner; ++j)
        out.push_back(data[(o * dim + (i < 0 ? i + dim : i)) * inner + j]);
  return out;
}

template <typename T, typename I>
void CheckGather(const Shape& ds, const Shape& is, const std::vector<I>& idx, int64_t axis,
                 int threads = 1) {
  SCOPED_TRACE(ds.ToString() + " indices " + is.ToString() + " axis " + std::to_string(axis));
  std::vector<T> data(ds.NumElements());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<T>(i * 7 % 101);
  const int a = axis < 0 ? axis + ds.rank() : axis;
  Shape expected_shape;
  for (int i = 0; i < a; ++i) expected_shape.push_back(ds[i]);
  for (int64_t d : is.dims()) expected_shape.push_back(d);
  for (size_t i = a + 1; i < ds.rank(); ++i) expected_shape.push_back(ds[i]);
  KernelTester t("Gather", 13);
  t.Attr("axis", axis).template Input<T>(ds, data).template Input<I>(is, idx).Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  EXPECT_EQ(Values<T>((*out)[0]), (RefGather<T, I>(data, ds, idx, a)));
}

TEST(GatherTest, AxesAndIndexTypes) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    CheckGather<float, int64_t>({3, 4, 5}, {2}, {2, -1}, axis);
    CheckGather<float, int32_t>({3, 4, 5}, {2, 2}, {0, 1, -2, 2}, axis);
    CheckGather<int64_t, int64_t>({3, 4, 5}, {}, {-3}, axis);  // scalar index drops the axis
    CheckGather<int32_t, int32_t>({3, 4, 5}, {0}, {}, axis);   // no index: empty output
  }
  // The shape-manipulation idiom: Gather(Shape(x), 0).
  CheckGather<int64_t, int64_t>({4}, {}, {0}, 0);
}

TEST(GatherTest, LargeAndThreaded) {
  std::vector<int64_t> idx(5000);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i * 31 % 1000) - 500;
  CheckGather<float, int64_t>({1000, 64}, {50, 100}, idx, 0, 2);  // embedding lookup
  CheckGather<float, int64_t>({4, 1000, 3}, {5000}, idx, 1, 2);
}

TEST(GatherTest, OutOfRangeIndexNamesTheNode) {
  KernelTester t("Gather", 13);
  t.Attr("axis", int64_t{1})
      .Input<float>({2, 3}, std::vector<float>(6))
      .Input<int64_t>({2}, {0, 3});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_Gather' (Gather): index 3 (at position 1) is out of range for axis 1 of "
            "size 3 (data shape [2,3])");
  KernelTester neg("Gather", 13);
  neg.Input<float>({2, 3}, std::vector<float>(6)).Input<int32_t>({1}, {-3});
  EXPECT_FALSE(neg.Run(CpuRegistry()).ok());
  KernelTester bad_type("Gather", 13);
  bad_type.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({1}, {0.0f});
  auto bt = bad_type.Run(CpuRegistry());
  ASSERT_FALSE(bt.ok());
  EXPECT_NE(bt.status().message().find("expected int32 or int64"), std::string::npos);
}

}  // namespace
}  // namespace inferd::kernels::cpu

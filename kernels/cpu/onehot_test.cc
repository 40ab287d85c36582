// OneHot: every axis (negative too), negative and out-of-range indices, float and int indices,
// depth as float or int, value types, threads, errors naming the node.
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
using testing::Unflatten;

template <typename I, typename T>
void CheckOneHot(const Shape& is, const std::vector<I>& idx, int64_t depth, int64_t axis,
                 int threads = 1) {
  SCOPED_TRACE(is.ToString() + " axis " + std::to_string(axis));
  const int64_t rank = static_cast<int64_t>(is.rank());
  const int64_t a = axis < 0 ? axis + rank + 1 : axis;
  Shape out_shape;
  for (int64_t d = 0; d < a; ++d) out_shape.push_back(is[d]);
  out_shape.push_back(depth);
  for (int64_t d = a; d < rank; ++d) out_shape.push_back(is[d]);
  const T off = static_cast<T>(2), on = static_cast<T>(7);
  std::vector<T> expected(out_shape.NumElements());
  for (size_t i = 0; i < expected.size(); ++i) {
    std::vector<int64_t> at = Unflatten(i, out_shape);
    const int64_t j = at[a];
    at.erase(at.begin() + a);
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d) flat = flat * is[d] + at[d];
    int64_t v = static_cast<int64_t>(idx[flat]);
    if (v < 0) v += depth;
    expected[i] = v == j ? on : off;
  }
  KernelTester t("OneHot", 11);
  t.Attr("axis", axis)
      .template Input<I>(is, idx)
      .template Input<float>({1}, {static_cast<float>(depth)})
      .template Input<T>({2}, {off, on})
      .Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(OneHotTest, AxesAndIndices) {
  for (int64_t axis : {-1, 0, 1, 2, -2, -3}) {
    CheckOneHot<int64_t, float>({2, 3}, {0, 1, 2, -1, -4, 9}, 4, axis);  // -4 ok, 9 all off
    CheckOneHot<float, int32_t>({2, 3}, {0.0f, 1.7f, 2.0f, 3.0f, -1.0f, 5.0f}, 5, axis);
    CheckOneHot<int32_t, int64_t>({3, 2}, {1, 1, 0, 2, 2, -3}, 3, axis);
  }
  CheckOneHot<int64_t, uint8_t>({}, {2}, 3, 0);  // a scalar index
  std::vector<int64_t> many(5000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i % 300);
  CheckOneHot<int64_t, float>({5000}, many, 300, -1, 2);
}

TEST(OneHotTest, Errors) {
  KernelTester t("OneHot", 11);
  t.Input<int64_t>({2}, {0, 1}).Input<int64_t>({}, {0}).Input<float>({2}, {0, 1});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "node 'test_OneHot' (OneHot): depth 0 must be >= 1");
  KernelTester v("OneHot", 11);
  v.Input<int64_t>({2}, {0, 1}).Input<int64_t>({}, {3}).Input<float>({3}, {0, 1, 2});
  EXPECT_FALSE(v.Run(CpuRegistry()).ok());
  KernelTester a("OneHot", 11);
  a.Attr("axis", int64_t{3})
      .Input<int64_t>({2}, {0, 1})
      .Input<int64_t>({}, {3})
      .Input<float>({2}, {0, 1});
  EXPECT_FALSE(a.Run(CpuRegistry()).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

// CumSum against a naive reference: every axis (negative too, int32 or int64 axis input),
// exclusive and reverse, wide inner dims (several column tiles), int and double types, 1 vs 2
// threads, errors.
#include <string>
#include <vector>

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

template <typename T>
std::vector<T> RefCumSum(const std::vector<T>& x, const Shape& s, int axis, bool exclusive,
                         bool reverse) {
  const int64_t outer = s.SizeBetween(0, axis), n = s[axis], inner = s.SizeFrom(axis + 1);
  std::vector<T> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = T(0);
        for (int64_t q = 0; q < n; ++q) {
          const bool before = reverse ? q > j : q < j;
          if (before || (!exclusive && q == j)) acc += x[(o * n + q) * inner + i];
        }
        y[(o * n + j) * inner + i] = acc;
      }
  return y;
}

template <typename T, typename A>
std::vector<T> RunCumSum(const Shape& s, const std::vector<T>& x, A axis, int64_t exclusive,
                         int64_t reverse, int threads = 1) {
  KernelTester t("CumSum", 14);
  t.Attr("exclusive", exclusive).Attr("reverse", reverse).Threads(threads);
  t.Input<T>(s, x).template Input<A>(Shape{}, {axis});
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), s);
  return Values<T>((*out)[0]);
}

TEST(CumSumTest, EveryAxisAndMode) {
  const Shape s{3, 4, 1100};  // 1100 columns: two tiles when the axis is not the last
  std::vector<int64_t> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 37) % 11) - 5;
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    const int a = axis < 0 ? axis + 3 : axis;
    for (int64_t exclusive : {0, 1}) {
      for (int64_t reverse : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + " exclusive " + std::to_string(exclusive) +
                     " reverse " + std::to_string(reverse));
        const auto y = RunCumSum<int64_t, int64_t>(s, x, axis, exclusive, reverse);
        EXPECT_EQ(y, RefCumSum(x, s, a, exclusive != 0, reverse != 0));
        EXPECT_EQ(
            (RunCumSum<int64_t, int32_t>(s, x, static_cast<int32_t>(axis), exclusive, reverse, 2)),
            y);
      }
    }
  }
}

TEST(CumSumTest, FloatTypes) {
  const std::vector<double> xd = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ((RunCumSum<double, int32_t>({2, 3}, xd, 0, 0, 0)),
            (std::vector<double>{1, 2, 3, 5, 7, 9}));
  const std::vector<float> xf = {1, 2, 3, 4};
  EXPECT_EQ((RunCumSum<float, int64_t>({4}, xf, 0, 1, 1)), (std::vector<float>{9, 7, 4, 0}));
  const std::vector<int32_t> xi = {1, 2, 3};
  EXPECT_EQ((RunCumSum<int32_t, int64_t>({3}, xi, -1, 0, 1)), (std::vector<int32_t>{6, 5, 3}));
}

TEST(CumSumTest, Errors) {
  KernelTester t("CumSum", 14);
  t.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({}, {2});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_CumSum' (CumSum): axis 2 is out of range for rank 2 (expected -2..1)");
  KernelTester two("CumSum", 14);
  two.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({2}, {0, 1});
  out = two.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("must hold one value"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

// TopK against a naive reference (stable sort of each line): largest and smallest, every axis
// (negative too), ties (smaller index first), k = 0 and k = n, opset 1 (attribute k) vs 10+ (input
// K), NaN, other types, 1 vs 2 threads, errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
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

struct TopKResult {
  Shape shape;
  std::vector<float> values;
  std::vector<int64_t> indices;
};

TopKResult RefTopK(const std::vector<float>& x, const Shape& s, int axis, int64_t k, bool largest) {
  const int64_t outer = s.SizeBetween(0, axis), n = s[axis], inner = s.SizeFrom(axis + 1);
  TopKResult r;
  r.shape = s;
  r.shape[axis] = k;
  r.values.resize(outer * k * inner);
  r.indices.resize(r.values.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      auto at = [&](int64_t j) { return x[(o * n + j) * inner + i]; };
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return largest ? at(a) > at(b) : at(a) < at(b);
      });
      for (int64_t j = 0; j < k; ++j) {
        r.values[(o * k + j) * inner + i] = at(idx[j]);
        r.indices[(o * k + j) * inner + i] = idx[j];
      }
    }
  return r;
}

TopKResult RunTopK(int opset, const Shape& s, const std::vector<float>& x, int64_t axis, int64_t k,
                   int64_t largest, int threads = 1) {
  KernelTester t("TopK", opset);
  t.Attr("axis", axis).Input<float>(s, x).Outputs(2).Threads(threads);
  if (opset < 10) {
    t.Attr("k", k);
  } else {
    t.Input<int64_t>(Shape{1}, {k});
  }
  if (opset >= 11) t.Attr("largest", largest);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), (*out)[1].shape());
  return {(*out)[0].shape(), Values<float>((*out)[0]), Values<int64_t>((*out)[1])};
}

void ExpectSame(const TopKResult& a, const TopKResult& b) {
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.indices, b.indices);
}

TEST(TopKTest, EveryAxisLargestAndSmallestWithTies) {
  const Shape s{3, 20, 5};
  std::vector<float> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 31) % 7);  // many ties
  for (int64_t axis : {0, 1, 2, -1, -2}) {
    const int a = axis < 0 ? axis + 3 : axis;
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{2}, s[a]}) {
      for (int64_t largest : {0, 1}) {
        SCOPED_TRACE("axis " + std::to_string(axis) + " k " + std::to_string(k) + " largest " +
                     std::to_string(largest));
        const TopKResult got = RunTopK(11, s, x, axis, k, largest);
        ExpectSame(got, RefTopK(x, s, a, k, largest != 0));
        ExpectSame(RunTopK(11, s, x, axis, k, largest, 2), got);
      }
    }
  }
}

TEST(TopKTest, OpsetVersions) {
  const Shape s{2, 6};
  const std::vector<float> x = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  const TopKResult ref = RefTopK(x, s, 1, 3, true);
  ExpectSame(RunTopK(1, s, x, -1, 3, 1), ref);   // attribute k
  ExpectSame(RunTopK(10, s, x, -1, 3, 1), ref);  // input K
  ExpectSame(RunTopK(11, s, x, 1, 3, 0), RefTopK(x, s, 1, 3, false));
  // Row 1 ties: the 5 at index 2 comes before the 5 at index 4.
  EXPECT_EQ(ref.indices, (std::vector<int64_t>{5, 4, 2, 5, 1, 2}));
}

TEST(TopKTest, LargeLinesAndNaN) {
  const Shape s{4, 5000};
  const auto x = testing::RandomFloats(s.NumElements(), 7);
  ExpectSame(RunTopK(11, s, x, 1, 17, 1, 2), RefTopK(x, s, 1, 17, true));
  // NaN ranks above every number (and does not break the sort).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TopKResult r = RunTopK(11, {5}, {1.0f, nan, 3.0f, nan, -1.0f}, 0, 3, 1);
  ASSERT_EQ(r.indices, (std::vector<int64_t>{1, 3, 2}));
  EXPECT_TRUE(std::isnan(r.values[0]) && std::isnan(r.values[1]));
  EXPECT_EQ(r.values[2], 3.0f);
  // The same with k past the one-pass limit (16): nth_element + sort.
  std::vector<float> y(40);
  for (size_t i = 0; i < y.size(); ++i) y[i] = i % 9 == 4 ? nan : static_cast<float>(i % 7);
  const TopKResult big = RunTopK(11, {40}, y, 0, 20, 1);
  const TopKResult small = RunTopK(11, {40}, y, 0, 16, 1);
  EXPECT_EQ(std::vector<int64_t>(big.indices.begin(), big.indices.begin() + 16), small.indices);
  EXPECT_EQ(big.indices[0], 4);
  EXPECT_EQ(big.indices[4], 6);  // after the four NaNs (4, 13, 22, 31): the first 6
}

TEST(TopKTest, IntegerValues) {
  KernelTester t("TopK", 11);
  t.Input<int64_t>({5}, {4, -2, 9, 4, 0}).Input<int64_t>({1}, {2}).Outputs(2);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{9, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{2, 0}));
}

TEST(TopKTest, Errors) {
  KernelTester t("TopK", 11);
  t.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({1}, {4}).Outputs(2);
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_TopK' (TopK): k = 4 is out of range for axis 1 of shape [2,3] (0..3)");
  KernelTester missing("TopK", 1);
  missing.Input<float>({3}, std::vector<float>(3)).Outputs(2);
  out = missing.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'k'"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

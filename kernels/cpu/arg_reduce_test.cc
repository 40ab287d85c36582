// ArgMax / ArgMin against a naive reference: every axis (negative too), keepdims, ties with and
// without select_last_index (opset 12; ignored before), row and column paths, several tiles, int
// and double types, 1 vs 2 threads, errors.
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
std::vector<int64_t> RefArg(bool max, bool last, const std::vector<T>& x, int64_t outer, int64_t n,
                            int64_t inner) {
  std::vector<int64_t> y(outer * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        const T v = x[(o * n + j) * inner + i], b = x[(o * n + best) * inner + i];
        const bool better = max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = j;
      }
      y[o * inner + i] = best;
    }
  return y;
}

template <typename T>
std::vector<int64_t> RunArg(const std::string& op, int opset, const Shape& s,
                            const std::vector<T>& x, int64_t axis, int64_t keepdims, int64_t last,
                            int threads, Shape* out_shape) {
  KernelTester t(op, opset);
  t.Attr("axis", axis).Attr("keepdims", keepdims).Attr("select_last_index", last);
  t.Input<T>(s, x).Threads(threads);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  *out_shape = (*out)[0].shape();
  return Values<int64_t>((*out)[0]);
}

TEST(ArgReduceTest, EveryAxisWithTies) {
  const Shape s{3, 4, 300};  // 300 columns: two tiles on the strided path
  std::vector<float> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 13);  // many ties
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const bool max = std::string(op) == "ArgMax";
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      const int a = axis < 0 ? axis + 3 : axis;
      for (int64_t last : {0, 1}) {
        for (int64_t keep : {0, 1}) {
          SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis) + " last " +
                       std::to_string(last) + " keep " + std::to_string(keep));
          Shape out_shape;
          const auto y = RunArg<float>(op, 13, s, x, axis, keep, last, 1, &out_shape);
          EXPECT_EQ(y,
                    RefArg<float>(max, last != 0, x, s.SizeBetween(0, a), s[a], s.SizeFrom(a + 1)));
          Shape expected = s;
          expected[a] = 1;
          if (!keep) {
            expected = Shape();
            for (int d = 0; d < 3; ++d) {
              if (d != a) expected.push_back(s[d]);
            }
          }
          EXPECT_EQ(out_shape, expected);
          EXPECT_EQ(RunArg<float>(op, 13, s, x, axis, keep, last, 2, &out_shape), y);
        }
      }
    }
  }
}

TEST(ArgReduceTest, SelectLastIndexNeedsOpset12) {
  const std::vector<float> x = {1, 3, 3, 0};
  Shape out_shape;
  EXPECT_EQ(RunArg<float>("ArgMax", 11, {4}, x, 0, 0, 1, 1, &out_shape), std::vector<int64_t>{1});
  EXPECT_EQ(RunArg<float>("ArgMax", 12, {4}, x, 0, 0, 1, 1, &out_shape), std::vector<int64_t>{2});
  EXPECT_EQ(out_shape, Shape{});
}

TEST(ArgReduceTest, OtherTypes) {
  Shape out_shape;
  const std::vector<int32_t> xi = {5, -1, 7, 7, 2, -9};
  EXPECT_EQ(RunArg<int32_t>("ArgMin", 13, {2, 3}, xi, 1, 1, 0, 1, &out_shape),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(out_shape, (Shape{2, 1}));
  const std::vector<int64_t> xl = {5, -1, 7, 7, 2, -9};
  EXPECT_EQ(RunArg<int64_t>("ArgMax", 13, {2, 3}, xl, 0, 0, 0, 1, &out_shape),
            (std::vector<int64_t>{1, 1, 0}));
  const std::vector<double> xd = {0.5, 0.25, -1.0, 2.0};
  EXPECT_EQ(RunArg<double>("ArgMax", 13, {4}, xd, -1, 1, 0, 1, &out_shape),
            std::vector<int64_t>{3});
}

TEST(ArgReduceTest, Errors) {
  KernelTester t("ArgMax", 13);
  t.Attr("axis", int64_t{3}).Input<float>({2, 3}, std::vector<float>(6));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_ArgMax' (ArgMax): axis 3 is out of range for rank 2 (expected -2..1)");
  KernelTester empty("ArgMin", 13);
  empty.Attr("axis", int64_t{1}).Input<float>({2, 0}, {});
  out = empty.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("empty axis"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Softmax, LogSoftmax and Hardmax against naive references: opset 11 (coerced to 2-D at axis,
// default 1) vs 13 (one dimension, default -1), negative axes, strided (non-last) axes, large
// values, ties, errors, threads.
#include <cmath>
#include <optional>

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
using testing::ExpectNear;
using testing::RandomFloats;

std::vector<float> RunOp(const char* op, int opset, const Shape& s, const std::vector<float>& x,
                         std::optional<int64_t> axis, int threads = 1) {
  KernelTester t(op, opset);
  if (axis) t.Attr("axis", *axis);
  t.Input<float>(s, x).Threads(threads);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), s);
  return Values<float>((*out)[0]);
}

std::vector<float> RunSoftmax(int opset, const Shape& s, const std::vector<float>& x,
                              std::optional<int64_t> axis, int threads = 1) {
  return RunOp("Softmax", opset, s, x, axis, threads);
}

std::vector<float> Log(std::vector<float> v) {
  for (float& x : v) x = std::log(x);
  return v;
}

// One-hot of the first maximum over `n` values `inner` apart, per (outer, inner) pair.
std::vector<float> RefHardmax(const std::vector<float>& x, int64_t outer, int64_t n,
                              int64_t inner) {
  std::vector<float> y(x.size(), 0.0f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) {
        if (x[(o * n + j) * inner + i] > x[(o * n + best) * inner + i]) best = j;
      }
      y[(o * n + best) * inner + i] = 1.0f;
    }
  return y;
}

TEST(SoftmaxTest, Opset13AlongOneAxis) {
  const Shape s{2, 3, 4, 5};
  const auto x = RandomFloats(s.NumElements(), 1, -4.0f, 4.0f);
  for (int64_t axis : {-4, -3, -2, -1, 0, 1, 2, 3}) {
    SCOPED_TRACE(axis);
    const int a = axis < 0 ? axis + 4 : axis;
    const auto expected = testing::RefSoftmax(x, s.SizeBetween(0, a), s[a], s.SizeFrom(a + 1));
    ExpectNear(RunSoftmax(13, s, x, axis), expected, 1e-6f);
  }
  // Default axis: -1.
  ExpectNear(RunSoftmax(13, s, x, std::nullopt), testing::RefSoftmax(x, 24, 5, 1), 1e-6f);
}

TEST(SoftmaxTest, Opset11CoercesTo2D) {
  const Shape s{2, 3, 4};
  const auto x = RandomFloats(s.NumElements(), 2, -4.0f, 4.0f);
  // Default axis 1: rows of 3*4 = 12 values (differs from opset 13's default).
  const auto opset11 = RunSoftmax(11, s, x, std::nullopt);
  ExpectNear(opset11, testing::RefSoftmax(x, 2, 12, 1), 1e-6f);
  const auto opset13 = RunSoftmax(13, s, x, std::nullopt);
  ExpectNear(opset13, testing::RefSoftmax(x, 6, 4, 1), 1e-6f);
  EXPECT_NE(opset11, opset13);
  // axis 0: one row of everything; axis -1 / 2: rows of 4; axis == rank: rows of one value.
  ExpectNear(RunSoftmax(11, s, x, 0), testing::RefSoftmax(x, 1, 24, 1), 1e-6f);
  ExpectNear(RunSoftmax(11, s, x, -1), testing::RefSoftmax(x, 6, 4, 1), 1e-6f);
  ExpectNear(RunSoftmax(1, s, x, 2), testing::RefSoftmax(x, 6, 4, 1), 1e-6f);
  ExpectNear(RunSoftmax(12, s, x, 3), std::vector<float>(24, 1.0f), 0.0f);
  // Opset 11 with axis 1 on rank 4 differs from opset 13 with axis 1.
  const Shape s4{2, 3, 2, 2};
  const auto x4 = RandomFloats(s4.NumElements(), 3);
  ExpectNear(RunSoftmax(11, s4, x4, 1), testing::RefSoftmax(x4, 2, 12, 1), 1e-6f);
  ExpectNear(RunSoftmax(13, s4, x4, 1), testing::RefSoftmax(x4, 2, 3, 4), 1e-6f);
}

TEST(SoftmaxTest, LargeValuesAndThreads) {
  const Shape s{64, 1000};
  auto x = RandomFloats(s.NumElements(), 4, -50.0f, 50.0f);
  x[0] = 1e30f;  // must not overflow
  const auto expected = testing::RefSoftmax(x, 64, 1000, 1);
  const auto one = RunSoftmax(13, s, x, -1, 1);
  const auto two = RunSoftmax(13, s, x, -1, 2);
  ExpectNear(one, expected, 1e-6f);
  EXPECT_EQ(one, two);
  // Strided axis with more than one column tile, two threads.
  const Shape t{3, 50, 600};
  const auto y = RandomFloats(t.NumElements(), 5);
  ExpectNear(RunSoftmax(13, t, y, 1, 2), testing::RefSoftmax(y, 3, 50, 600), 1e-6f);
}

TEST(SoftmaxTest, EmptyAndErrors) {
  EXPECT_TRUE(RunSoftmax(13, {0, 4}, {}, -1).empty());
  KernelTester t("Softmax", 13);
  t.Attr("axis", int64_t{2}).Input<float>({2, 3}, std::vector<float>(6));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_Softmax' (Softmax): axis 2 is out of range for rank 2 (expected -2..1)");
}

TEST(LogSoftmaxTest, BothOpsetRegimes) {
  const Shape s{2, 3, 4, 5};
  const auto x = RandomFloats(s.NumElements(), 6, -4.0f, 4.0f);
  for (int64_t axis : {-4, -2, -1, 0, 1, 3}) {
    SCOPED_TRACE(axis);
    const int a = axis < 0 ? axis + 4 : axis;
    ExpectNear(RunOp("LogSoftmax", 13, s, x, axis),
               Log(testing::RefSoftmax(x, s.SizeBetween(0, a), s[a], s.SizeFrom(a + 1))), 1e-5f);
    ExpectNear(RunOp("LogSoftmax", 11, s, x, axis),
               Log(testing::RefSoftmax(x, s.SizeBetween(0, a), s.SizeFrom(a), 1)), 1e-5f);
  }
  ExpectNear(RunOp("LogSoftmax", 1, s, x, std::nullopt), Log(testing::RefSoftmax(x, 2, 60, 1)),
             1e-5f);
  ExpectNear(RunOp("LogSoftmax", 13, s, x, std::nullopt), Log(testing::RefSoftmax(x, 24, 5, 1)),
             1e-5f);
}

TEST(LogSoftmaxTest, LargeValuesAndThreads) {
  // Differences of 1e4 would overflow exp(); log-softmax stays finite: x - max - log(sum).
  const std::vector<float> x = {0.0f, 1e4f, 2e4f, -1e4f, 3.0f, 3.0f};
  const auto y = RunOp("LogSoftmax", 13, {2, 3}, x, -1);
  ExpectNear(y,
             {-2e4f, -1e4f, 0.0f, -1e4f - 3.0f - std::log(2.0f), -std::log(2.0f), -std::log(2.0f)},
             1e-3f);
  const Shape s{3, 70, 300};
  const auto z = RandomFloats(s.NumElements(), 7, -20.0f, 20.0f);
  for (int64_t axis : {1, 2}) {
    EXPECT_EQ(RunOp("LogSoftmax", 13, s, z, axis, 1), RunOp("LogSoftmax", 13, s, z, axis, 2));
  }
}

TEST(HardmaxTest, FirstMaximumAlongAxis) {
  const Shape s{3, 4, 300};
  std::vector<float> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 5);  // ties
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    const int a = axis < 0 ? axis + 3 : axis;
    const auto y = RunOp("Hardmax", 13, s, x, axis);
    EXPECT_EQ(y, RefHardmax(x, s.SizeBetween(0, a), s[a], s.SizeFrom(a + 1)));
    EXPECT_EQ(RunOp("Hardmax", 13, s, x, axis, 2), y);
    // Opset 11: rows of everything from the axis on.
    EXPECT_EQ(RunOp("Hardmax", 11, s, x, axis),
              RefHardmax(x, s.SizeBetween(0, a), s.SizeFrom(a), 1));
  }
  EXPECT_EQ(RunOp("Hardmax", 13, {4}, {1, 3, 3, 2}, std::nullopt),
            (std::vector<float>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace inferd::kernels::cpu

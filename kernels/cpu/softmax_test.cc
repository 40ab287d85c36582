// Softmax against a naive reference: opset 11 (coerced to 2-D at axis, default 1) vs 13 (one
// dimension, default -1), negative axes, strided (non-last) axes, large values, errors, threads.
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

std::vector<float> RunSoftmax(int opset, const Shape& s, const std::vector<float>& x,
                              std::optional<int64_t> axis, int threads = 1) {
  KernelTester t("Softmax", opset);
  if (axis) t.Attr("axis", *axis);
  t.Input<float>(s, x).Threads(threads);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape(), s);
  return Values<float>((*out)[0]);
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

}  // namespace
}  // namespace inferd::kernels::cpu

// Comparisons, And/Or/Xor and Where against naive broadcasting references: every broadcast shape
// pair of the binary tests, NaN, integer and bool inputs, Where's three-way broadcasting over
// each element size (including the eight contiguous/repeated combinations of its inner loop),
// type and shape errors, and 1 vs 2 threads.
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

const std::vector<std::pair<Shape, Shape>>& Cases() {
  static const auto* cases = new std::vector<std::pair<Shape, Shape>>{
      {{2, 3}, {2, 3}},       {{}, {}},         {{4, 5}, {}},
      {{3, 4}, {4}},          {{3, 4}, {3, 1}}, {{3, 1}, {1, 4}},
      {{2, 1, 4}, {1, 3, 1}}, {{0, 3}, {3}},    {{300, 257}, {257}},
      {{3, 70000}, {3, 1}},
  };
  return *cases;
}

// Small integers so that equal values occur.
std::vector<int32_t> SmallInts(int64_t n, uint32_t seed) {
  std::vector<int32_t> v(n);
  uint32_t s = seed;
  for (auto& x : v) x = static_cast<int32_t>((s = s * 1103515245u + 12345u) >> 16) % 5 - 2;
  return v;
}

TEST(CompareTest, MatchesReference) {
  const std::vector<std::pair<const char*, std::function<bool(float, float)>>> ops = {
      {"Equal", [](float x, float y) { return x == y; }},
      {"Less", [](float x, float y) { return x < y; }},
      {"LessOrEqual", [](float x, float y) { return x <= y; }},
      {"Greater", [](float x, float y) { return x > y; }},
      {"GreaterOrEqual", [](float x, float y) { return x >= y; }}};
  for (const auto& [op, f] : ops) {
    for (const auto& [as, bs] : Cases()) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(op) + " " + as.ToString() + " " + bs.ToString());
        const auto ai = SmallInts(as.NumElements(), 1), bi = SmallInts(bs.NumElements(), 2);
        std::vector<float> a(ai.begin(), ai.end()), b(bi.begin(), bi.end());
        if (!a.empty()) a[0] = std::numeric_limits<float>::quiet_NaN();
        Shape s;
        const auto ref = testing::RefBinary(
            a, as, b, bs, [&](float x, float y) { return f(x, y) ? 1.0f : 0.0f; }, &s);
        const std::vector<uint8_t> expected(ref.begin(), ref.end());
        KernelTester t(op, 16);
        t.Input<float>(as, a).Input<float>(bs, b).Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ((*out)[0].dtype(), DataType::kBool);
        EXPECT_EQ((*out)[0].shape(), s);
        EXPECT_EQ(Values<uint8_t>((*out)[0]), expected);
        // int32 and int64 give the same answers (no NaN there).
        KernelTester u(op, 13);
        u.Input<int64_t>(as, std::vector<int64_t>(ai.begin(), ai.end()))
            .Input<int64_t>(bs, std::vector<int64_t>(bi.begin(), bi.end()));
        auto out2 = u.Run(CpuRegistry());
        ASSERT_TRUE(out2.ok()) << out2.status();
        const auto ref_int = testing::RefBinary(
            ai, as, bi, bs, [&](int32_t x, int32_t y) { return f(x, y) ? 1 : 0; }, &s);
        EXPECT_EQ(Values<uint8_t>((*out2)[0]),
                  std::vector<uint8_t>(ref_int.begin(), ref_int.end()));
      }
    }
  }
}

TEST(LogicalTest, AndOrXorAndBoolEqual) {
  const std::vector<uint8_t> a = {0, 0, 1, 1, 1, 0}, b = {0, 1};  // [3, 2] with [2]
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"And", {0, 0, 0, 1, 0, 0}},
      {"Or", {0, 1, 1, 1, 1, 1}},
      {"Xor", {0, 1, 1, 0, 1, 1}},
      {"Equal", {1, 0, 0, 1, 0, 0}}};
  for (const auto& [op, expected] : cases) {
    KernelTester t(op, 13);
    t.RawInput(DataType::kBool, {3, 2}, a.data(), a.size())
        .RawInput(DataType::kBool, {2}, b.data(), b.size());
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << op << ": " << out.status();
    EXPECT_EQ(Values<uint8_t>((*out)[0]), expected) << op;
  }
  {  // Opset 1: broadcast=1 with axis=0 aligns B [3] with A's first dimension.
    KernelTester t("Greater", 1);
    t.Attr("broadcast", int64_t{1}).Attr("axis", int64_t{0});
    t.Input<float>({3, 2}, {1, 5, 1, 5, 1, 5}).Input<float>({3}, {0, 2, 6});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{1, 1, 0, 1, 0, 0}));
  }
  // And on floats has no kernel.
  KernelTester t("And", 7);
  t.Input<float>({1}, {1}).Input<float>({1}, {1});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
}

template <typename T>
void CheckWhere(const Shape& cs, const Shape& xs, const Shape& ys, int threads) {
  SCOPED_TRACE(cs.ToString() + " " + xs.ToString() + " " + ys.ToString());
  std::vector<uint8_t> c(cs.NumElements());
  for (size_t i = 0; i < c.size(); ++i) c[i] = (i * 7 + 3) % 3 == 0;
  std::vector<T> x(xs.NumElements()), y(ys.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i + 1);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(-static_cast<int64_t>(i) - 1);
  const Shape out_shape = testing::RefBroadcastShape(testing::RefBroadcastShape(cs, xs), ys);
  std::vector<T> expected(out_shape.NumElements());
  for (int64_t i = 0; i < out_shape.NumElements(); ++i) {
    const auto idx = testing::Unflatten(i, out_shape);
    expected[i] = c[testing::BroadcastOffset(idx, cs)] ? x[testing::BroadcastOffset(idx, xs)]
                                                       : y[testing::BroadcastOffset(idx, ys)];
  }
  KernelTester t("Where", 16);
  t.RawInput(DataType::kBool, cs, c.data(), c.size())
      .template Input<T>(xs, x)
      .template Input<T>(ys, y);
  t.Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(WhereTest, ThreeWayBroadcasting) {
  const std::vector<std::array<Shape, 3>> cases = {
      {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}},
      {Shape{}, Shape{4}, Shape{}},
      {Shape{4}, Shape{}, Shape{}},
      {Shape{4}, Shape{4}, Shape{}},
      {Shape{4}, Shape{}, Shape{4}},
      {Shape{}, Shape{4}, Shape{4}},
      {Shape{}, Shape{}, Shape{4}},
      {Shape{1, 1, 5, 5}, Shape{2, 3, 5, 5}, Shape{}},
      {Shape{3, 1}, Shape{1, 4}, Shape{2, 1, 1}},
      {Shape{0, 2}, Shape{2}, Shape{1}},
      {Shape{1, 200, 300}, Shape{2, 200, 300}, Shape{300}},
  };
  for (const auto& [cs, xs, ys] : cases) {
    for (int threads : {1, 2}) {
      CheckWhere<float>(cs, xs, ys, threads);
      CheckWhere<int64_t>(cs, xs, ys, threads);
    }
    CheckWhere<int16_t>(cs, xs, ys, 1);
    CheckWhere<uint8_t>(cs, xs, ys, 1);
  }
}

TEST(WhereTest, Errors) {
  const std::vector<uint8_t> c = {1, 0};
  {  // X and Y of different types.
    KernelTester t("Where", 16);
    t.RawInput(DataType::kBool, {2}, c.data(), 2)
        .Input<float>({2}, {1, 2})
        .Input<int32_t>({2}, {1, 2});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("node 'test_Where' (Where): input 2"), std::string::npos);
  }
  {  // A condition that is not bool.
    KernelTester t("Where", 16);
    t.Input<float>({2}, {1, 0}).Input<float>({2}, {1, 2}).Input<float>({2}, {1, 2});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  }
  {  // Shapes that do not broadcast.
    KernelTester t("Where", 16);
    t.RawInput(DataType::kBool, {2}, c.data(), 2)
        .Input<float>({3}, {1, 2, 3})
        .Input<float>({}, {0});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("cannot be broadcast"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Add, Mul and Relu against a naive broadcasting reference: same shapes, scalars, rows, columns,
// middle-dimension and two-sided broadcasts, rank mismatch, empty tensors, int32/int64
// wrap-around, type and shape errors, and threads.
#include <limits>

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
using testing::RandomFloats;

template <typename T>
std::vector<T> Iota(int64_t n, T start) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i * 3 % 17));
  return v;
}

const std::vector<std::pair<Shape, Shape>>& BroadcastCases() {
  static const auto* cases = new std::vector<std::pair<Shape, Shape>>{
      {{2, 3}, {2, 3}},
      {{}, {}},
      {{4, 5}, {}},
      {{}, {4, 5}},
      {{1}, {3, 1, 2}},
      {{3, 4}, {4}},
      {{3, 4}, {3, 1}},
      {{3, 1}, {1, 4}},
      {{2, 3, 4}, {3, 1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{2, 3, 4, 5}, {1, 3, 1, 5}},
      {{5, 1, 1, 7}, {6, 1}},
      {{0, 3}, {3}},
      {{2, 0}, {2, 1}},
      {{300, 257}, {257}},   // several work items per thread
      {{3, 70000}, {3, 1}},  // rows longer than one work item
      {{70000}, {70000}},
  };
  return *cases;
}

TEST(ElementwiseTest, FloatBroadcastingMatchesReference) {
  for (const char* op : {"Add", "Mul"}) {
    for (const auto& [as, bs] : BroadcastCases()) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(op) + " " + as.ToString() + " " + bs.ToString());
        const auto a = RandomFloats(as.NumElements(), 1), b = RandomFloats(bs.NumElements(), 2);
        Shape expected_shape;
        const auto expected =
            std::string(op) == "Add"
                ? testing::RefBinary(
                      a, as, b, bs, [](float x, float y) { return x + y; }, &expected_shape)
                : testing::RefBinary(
                      a, as, b, bs, [](float x, float y) { return x * y; }, &expected_shape);
        KernelTester t(op, 14);
        t.Input<float>(as, a).Input<float>(bs, b).Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ((*out)[0].shape(), expected_shape);
        EXPECT_EQ(Values<float>((*out)[0]), expected);  // exact: same single operation
      }
    }
  }
}

template <typename T>
void CheckIntegers() {
  for (const auto& [as, bs] : BroadcastCases()) {
    SCOPED_TRACE(as.ToString() + " " + bs.ToString());
    const auto a = Iota<T>(as.NumElements(), T{-5}), b = Iota<T>(bs.NumElements(), T{2});
    Shape s;
    const auto add = testing::RefBinary(
        a, as, b, bs, [](T x, T y) { return T(x + y); }, &s);
    const auto mul = testing::RefBinary(
        a, as, b, bs, [](T x, T y) { return T(x * y); }, &s);
    for (const char* op : {"Add", "Mul"}) {
      KernelTester t(op, 13);
      t.template Input<T>(as, a).template Input<T>(bs, b).Threads(2);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].dtype(), engine::DataTypeOf<T>::value);
      EXPECT_EQ(Values<T>((*out)[0]), std::string(op) == "Add" ? add : mul);
    }
  }
}

TEST(ElementwiseTest, Int32) { CheckIntegers<int32_t>(); }
TEST(ElementwiseTest, Int64) { CheckIntegers<int64_t>(); }

TEST(ElementwiseTest, IntegerOverflowWraps) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  KernelTester t("Add", 14);
  t.Input<int32_t>({2}, {max, 1}).Input<int32_t>({}, {1});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 2}));
}

TEST(ElementwiseTest, OpsetsAndTypes) {
  for (int opset : {7, 13, 14, 17}) {
    KernelTester t("Mul", opset);
    t.Input<float>({2}, {2, 3}).Input<float>({1}, {4});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{8, 12}));
  }
  {  // Unsupported element type: the registry says so.
    KernelTester t("Add", 14);
    t.Input<double>({1}, {1.0}).Input<double>({1}, {2.0});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  }
  {  // Mixed types.
    KernelTester t("Add", 14);
    t.Input<float>({1}, {1.0f}).Input<int32_t>({1}, {2});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("input 1 has element type int32, expected float32"),
              std::string::npos)
        << out.status();
  }
}

TEST(ElementwiseTest, IncompatibleShapesNameTheNode) {
  KernelTester t("Add", 14);
  t.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({4}, std::vector<float>(4));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "node 'test_Add' (Add): shapes [2,3] and [4] cannot be broadcast (dimension 1: 3 vs "
            "4)");
}

TEST(ReluTest, MatchesReference) {
  for (int threads : {1, 2}) {
    for (const Shape& s : {Shape{}, Shape{0}, Shape{7}, Shape{3, 40000}}) {
      auto x = RandomFloats(s.NumElements(), 3);
      if (!x.empty()) x[0] = std::numeric_limits<float>::quiet_NaN();
      KernelTester t("Relu", 14);
      t.Input<float>(s, x).Threads(threads);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), s);
      const auto y = Values<float>((*out)[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i])) {
          EXPECT_TRUE(std::isnan(y[i]));
        } else {
          EXPECT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f);
        }
      }
    }
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

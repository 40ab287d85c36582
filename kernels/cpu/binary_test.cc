// Add, Sub, Mul, Div, Pow, Mod and PRelu against naive references: same shapes, scalars, rows,
// columns, middle-dimension and two-sided broadcasts, rank mismatch, empty tensors, integer
// wrap-around and division corner cases, the opset 1-6 broadcast attributes, Pow's exponent
// types and fast paths, Mod's sign rules, PRelu's per-channel slope, errors, and 1 vs 2 threads.
#include <cmath>
#include <limits>
#include <string>

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
      {{2, 40000}, {1}},
  };
  return *cases;
}

float RefOp(const std::string& op, float x, float y) {
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  return x / y;
}

TEST(BinaryTest, FloatBroadcastingMatchesReference) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& [as, bs] : BroadcastCases()) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(op) + " " + as.ToString() + " " + bs.ToString());
        const auto a = RandomFloats(as.NumElements(), 1),
                   b = RandomFloats(bs.NumElements(), 2, 0.5f, 2.0f);
        Shape expected_shape;
        const auto expected = testing::RefBinary(
            a, as, b, bs, [&](float x, float y) { return RefOp(op, x, y); }, &expected_shape);
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
    const auto a = Iota<T>(as.NumElements(), T{5}), b = Iota<T>(bs.NumElements(), T{2});
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      Shape s;
      const std::string name = op;
      const auto expected = testing::RefBinary(
          a, as, b, bs,
          [&](T x, T y) {
            if (name == "Add") return T(x + y);
            if (name == "Sub") return T(x - y);
            if (name == "Mul") return T(x * y);
            return T(x / y);
          },
          &s);
      KernelTester t(op, 14);
      t.template Input<T>(as, a).template Input<T>(bs, b).Threads(2);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].dtype(), engine::DataTypeOf<T>::value);
      EXPECT_EQ(Values<T>((*out)[0]), expected) << op;
    }
  }
}

TEST(BinaryTest, Int32) { CheckIntegers<int32_t>(); }
TEST(BinaryTest, Int64) { CheckIntegers<int64_t>(); }
TEST(BinaryTest, Uint8) { CheckIntegers<uint8_t>(); }
TEST(BinaryTest, Double) { CheckIntegers<double>(); }

TEST(BinaryTest, IntegerOverflowWrapsAndDivisionCorners) {
  const int32_t max = std::numeric_limits<int32_t>::max(),
                min = std::numeric_limits<int32_t>::min();
  {
    KernelTester t("Add", 14);
    t.Input<int32_t>({2}, {max, 1}).Input<int32_t>({}, {1});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{min, 2}));
  }
  {  // Truncation toward zero; x / 0 = 0; MIN / -1 wraps instead of trapping.
    KernelTester t("Div", 14);
    t.Input<int32_t>({6}, {7, -7, 7, -7, 5, min}).Input<int32_t>({6}, {2, 2, -2, -2, 0, -1});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{3, -3, -3, 3, 0, min}));
  }
  {  // uint16 * uint16 does not overflow a signed int.
    KernelTester t("Mul", 14);
    t.Input<uint16_t>({1}, {65535}).Input<uint16_t>({1}, {65535});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint16_t>((*out)[0]), (std::vector<uint16_t>{1}));
  }
}

TEST(BinaryTest, LegacyBroadcastAttributes) {
  // Opset 6, broadcast=1, axis=0: B [2] aligns with A's first dimension.
  KernelTester t("Add", 6);
  t.Attr("broadcast", int64_t{1}).Attr("axis", int64_t{0});
  t.Input<float>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<float>({2}, {10, 20});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{11, 12, 13, 24, 25, 26}));
  // Without axis B's dims are A's last ones (numpy).
  KernelTester u("Mul", 6);
  u.Attr("broadcast", int64_t{1}).Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2}, {10, 0});
  auto out2 = u.Run(CpuRegistry());
  ASSERT_TRUE(out2.ok()) << out2.status();
  EXPECT_EQ(Values<float>((*out2)[0]), (std::vector<float>{10, 0, 30, 0}));
  // An axis B does not fit from is an error naming the node.
  KernelTester v("Sub", 6);
  v.Attr("broadcast", int64_t{1}).Attr("axis", int64_t{1});
  v.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({3, 1}, std::vector<float>(3));
  auto bad = v.Run(CpuRegistry());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 'test_Sub' (Sub)"), std::string::npos);
}

TEST(BinaryTest, PowTypesAndFastPaths) {
  const std::vector<float> x = {-2.0f, -0.0f, 0.5f, 1.5f, 3.0f, 10.0f};
  for (float e : {2.0f, 3.0f, 0.5f, 1.0f, -1.5f, 0.0f}) {
    for (int threads : {1, 2}) {
      KernelTester t("Pow", 15);
      t.Input<float>({6}, x).Input<float>({}, {e}).Threads(threads);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      const auto y = Values<float>((*out)[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        const float ref = std::pow(x[i], e);
        if (std::isnan(ref)) {
          EXPECT_TRUE(std::isnan(y[i])) << x[i] << "^" << e;
        } else if (std::isinf(ref)) {
          EXPECT_EQ(y[i], ref) << x[i] << "^" << e;
        } else {
          EXPECT_NEAR(y[i], ref, 1e-6f * std::fabs(ref)) << x[i] << "^" << e;
          EXPECT_EQ(std::signbit(y[i]), std::signbit(ref)) << x[i] << "^" << e;
        }
      }
    }
  }
  {  // float base, int64 exponent, broadcast.
    KernelTester t("Pow", 15);
    t.Input<float>({2, 2}, {1, 2, 3, 4}).Input<int64_t>({2}, {2, 3});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{1, 8, 9, 64}));
  }
  {  // int base: integer exponent exact, float exponent truncated, negative exponent.
    KernelTester t("Pow", 15);
    t.Input<int64_t>({4}, {3, 2, -3, 2}).Input<int64_t>({4}, {39, 62, 3, -1});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]),
              (std::vector<int64_t>{4052555153018976267LL, int64_t{1} << 62, -27, 0}));
    KernelTester u("Pow", 15);
    u.Input<int32_t>({3}, {4, 2, 9}).Input<float>({3}, {0.5f, 3.0f, 1.5f});
    auto out2 = u.Run(CpuRegistry());
    ASSERT_TRUE(out2.ok()) << out2.status();
    EXPECT_EQ(Values<int32_t>((*out2)[0]), (std::vector<int32_t>{2, 8, 27}));
  }
}

TEST(BinaryTest, ModSignRules) {
  const std::vector<int32_t> a = {-4, 7, 5, 4, -7, 8, 3}, b = {7, -3, 8, -2, 3, 5, 0};
  {
    KernelTester t("Mod", 13);  // fmod = 0: sign of the divisor
    t.Input<int32_t>({7}, a).Input<int32_t>({7}, b);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{3, -2, 5, 0, 2, 3, 0}));
  }
  {
    KernelTester t("Mod", 13);  // fmod = 1: sign of the dividend
    t.Attr("fmod", int64_t{1}).Input<int32_t>({7}, a).Input<int32_t>({7}, b);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{-4, 1, 5, 0, -1, 3, 0}));
  }
  {
    KernelTester t("Mod", 13);
    t.Attr("fmod", int64_t{1}).Input<float>({3}, {-4.3f, 7.2f, 5.0f}).Input<float>({1}, {2.1f});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const auto y = Values<float>((*out)[0]);
    EXPECT_FLOAT_EQ(y[0], std::fmod(-4.3f, 2.1f));
    EXPECT_FLOAT_EQ(y[1], std::fmod(7.2f, 2.1f));
    EXPECT_FLOAT_EQ(y[2], std::fmod(5.0f, 2.1f));
  }
  {
    KernelTester t("Mod", 13);
    t.Attr("fmod", int64_t{2}).Input<int32_t>({1}, {1}).Input<int32_t>({1}, {1});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
}

TEST(BinaryTest, PRelu) {
  // Opset 16: slope [3, 1] broadcasts to X [2, 3, 2].
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12};
  KernelTester t("PRelu", 16);
  t.Input<float>({2, 3, 2}, x).Input<float>({3, 1}, {0.1f, 0.2f, 0.3f});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const auto y = Values<float>((*out)[0]);
  const float slopes[3] = {0.1f, 0.2f, 0.3f};
  for (int i = 0; i < 12; ++i) {
    EXPECT_FLOAT_EQ(y[i], x[i] < 0 ? x[i] * slopes[(i / 2) % 3] : x[i]) << i;
  }
  // Opset 6: a 1-D slope of C values is per channel (dimension 1), not the last dimension.
  KernelTester old("PRelu", 6);
  old.Input<float>({1, 3, 2}, {-1, -1, -1, -1, -1, 1}).Input<float>({3}, {0.1f, 0.2f, 0.3f});
  auto out2 = old.Run(CpuRegistry());
  ASSERT_TRUE(out2.ok()) << out2.status();
  EXPECT_EQ(Values<float>((*out2)[0]), (std::vector<float>{-0.1f, -0.1f, -0.2f, -0.2f, -0.3f, 1}));
  // A slope that would grow X is refused.
  KernelTester bad("PRelu", 16);
  bad.Input<float>({3}, {1, 2, 3}).Input<float>({2, 3}, std::vector<float>(6));
  auto st = bad.Run(CpuRegistry());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("does not broadcast to X"), std::string::npos);
}

TEST(BinaryTest, TypeAndShapeErrorsNameTheNode) {
  {  // Unsupported element type: the registry says so.
    KernelTester t("Add", 14);
    const bool yes = true;
    t.RawInput(engine::DataType::kBool, {1}, &yes, 1)
        .RawInput(engine::DataType::kBool, {1}, &yes, 1);
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
  KernelTester t("Add", 14);
  t.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({4}, std::vector<float>(4));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "node 'test_Add' (Add): shapes [2,3] and [4] cannot be broadcast (dimension 1: 3 vs "
            "4)");
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Cast and CastLike: float <-> integer truncation, bool in both directions (NaN is true), float16
// rounding to nearest even (ties, overflow to inf, subnormals), bfloat16 truncation, double and
// int64 into float16, the same-type alias, refused string casts, and 1 vs 2 threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename To, typename From>
std::vector<To> CastValues(const std::vector<From>& x, DataType to, int threads = 1) {
  KernelTester t("Cast", 13);
  t.Attr("to", static_cast<int64_t>(to)).Input<From>({static_cast<int64_t>(x.size())}, x);
  t.Threads(threads);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), to);
  return Values<To>((*out)[0]);
}

TEST(CastTest, FloatAndIntegers) {
  const std::vector<float> x = {-2.7f, -0.5f, 0.0f, 0.9f, 3.5f, 100.25f};
  EXPECT_EQ(CastValues<int32_t>(x, DataType::kInt32), (std::vector<int32_t>{-2, 0, 0, 0, 3, 100}));
  EXPECT_EQ(CastValues<int64_t>(x, DataType::kInt64), (std::vector<int64_t>{-2, 0, 0, 0, 3, 100}));
  EXPECT_EQ(CastValues<int8_t>(x, DataType::kInt8), (std::vector<int8_t>{-2, 0, 0, 0, 3, 100}));
  EXPECT_EQ(CastValues<double>(x, DataType::kFloat64),
            (std::vector<double>{-2.7f, -0.5f, 0.0f, 0.9f, 3.5f, 100.25f}));
  const std::vector<int64_t> big = {-(int64_t{1} << 40), -1, 0, 300, (int64_t{1} << 53) + 1};
  EXPECT_EQ(CastValues<float>(big, DataType::kFloat32),
            (std::vector<float>{-1099511627776.0f, -1, 0, 300, 9007199254740992.0f}));
  EXPECT_EQ(CastValues<int32_t>(big, DataType::kInt32), (std::vector<int32_t>{0, -1, 0, 300, 1}));
  EXPECT_EQ(CastValues<uint8_t>(big, DataType::kUint8), (std::vector<uint8_t>{0, 255, 0, 44, 1}));
}

TEST(CastTest, Bool) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -3.0f, kNaN, 1e-40f};
  EXPECT_EQ(CastValues<uint8_t>(x, DataType::kBool), (std::vector<uint8_t>{0, 0, 1, 1, 1, 1}));
  const std::vector<uint8_t> b = {0, 1, 1};
  KernelTester t("Cast", 9);
  t.Attr("to", static_cast<int64_t>(DataType::kFloat32));
  t.RawInput(DataType::kBool, {3}, b.data(), b.size());
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 1}));
}

TEST(CastTest, Float16RoundsToNearestEven) {
  const float tie_down = 1.0f + std::ldexp(1.0f, -11), tie_up = 1.0f + 3 * std::ldexp(1.0f, -11);
  const std::vector<float> x = {1.0f,
                                tie_down,
                                tie_up,
                                65504.0f,
                                65520.0f,
                                -kInf,
                                kNaN,
                                std::ldexp(1.0f, -24),
                                std::ldexp(1.0f, -26),
                                -0.0f,
                                0.1f};
  const auto h = CastValues<uint16_t>(x, DataType::kFloat16);
  ASSERT_EQ(h.size(), x.size());
  EXPECT_EQ(h[0], 0x3c00);
  EXPECT_EQ(h[1], 0x3c00);  // tie to even (down)
  EXPECT_EQ(h[2], 0x3c02);  // tie to even (up)
  EXPECT_EQ(h[3], 0x7bff);  // largest half
  EXPECT_EQ(h[4], 0x7c00);  // rounds past it: inf
  EXPECT_EQ(h[5], 0xfc00);
  EXPECT_EQ(h[6] & 0x7c00, 0x7c00);
  EXPECT_NE(h[6] & 0x3ff, 0);
  EXPECT_EQ(h[7], 0x0001);  // smallest subnormal
  EXPECT_EQ(h[8], 0x0000);  // a quarter of it rounds to 0
  EXPECT_EQ(h[9], 0x8000);
  EXPECT_EQ(h[10], 0x2e66);
  // Back to float is exact.
  KernelTester t("Cast", 13);
  t.Attr("to", static_cast<int64_t>(DataType::kFloat32));
  t.RawInput(DataType::kFloat16, {static_cast<int64_t>(h.size())}, h.data(), h.size() * 2);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const auto back = Values<float>((*out)[0]);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[2], 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(back[4], kInf);
  EXPECT_EQ(back[7], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(back[6]));
  // double and int64 into float16.
  EXPECT_EQ(CastValues<uint16_t>(std::vector<double>{0.5, -2.0}, DataType::kFloat16),
            (std::vector<uint16_t>{0x3800, 0xc000}));
  EXPECT_EQ(CastValues<uint16_t>(std::vector<int64_t>{3, 70000}, DataType::kFloat16),
            (std::vector<uint16_t>{0x4200, 0x7c00}));
}

TEST(CastTest, BFloat16Truncates) {
  // 0x3ef5eeb0 truncates to 0x3ef5 (rounding would give 0x3ef6), as the ONNX reference does.
  float v;
  const uint32_t bits = 0x3ef5eeb0u;
  std::memcpy(&v, &bits, 4);
  const auto b = CastValues<uint16_t>(std::vector<float>{v, 1.0f, -kInf}, DataType::kBFloat16);
  EXPECT_EQ(b, (std::vector<uint16_t>{0x3ef5, 0x3f80, 0xff80}));
}

TEST(CastTest, SameTypeIsAnAliasAndStringsAreRefused) {
  const auto x = engine::testing::TestTensor::Of<float>({2}, {1.5f, -2.0f});
  {
    engine::testing::KernelTester spec("Cast", 13);
    spec.Attr("to", static_cast<int64_t>(DataType::kFloat32)).Input(x);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ((*kernel)->OutputAliases(), (std::vector<std::pair<int, int>>{{0, 0}}));
    auto out = engine::testing::RunKernel(**kernel, {&x}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].values<float>(), x.values<float>());
  }
  {
    engine::testing::KernelTester spec("Cast", 13);
    spec.Attr("to", static_cast<int64_t>(DataType::kInt64)).Input(x);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_TRUE((*kernel)->OutputAliases().empty());
  }
  // No element type of ONNX (strings: tests/engine/strings_test.cc).
  KernelTester t("Cast", 13);
  t.Attr("to", int64_t{99}).Input<float>({1}, {1.0f});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(out.status().message().find("node 'test_Cast' (Cast)"), std::string::npos);
  KernelTester u("Cast", 13);
  u.Input<float>({1}, {1.0f});  // no `to`
  EXPECT_FALSE(u.Run(CpuRegistry()).ok());
}

TEST(CastTest, CastLikeAndThreads) {
  KernelTester t("CastLike", 15);
  t.Input<float>({3}, {1.9f, -1.9f, 7.0f}).Input<int32_t>({}, {0});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DataType::kInt32);
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{1, -1, 7}));

  const auto x = testing::RandomFloats(100000, 5, -1000.0f, 1000.0f);
  const auto one = CastValues<uint16_t>(x, DataType::kFloat16, 1);
  const auto two = CastValues<uint16_t>(x, DataType::kFloat16, 2);
  EXPECT_EQ(one, two);
  for (size_t i = 0; i < x.size(); i += 997) EXPECT_EQ(one[i], FloatToHalfPortable(x[i])) << x[i];
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Unary math, activations, Clip, Identity and Dropout against double-precision references:
// special values (NaN, +-inf, +-0), integer minimums, half-to-even rounding, attributes and their
// defaults, every Clip form, aliases, Dropout's mask and training mode, and 1 vs 2 threads on
// tensors large enough to split.
#include <cmath>
#include <functional>
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

// Special values, then a spread over [-12, 12], then enough to split across threads.
std::vector<float> TestValues(size_t n) {
  std::vector<float> v = {0.0f,    -0.0f, kNaN,  kInf, -kInf, 1e-30f,
                          -1e-30f, 0.5f,  -0.5f, 2.5f, -2.5f};
  const auto r = testing::RandomFloats(n - v.size(), 7, -12.0f, 12.0f);
  v.insert(v.end(), r.begin(), r.end());
  return v;
}

// Runs `op` on float32 and float64 inputs and compares with `ref` in double: relative `rtol`
// (plus 1e-30 absolute), NaN where the reference is NaN.
void CheckFloatOp(const std::string& op, int opset, const std::function<double(double)>& ref,
                  double rtol) {
  const std::vector<float> x = TestValues(40000);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(op + " threads " + std::to_string(threads));
    KernelTester t(op, opset);
    t.Input<float>({static_cast<int64_t>(x.size())}, x).Threads(threads);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const auto y = Values<float>((*out)[0]);
    int bad = 0;
    for (size_t i = 0; i < x.size() && bad < 5; ++i) {
      const double e = ref(x[i]);
      const float expected = static_cast<float>(e);
      const bool ok =
          std::isnan(e) ? std::isnan(y[i])
                        : (y[i] == expected || std::fabs(y[i] - e) <= rtol * std::fabs(e) + 1e-30);
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << op << "(" << x[i] << ") = " << y[i] << ", expected " << e;
    }
  }
  // float64 goes through the C library: compare at double precision.
  const std::vector<double> xd(x.begin(), x.begin() + 100);
  KernelTester t(op, opset);
  t.Input<double>({100}, xd);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const auto yd = Values<double>((*out)[0]);
  for (size_t i = 0; i < xd.size(); ++i) {
    const double e = ref(xd[i]);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(yd[i]));
    } else {
      EXPECT_TRUE(yd[i] == e || std::fabs(yd[i] - e) <= 1e-12 * std::fabs(e) + 1e-300)
          << op << "(" << xd[i] << ") = " << yd[i] << ", expected " << e;
    }
  }
}

TEST(UnaryTest, FloatMathMatchesReference) {
  CheckFloatOp(
      "Exp", 13, [](double v) { return std::exp(v); }, 1e-6);
  CheckFloatOp(
      "Tanh", 13, [](double v) { return std::tanh(v); }, 1e-6);
  CheckFloatOp(
      "Sigmoid", 13, [](double v) { return 1 / (1 + std::exp(-v)); }, 1e-6);
  CheckFloatOp(
      "Erf", 13, [](double v) { return std::erf(v); }, 1e-6);
  CheckFloatOp(
      "Sqrt", 13, [](double v) { return std::sqrt(v); }, 1e-7);
  CheckFloatOp(
      "Log", 13, [](double v) { return std::log(v); }, 1e-7);
  CheckFloatOp(
      "Reciprocal", 13, [](double v) { return 1 / v; }, 1e-7);
  CheckFloatOp(
      "Sin", 7, [](double v) { return std::sin(v); }, 1e-6);
  CheckFloatOp(
      "Cos", 7, [](double v) { return std::cos(v); }, 1e-6);
  CheckFloatOp(
      "Floor", 13, [](double v) { return std::floor(v); }, 0);
  CheckFloatOp(
      "Ceil", 13, [](double v) { return std::ceil(v); }, 0);
  CheckFloatOp(
      "Round", 11, [](double v) { return std::nearbyint(v); }, 0);
  CheckFloatOp(
      "Neg", 13, [](double v) { return -v; }, 0);
  CheckFloatOp(
      "Abs", 13, [](double v) { return std::fabs(v); }, 0);
  CheckFloatOp(
      "Sign", 13, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : v); }, 0);
  CheckFloatOp(
      "Relu", 14, [](double v) { return v < 0 ? 0.0 : v; }, 0);
  CheckFloatOp(
      "Softplus", 1, [](double v) { return v > 30 ? v : std::log1p(std::exp(v)); }, 1e-6);
  CheckFloatOp(
      "HardSwish", 14, [](double v) { return v * std::max(0.0, std::min(1.0, v / 6 + 0.5)); },
      1e-6);
}

TEST(UnaryTest, RoundIsHalfToEven) {
  KernelTester t("Round", 11);
  t.Input<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, 3.5f});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 2, 2, -0.0f, -2, 2, -3, 4}));
}

TEST(UnaryTest, Integers) {
  const int32_t min = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> x = {min, -5, 0, 7};
  const std::vector<std::pair<const char*, std::vector<int32_t>>> cases = {{"Neg", {min, 5, 0, -7}},
                                                                           {"Abs", {min, 5, 0, 7}},
                                                                           {"Sign", {-1, -1, 0, 1}},
                                                                           {"Relu", {0, 0, 0, 7}}};
  for (const auto& [op, expected] : cases) {
    KernelTester t(op, 14);
    t.Input<int32_t>({4}, x);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << op << ": " << out.status();
    EXPECT_EQ(Values<int32_t>((*out)[0]), expected) << op;
  }
  KernelTester t("Abs", 13);
  t.Input<uint8_t>({2}, {0, 250});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 250}));
}

TEST(UnaryTest, IsNaNAndNot) {
  {
    KernelTester t("IsNaN", 13);
    t.Input<float>({4}, {1.0f, kNaN, kInf, -kNaN});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype(), DataType::kBool);
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 1, 0, 1}));
  }
  {
    const std::vector<uint16_t> h = {FloatToHalf(1.0f), 0x7e00, 0x7c00, 0xfe01};
    KernelTester t("IsNaN", 13);
    t.RawInput(DataType::kFloat16, {4}, h.data(), h.size() * 2);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 1, 0, 1}));
  }
  {
    const std::vector<uint8_t> b = {1, 0, 0, 1};
    KernelTester t("Not", 1);
    t.RawInput(DataType::kBool, {2, 2}, b.data(), b.size());
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 1, 1, 0}));
  }
}

TEST(UnaryTest, ActivationAttributes) {
  const std::vector<float> x = {-3.0f, -1e-3f, 0.0f, 0.7f, 4.0f};
  struct Case {
    const char* op;
    std::vector<std::pair<std::string, float>> attrs;
    std::function<double(double)> ref;
  };
  const std::vector<Case> cases = {
      {"LeakyRelu", {}, [](double v) { return v < 0 ? 0.01 * v : v; }},
      {"LeakyRelu", {{"alpha", 0.3f}}, [](double v) { return v < 0 ? 0.3 * v : v; }},
      {"Elu", {}, [](double v) { return v < 0 ? std::expm1(v) : v; }},
      {"Elu", {{"alpha", 2.0f}}, [](double v) { return v < 0 ? 2 * std::expm1(v) : v; }},
      {"Selu",
       {},
       [](double v) {
         return 1.0507009873554805 * (v <= 0 ? 1.6732632423543772 * std::expm1(v) : v);
       }},
      {"Selu",
       {{"alpha", 2.0f}, {"gamma", 3.0f}},
       [](double v) { return 3.0 * (v <= 0 ? 2.0 * std::expm1(v) : v); }},
      {"HardSigmoid", {}, [](double v) { return std::max(0.0, std::min(1.0, 0.2 * v + 0.5)); }},
      {"HardSigmoid",
       {{"alpha", 0.5f}, {"beta", 0.6f}},
       [](double v) { return std::max(0.0, std::min(1.0, 0.5 * v + 0.6)); }},
  };
  for (const Case& c : cases) {
    for (int opset : {6, 16}) {
      KernelTester t(c.op, opset);
      for (const auto& [name, value] : c.attrs) t.Attr(name, value);
      t.Input<float>({5}, x);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
      const auto y = Values<float>((*out)[0]);
      for (size_t i = 0; i < x.size(); ++i) {
        const double e = c.ref(x[i]);
        EXPECT_NEAR(y[i], e, 1e-6 * std::fabs(e) + 1e-9) << c.op << "(" << x[i] << ")";
      }
    }
  }
}

TEST(UnaryTest, ClipForms) {
  const std::vector<float> x = {-5, -1, 0, kNaN, 2, 9};
  {  // Opset 6: attributes.
    KernelTester t("Clip", 6);
    t.Attr("min", -1.5f).Attr("max", 3.0f).Input<float>({6}, x);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const auto y = Values<float>((*out)[0]);
    EXPECT_EQ(y[0], -1.5f);
    EXPECT_EQ(y[1], -1.0f);
    EXPECT_TRUE(std::isnan(y[3]));
    EXPECT_EQ(y[5], 3.0f);
  }
  {  // Opset 11: no bounds, then only max.
    KernelTester t("Clip", 11);
    t.Input<float>({6}, x);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0])[0], -5.0f);
    KernelTester u("Clip", 11);
    u.Input<float>({6}, x).AbsentInput().Input<float>({}, {1.0f});
    auto out2 = u.Run(CpuRegistry());
    ASSERT_TRUE(out2.ok()) << out2.status();
    const auto y = Values<float>((*out2)[0]);
    EXPECT_EQ(y[0], -5.0f);
    EXPECT_EQ(y[5], 1.0f);
  }
  {  // Opset 13, int8, min > max gives max.
    KernelTester t("Clip", 13);
    t.Input<int8_t>({4}, {-128, -3, 5, 127}).Input<int8_t>({}, {-2}).Input<int8_t>({}, {100});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int8_t>((*out)[0]), (std::vector<int8_t>{-2, -2, 5, 100}));
    KernelTester u("Clip", 13);
    u.Input<int64_t>({2}, {1, 5}).Input<int64_t>({}, {4}).Input<int64_t>({}, {2});
    auto out2 = u.Run(CpuRegistry());
    ASSERT_TRUE(out2.ok()) << out2.status();
    EXPECT_EQ(Values<int64_t>((*out2)[0]), (std::vector<int64_t>{2, 2}));
  }
  {  // A non-scalar bound is an error naming the node.
    KernelTester t("Clip", 13);
    t.Input<float>({2}, {1, 2}).Input<float>({2}, {0, 0});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().message(),
              "node 'test_Clip' (Clip): min must be a scalar, got shape [2]");
  }
}

TEST(UnaryTest, IdentityAndDropoutAreAliases) {
  const auto x = engine::testing::TestTensor::Of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"Identity", "Dropout"}) {
    engine::testing::KernelTester spec(op, 13);
    spec.Input(x);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ((*kernel)->OutputAliases(), (std::vector<std::pair<int, int>>{{0, 0}})) << op;
    auto out = engine::testing::RunKernel(**kernel, {&x}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].values<float>(), x.values<float>());
  }
  const auto ints = engine::testing::TestTensor::Of<int64_t>({2}, {7, 8});
  engine::testing::KernelTester spec("Identity", 16);
  spec.Input(ints);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = engine::testing::RunKernel(**kernel, {&ints}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].values<int64_t>(), (std::vector<int64_t>{7, 8}));
}

TEST(UnaryTest, DropoutMaskAndTrainingMode) {
  const std::vector<float> x = {1, -2, 3};
  {  // Opset 13: bool mask of all true.
    KernelTester t("Dropout", 13);
    t.Input<float>({3}, x).Input<float>({}, {0.4f}).Outputs(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), x);
    EXPECT_EQ((*out)[1].dtype(), DataType::kBool);
    EXPECT_EQ(Values<uint8_t>((*out)[1]), (std::vector<uint8_t>{1, 1, 1}));
  }
  {  // Opset 7: the mask has the input's type.
    KernelTester t("Dropout", 7);
    t.Attr("ratio", 0.3f).Input<float>({3}, x).Outputs(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[1].dtype(), DataType::kFloat32);
    EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, 1, 1}));
  }
  const bool yes = true;
  {  // Training with ratio 0 changes nothing.
    KernelTester t("Dropout", 13);
    t.Input<float>({3}, x).Input<float>({}, {0.0f}).RawInput(DataType::kBool, {}, &yes, 1);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), x);
  }
  {  // Training with a ratio drops (0) or scales (x / (1 - ratio)) each element; a constant
     // training_mode = true trains too (then the output is no alias of the input).
    KernelTester t("Dropout", 13);
    t.Input<float>({3}, x).Input<float>({}, {0.5f}).RawInput(DataType::kBool, {}, &yes, 1);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> y = Values<float>((*out)[0]);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(y[i] == 0 || y[i] == 2 * x[i]) << y[i];
    KernelTester u("Dropout", 13);
    u.Input<float>({3}, x).AbsentInput().RawInput(DataType::kBool, {}, &yes, 1,
                                                  /*constant=*/true);
    auto kernel = u.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_TRUE((*kernel)->OutputAliases().empty());
    EXPECT_TRUE(u.Run(CpuRegistry()).ok());
    KernelTester w("Dropout", 13);  // ratio 1 would divide by zero
    w.Input<float>({3}, x).Input<float>({}, {1.0f}).RawInput(DataType::kBool, {}, &yes, 1);
    auto bad = w.Run(CpuRegistry());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("ratio"), std::string::npos) << bad.status();
    KernelTester v("Dropout", 6);
    v.Input<float>({3}, x);
    auto out3 = v.Run(CpuRegistry());  // opsets < 7 with is_test = 0: still refused
    ASSERT_FALSE(out3.ok());
    EXPECT_NE(out3.status().message().find("is_test"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Sum, Mean, Max and Min over one to four inputs with broadcasting, against a naive reference;
// NaN propagation, integer and float16 inputs, the one-input alias, errors, and 1 vs 2 threads.
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

double Fold(const std::string& op, double acc, double v) {
  if (op == "Max") return (acc > v || acc != acc) ? acc : v;
  if (op == "Min") return (acc < v || acc != acc) ? acc : v;
  return acc + v;
}

TEST(VariadicTest, MatchesReference) {
  const std::vector<std::vector<Shape>> cases = {
      {Shape{2, 3}},
      {Shape{2, 3}, Shape{2, 3}},
      {Shape{3, 1}, Shape{1, 4}},
      {Shape{}, Shape{2, 2}, Shape{2}},
      {Shape{2, 1, 3}, Shape{4, 1}, Shape{3}, Shape{}},
      {Shape{300, 200}, Shape{200}, Shape{300, 1}},
      {Shape{0, 3}, Shape{3}},
  };
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    for (const auto& shapes : cases) {
      for (int threads : {1, 2}) {
        std::string trace = std::string(op);
        for (const Shape& s : shapes) trace += " " + s.ToString();
        SCOPED_TRACE(trace);
        std::vector<std::vector<float>> in;
        Shape out_shape;
        KernelTester t(op, 13);
        for (size_t i = 0; i < shapes.size(); ++i) {
          in.push_back(testing::RandomFloats(shapes[i].NumElements(), 10 + i));
          if (i == 1 && !in[i].empty()) in[i][0] = std::numeric_limits<float>::quiet_NaN();
          t.Input<float>(shapes[i], in[i]);
          out_shape = i == 0 ? shapes[0] : testing::RefBroadcastShape(out_shape, shapes[i]);
        }
        t.Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ((*out)[0].shape(), out_shape);
        const auto y = Values<float>((*out)[0]);
        for (int64_t k = 0; k < out_shape.NumElements(); ++k) {
          const auto idx = testing::Unflatten(k, out_shape);
          double acc = in[0][testing::BroadcastOffset(idx, shapes[0])];
          for (size_t i = 1; i < shapes.size(); ++i) {
            acc = Fold(op, acc, in[i][testing::BroadcastOffset(idx, shapes[i])]);
          }
          if (std::string(op) == "Mean") acc /= static_cast<double>(shapes.size());
          if (std::isnan(acc)) {
            EXPECT_TRUE(std::isnan(y[k])) << k;
          } else {
            EXPECT_NEAR(y[k], acc, 1e-6) << k;
          }
        }
      }
    }
  }
}

TEST(VariadicTest, IntegersAndFloat16) {
  {
    KernelTester t("Max", 13);
    t.Input<int64_t>({3}, {1, -5, 9}).Input<int64_t>({}, {0}).Input<int64_t>({3}, {-1, -2, 10});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 0, 10}));
  }
  {
    KernelTester t("Min", 13);
    t.Input<uint8_t>({3}, {1, 200, 9}).Input<uint8_t>({3}, {3, 100, 255});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{1, 100, 9}));
  }
  {
    const std::vector<uint16_t> a = {FloatToHalf(1.5f), FloatToHalf(-2.0f)},
                                b = {FloatToHalf(0.5f), FloatToHalf(3.0f)};
    for (const auto& [op, expected] :
         std::vector<std::pair<const char*, std::vector<float>>>{{"Max", {1.5f, 3.0f}},
                                                                 {"Min", {0.5f, -2.0f}},
                                                                 {"Sum", {2.0f, 1.0f}},
                                                                 {"Mean", {1.0f, 0.5f}}}) {
      KernelTester t(op, 13);
      t.RawInput(DataType::kFloat16, {2}, a.data(), 4)
          .RawInput(DataType::kFloat16, {2}, b.data(), 4);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << op << ": " << out.status();
      const auto y = Values<uint16_t>((*out)[0]);
      EXPECT_EQ(HalfToFloat(y[0]), expected[0]) << op;
      EXPECT_EQ(HalfToFloat(y[1]), expected[1]) << op;
    }
  }
}

TEST(VariadicTest, OneInputIsAnAliasAndErrors) {
  const auto x = engine::testing::TestTensor::Of<float>({2}, {1.5f, -2.0f});
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    engine::testing::KernelTester spec(op, 8);
    spec.Input(x);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ((*kernel)->OutputAliases(), (std::vector<std::pair<int, int>>{{0, 0}})) << op;
    auto out = engine::testing::RunKernel(**kernel, {&x}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].values<float>(), x.values<float>()) << op;
  }
  {
    KernelTester t("Sum", 13);
    t.Input<float>({2}, {1, 2}).Input<float>({3}, {1, 2, 3});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("node 'test_Sum' (Sum): shapes [2] and [3]"),
              std::string::npos)
        << out.status();
  }
  {
    KernelTester t("Max", 13);
    t.Input<float>({2}, {1, 2}).Input<double>({2}, {1, 2});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  }
  {  // Sum has no integer kernel.
    KernelTester t("Sum", 13);
    t.Input<int32_t>({1}, {1}).Input<int32_t>({1}, {1});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

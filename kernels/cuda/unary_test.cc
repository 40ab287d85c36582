// Relu, Sigmoid, Tanh on CUDA against the CPU kernels on fresh random inputs, including values
// far out where sigmoid and tanh saturate, and the math ops (Neg, Abs, Sqrt, Reciprocal, Exp, Log,
// Erf, Gelu, Sin, Cos, Floor, Ceil, Round) on inputs in their domains; the activations with
// attributes (LeakyRelu, Elu, Selu, HardSigmoid, HardSwish, Softplus), com.microsoft's Gelu,
// FastGelu, BiasGelu, QuickGelu (with and without bias), and Clip (float32, int32, int64;
// attributes and host inputs). Skips without a GPU.
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;

TEST(CudaUnaryTest, MatchesCpu) {
  if (absl::Status s = CheckCudaDevice(0); !s.ok()) GTEST_SKIP() << s.message();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  for (const char* op : {"Relu", "Sigmoid", "Tanh"}) {
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 5, 17}, Shape{1 << 20}, Shape{0, 4}}) {
      SCOPED_TRACE(absl::StrCat(op, " ", shape.ToString()));
      std::vector<float> x = RandomFloats(shape.NumElements(), -8, 8, next++);
      if (x.size() > 4) {
        x[0] = 100.0f;  // saturation, and no overflow in exp
        x[1] = -100.0f;
        x[2] = 0.0f;
        x[3] = -0.0f;
      }
      const TestTensor in = TestTensor::Of<float>(shape, x);
      KernelTester t(op, 14);
      t.Input(in);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&in});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->cuda[0].shape, shape);
      compare.ExpectNear(*out, 2e-6f);
    }
  }
  compare.Record();
}

// One unary node per case on inputs in the op's domain, against the CPU kernel.
struct UnaryCase {
  const char* op;
  int opset;
  std::function<void(KernelTester&)> attrs;
  float lo, hi, tolerance;  // inputs in [lo, hi); absolute tolerance
};

// Runs every case on a few shapes; with `corners`, the first inputs are set to rounding ties, the
// HardSwish / HardSigmoid corners (+-3) and signed zeros.
void ExpectUnaryCasesMatchCpu(const std::vector<UnaryCase>& cases, bool corners) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  for (const UnaryCase& c : cases) {
    for (const Shape& shape : {Shape{}, Shape{3, 5, 17}, Shape{1 << 20}, Shape{0, 4}}) {
      SCOPED_TRACE(absl::StrCat(c.op, " opset ", c.opset, " ", shape.ToString()));
      std::vector<float> x = RandomFloats(shape.NumElements(), c.lo, c.hi, next++);
      const float kCorners[] = {0.5f, -2.5f, 1.5f, 3.0f, -3.0f, 0.0f, -0.0f, 2.5f};
      for (size_t i = 0; corners && i < x.size() && i < 8; ++i) x[i] = kCorners[i];
      const TestTensor in = TestTensor::Of<float>(shape, x);
      KernelTester t(c.op, c.opset);
      t.Input(in);
      if (c.attrs) c.attrs(t);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&in});
      ASSERT_TRUE(out.ok()) << out.status();
      compare.ExpectNear(*out, c.tolerance);
    }
  }
  compare.Record();
}

TEST(CudaUnaryTest, MathOpsMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const auto approximate = [](const char* mode) {
    return [mode](KernelTester& t) { t.Attr("approximate", std::string(mode)); };
  };
  ExpectUnaryCasesMatchCpu({{"Neg", 13, nullptr, -8, 8, 0},
                            {"Abs", 13, nullptr, -8, 8, 0},
                            {"Sqrt", 13, nullptr, 0, 100, 0},
                            {"Reciprocal", 13, nullptr, 0.5f, 8, 0},
                            {"Exp", 13, nullptr, -5, 5, 3e-4f},
                            {"Log", 13, nullptr, 0.01f, 100, 2e-6f},
                            {"Erf", 13, nullptr, -4, 4, 2e-6f},
                            {"Gelu", 20, approximate("none"), -6, 6, 1e-5f},
                            {"Gelu", 20, approximate("tanh"), -6, 6, 1e-5f}},
                           /*corners=*/false);
}

// Floor, Ceil and Round are exact; ties (x.5) and the HardSwish / HardSigmoid corners are set.
TEST(CudaUnaryTest, ActivationsMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  ExpectUnaryCasesMatchCpu(
      {
          {"Sin", 7, nullptr, -10, 10, 2e-6f},
          {"Cos", 7, nullptr, -10, 10, 2e-6f},
          {"Floor", 13, nullptr, -100, 100, 0},
          {"Ceil", 13, nullptr, -100, 100, 0},
          {"Round", 11, nullptr, -100, 100, 0},
          {"LeakyRelu", 16, nullptr, -8, 8, 0},
          {"LeakyRelu", 6, [](KernelTester& t) { t.Attr("alpha", 0.3f); }, -8, 8, 0},
          {"Elu", 6, nullptr, -8, 8, 2e-6f},
          {"Elu", 6, [](KernelTester& t) { t.Attr("alpha", 0.7f); }, -8, 8, 2e-6f},
          {"Selu", 6, nullptr, -8, 8, 4e-6f},
          {"Selu", 6, [](KernelTester& t) { t.Attr("alpha", 2.0f).Attr("gamma", 0.5f); }, -8, 8,
           4e-6f},
          {"HardSigmoid", 6, nullptr, -8, 8, 1e-6f},
          {"HardSigmoid", 6, [](KernelTester& t) { t.Attr("alpha", 0.3f).Attr("beta", 0.4f); }, -8,
           8, 1e-6f},
          {"HardSwish", 14, nullptr, -8, 8, 2e-6f},
          {"Softplus", 1, nullptr, -30, 30, 4e-6f},
      },
      /*corners=*/true);
}

// com.microsoft's activations, the bias broadcast along X's last dim.
TEST(CudaUnaryTest, ContribActivationsMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  struct Case {
    const char* op;
    bool bias;
    float alpha;  // QuickGelu; 0: the default
  };
  for (const Case& c : std::vector<Case>{{"Gelu", false, 0},
                                         {"FastGelu", false, 0},
                                         {"FastGelu", true, 0},
                                         {"BiasGelu", true, 0},
                                         {"QuickGelu", false, 0},
                                         {"QuickGelu", false, 1.0f}}) {
    for (const Shape& shape : {Shape{2, 3, 8}, Shape{4, 4099}, Shape{64, 768}, Shape{0, 8}}) {
      SCOPED_TRACE(absl::StrCat(c.op, c.bias ? " bias " : " ", c.alpha, " ", shape.ToString()));
      const TestTensor x =
          TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), -6, 6, next++));
      const int64_t d = shape[shape.rank() - 1];
      const TestTensor bias = TestTensor::Of<float>({d}, RandomFloats(d, -1, 1, next++));
      KernelTester t(c.op, 1, "com.microsoft");
      t.Input(x);
      std::vector<const TestTensor*> inputs = {&x};
      if (c.bias) {
        t.Input(bias);
        inputs.push_back(&bias);
      }
      if (c.alpha != 0) t.Attr("alpha", c.alpha);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
      ASSERT_TRUE(out.ok()) << out.status();
      compare.ExpectNear(*out, 1e-5f);
    }
  }
  compare.Record();
}

// Clip: opset 6 attributes; opset 11+ optional bounds as host inputs (both, one, none), in
// float32, int32 and int64 (exact).
template <typename T>
void ExpectClipMatchesCpu(uint32_t seed, testing::CpuComparison* compare) {
  const std::vector<float> xf = RandomFloats(3 * 1000, -100, 100, seed);
  std::vector<T> x(xf.begin(), xf.end());
  const Shape shape{3, 1000};
  const TestTensor in = TestTensor::Of<T>(shape, x);
  const TestTensor lo = TestTensor::Of<T>({}, {static_cast<T>(-20)});
  const TestTensor hi = TestTensor::Of<T>({1}, {static_cast<T>(35)});
  const TestTensor* absent = nullptr;
  for (const auto& bounds : std::vector<std::vector<const TestTensor*>>{
           {&lo, &hi}, {&lo}, {absent, &hi}, {}, {&hi, &lo}}) {
    SCOPED_TRACE(absl::StrCat("bounds ", bounds.size()));
    KernelTester t("Clip", 13);
    t.Input(in);
    std::vector<const TestTensor*> inputs = {&in};
    for (const TestTensor* b : bounds) {
      if (b == nullptr) {
        t.AbsentInput();
      } else {
        t.Input(*b);
      }
      inputs.push_back(b);
    }
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->cuda[0].bytes, out->cpu[0].bytes);
    if constexpr (std::is_same_v<T, float>) compare->ExpectNear(*out, 0);
  }
}

TEST(CudaUnaryTest, ClipMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  testing::CpuComparison compare;
  ExpectClipMatchesCpu<float>(seed, &compare);
  ExpectClipMatchesCpu<int32_t>(seed + 1, &compare);
  ExpectClipMatchesCpu<int64_t>(seed + 2, &compare);
  const TestTensor in = TestTensor::Of<float>({7, 9}, RandomFloats(63, -5, 5, seed + 3));
  KernelTester t("Clip", 6);
  t.Attr("min", -1.5f).Attr("max", 2.0f).Input(in);
  absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&in});
  ASSERT_TRUE(out.ok()) << out.status();
  compare.ExpectNear(*out, 0);
  compare.Record();
}

}  // namespace
}  // namespace inferd::kernels::cuda

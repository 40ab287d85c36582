// Add, Sub, Mul, Div, Pow on CUDA against the CPU kernels, on fresh random inputs of every
// broadcast layout the kernel distinguishes. Skips without a GPU.
#include <climits>
#include <cstdint>
#include <random>
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

const std::vector<std::pair<Shape, Shape>>& Layouts() {
  static const auto* layouts = new std::vector<std::pair<Shape, Shape>>{
      {{2, 3, 4}, {2, 3, 4}},  // same shape
      {{1000003}, {1000003}},  // large: several blocks per grid-stride step
      {{2, 3, 4}, {4}},        // trailing vector
      {{2, 3, 4}, {}},         // scalar b
      {{}, {5, 7}},            // scalar a
      {{2, 1, 4}, {3, 1}},     // both broadcast
      {{4, 1, 3, 1, 2}, {1, 5, 1, 7, 1}},
      {{1}, {3, 1, 1}},
      {{0, 3}, {3}},  // empty output
  };
  return *layouts;
}

TEST(CudaBinaryTest, FloatMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const auto& [sa, sb] : Layouts()) {
      SCOPED_TRACE(absl::StrCat(op, " ", sa.ToString(), " ", sb.ToString()));
      const TestTensor a = TestTensor::Of<float>(sa, RandomFloats(sa.NumElements(), -4, 4, next++));
      // Divisors away from zero: |b| in [0.25, 4).
      std::vector<float> bv = RandomFloats(sb.NumElements(), 0.25f, 4, next++);
      for (size_t i = 0; i < bv.size(); i += 2) bv[i] = -bv[i];
      const TestTensor b = TestTensor::Of<float>(sb, bv);
      KernelTester t(op, 14);
      t.Input(a).Input(b);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&a, &b});
      ASSERT_TRUE(out.ok()) << out.status();
      // IEEE +, -, *, / are correctly rounded on both sides.
      compare.ExpectNear(*out, 0.0f);
    }
  }
  compare.Record();
}

template <typename T>
void ExpectIntegersMatchCpu() {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(-1000, 1000);
  // Pow: wrap-around, negative exponents (0 unless the base is 1 or -1), exponent MAX.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    for (const auto& [sa, sb] : Layouts()) {
      SCOPED_TRACE(absl::StrCat(op, " ", sa.ToString(), " ", sb.ToString()));
      std::vector<T> av(sa.NumElements()), bv(sb.NumElements());
      for (T& x : av) x = static_cast<T>(dist(rng));
      for (T& x : bv) x = static_cast<T>(dist(rng));
      // The edges: wrap-around, division by zero and by -1 of the smallest value.
      if (!av.empty()) av[0] = std::numeric_limits<T>::min();
      if (av.size() > 1) av[1] = std::numeric_limits<T>::max();
      if (!bv.empty()) bv[0] = -1;
      if (bv.size() > 1) bv[1] = 0;
      if (bv.size() > 2) bv[2] = std::numeric_limits<T>::max();
      const TestTensor a = TestTensor::Of<T>(sa, av);
      const TestTensor b = TestTensor::Of<T>(sb, bv);
      KernelTester t(op, 14);
      t.Input(a).Input(b);
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&a, &b});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->cuda[0].shape, out->cpu[0].shape);
      EXPECT_EQ(out->cuda[0].template values<T>(), out->cpu[0].template values<T>());
    }
  }
}

TEST(CudaBinaryTest, Int32MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  ExpectIntegersMatchCpu<int32_t>();
}

TEST(CudaBinaryTest, Int64MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  ExpectIntegersMatchCpu<int64_t>();
}

// powf against the C library's powf (or the CPU kernel's products for a scalar exponent of 1, 2,
// 3): bases in [0.5, 3), exponents in [-2, 2), so results stay below 9; and negative bases with
// integer exponents.
TEST(CudaBinaryTest, PowMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  for (const auto& [sa, sb] : Layouts()) {
    SCOPED_TRACE(absl::StrCat(sa.ToString(), " ", sb.ToString()));
    const TestTensor a = TestTensor::Of<float>(sa, RandomFloats(sa.NumElements(), 0.5f, 3, next++));
    const TestTensor b = TestTensor::Of<float>(sb, RandomFloats(sb.NumElements(), -2, 2, next++));
    KernelTester t("Pow", 15);
    t.Input(a).Input(b);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&a, &b});
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, 1e-5f);
  }
  for (float e : {1.0f, 2.0f, 3.0f, -1.0f, 0.0f}) {
    SCOPED_TRACE(absl::StrCat("exponent ", e));
    std::vector<float> av = RandomFloats(21, 0.5f, 2, next++);  // |x| in [0.5, 2), both signs
    for (size_t i = 0; i < av.size(); i += 2) av[i] = -av[i];
    const TestTensor a = TestTensor::Of<float>({3, 7}, av);
    const TestTensor b = TestTensor::Of<float>({}, {e});
    KernelTester t("Pow", 7);
    t.Input(a).Input(b);
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&a, &b});
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, 1e-5f);
  }
  compare.Record();
}

TEST(CudaBinaryTest, ShapesThatDoNotBroadcastAreRefused) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const TestTensor a = TestTensor::Of<float>({2, 3}, RandomFloats(6, -1, 1, 1));
  const TestTensor b = TestTensor::Of<float>({4}, RandomFloats(4, -1, 1, 2));
  KernelTester t("Add", 14);
  t.Input(a).Input(b).DeviceType(engine::DeviceKind::kCuda);
  auto kernel = t.Create(testing::CudaRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = testing::RunCudaKernel(**kernel, {&a, &b}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cuda

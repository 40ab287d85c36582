// Relu, Sigmoid, Tanh on CUDA against the CPU kernels on fresh random inputs, including values
// far out where sigmoid and tanh saturate, and the math ops (Neg, Abs, Sqrt, Reciprocal, Exp, Log,
// Erf, Gelu) on inputs in their domains. Skips without a GPU.
#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
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

TEST(CudaUnaryTest, MathOpsMatchCpu) {
  if (absl::Status s = CheckCudaDevice(0); !s.ok()) GTEST_SKIP() << s.message();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  struct Case {
    const char* op;
    int opset;
    const char* approximate;  // Gelu only
    float lo, hi, tolerance;  // inputs in the op's domain; absolute tolerance
  };
  for (const Case& c : std::vector<Case>{{"Neg", 13, nullptr, -8, 8, 0},
                                         {"Abs", 13, nullptr, -8, 8, 0},
                                         {"Sqrt", 13, nullptr, 0, 100, 0},
                                         {"Reciprocal", 13, nullptr, 0.5f, 8, 0},
                                         {"Exp", 13, nullptr, -5, 5, 3e-4f},
                                         {"Log", 13, nullptr, 0.01f, 100, 2e-6f},
                                         {"Erf", 13, nullptr, -4, 4, 2e-6f},
                                         {"Gelu", 20, "none", -6, 6, 1e-5f},
                                         {"Gelu", 20, "tanh", -6, 6, 1e-5f}}) {
    for (const Shape& shape : {Shape{}, Shape{3, 5, 17}, Shape{1 << 20}, Shape{0, 4}}) {
      SCOPED_TRACE(
          absl::StrCat(c.op, " ", c.approximate ? c.approximate : "", " ", shape.ToString()));
      const TestTensor in =
          TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), c.lo, c.hi, next++));
      KernelTester t(c.op, c.opset);
      t.Input(in);
      if (c.approximate != nullptr) t.Attr("approximate", std::string(c.approximate));
      absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&in});
      ASSERT_TRUE(out.ok()) << out.status();
      compare.ExpectNear(*out, c.tolerance);
    }
  }
  compare.Record();
}

}  // namespace
}  // namespace inferd::kernels::cuda

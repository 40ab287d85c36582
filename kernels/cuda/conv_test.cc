// Conv and ConvTranspose on CUDA (cuDNN) against the CPU kernels (oneDNN) on fresh random
// inputs: strides, dilations, explicit symmetric and asymmetric pads, every auto_pad mode,
// groups and depthwise, 1-D and 3-D, a bias or none, ConvTranspose's output_padding and
// output_shape; plans reused across input shapes; the load-time workspace estimate equal to
// what the kernel declares. Skips without a GPU.
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;
using V = std::vector<int64_t>;

struct Case {
  std::string label;
  Shape x, w;
  bool bias;
  std::function<void(KernelTester&)> attrs;
};

// Float32 sums of k products of values in [-1, 1) in two summation orders (cuDNN's algorithms
// include Winograd and FFT, whose rounding differs more than a GEMM's).
float Tolerance(int64_t k) { return 4e-6f * static_cast<float>(k) + 2e-5f; }

// Products per output: Conv's input channels per group times the window.
int64_t Terms(const Shape& w, bool transposed, int64_t group) {
  return (transposed ? w[0] / group : w[1]) * w.SizeFrom(2);
}

void ExpectMatchesCpu(const char* op, const std::vector<Case>& cases) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  testing::CpuComparison compare;
  const bool transposed = std::string(op) == "ConvTranspose";
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(op, " ", c.label, ": x ", c.x.ToString(), " w ", c.w.ToString()));
    const TestTensor x = TestTensor::Of<float>(c.x, RandomFloats(c.x.NumElements(), -1, 1, next++));
    const TestTensor w = TestTensor::Of<float>(c.w, RandomFloats(c.w.NumElements(), -1, 1, next++));
    const int64_t filters = transposed ? c.w[1] : c.w[0];
    KernelTester t(op, 11);
    c.attrs(t);
    t.Input(x).Input(w, true, /*constant=*/true);
    std::vector<const TestTensor*> inputs = {&x, &w};
    TestTensor b;
    int64_t group = 1;
    if (const onnx::AttributeProto* g = t.Info().FindAttribute("group")) group = g->i();
    if (c.bias) {
      const int64_t m = transposed ? filters * group : filters;
      b = TestTensor::Of<float>({m}, RandomFloats(m, -1, 1, next++));
      t.Input(b, true, true);
      inputs.push_back(&b);
    }
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    compare.ExpectNear(*out, Tolerance(Terms(c.w, transposed, group)));
  }
  compare.Record();
}

TEST(CudaConvTest, MatchesCpu) {
  const std::vector<Case> cases = {
      {"pads 1, bias",
       {2, 3, 10, 10},
       {8, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("pads", V{1, 1, 1, 1});
       }},
      {"strides and dilations 2",
       {1, 4, 13, 11},
       {6, 4, 3, 3},
       false,
       [](KernelTester& t) {
         t.Attr("strides", V{2, 2}).Attr("dilations", V{2, 2});
       }},
      {"SAME_UPPER, stride 2, even input",
       {1, 3, 8, 8},
       {5, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("auto_pad", std::string("SAME_UPPER")).Attr("strides", V{2, 2});
       }},
      {"SAME_LOWER, stride 2, kernel 4",
       {1, 3, 9, 7},
       {5, 3, 4, 4},
       false,
       [](KernelTester& t) {
         t.Attr("auto_pad", std::string("SAME_LOWER")).Attr("strides", V{2, 2});
       }},
      {"VALID",
       {1, 2, 7, 7},
       {3, 2, 2, 2},
       true,
       [](KernelTester& t) { t.Attr("auto_pad", std::string("VALID")); }},
      {"asymmetric pads",
       {2, 3, 5, 6},
       {4, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("pads", V{2, 0, 1, 3});
       }},
      {"group 4",
       {2, 8, 9, 9},
       {12, 2, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("group", int64_t{4}).Attr("pads", V{1, 1, 1, 1});
       }},
      {"depthwise, stride 2",
       {1, 16, 12, 12},
       {16, 1, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("group", int64_t{16}).Attr("pads", V{1, 1, 1, 1}).Attr("strides", V{2, 2});
       }},
      {"1-D",
       {2, 4, 20},
       {6, 4, 5},
       true,
       [](KernelTester& t) {
         t.Attr("pads", V{2, 1}).Attr("strides", V{2});
       }},
      {"3-D",
       {1, 3, 6, 7, 8},
       {4, 3, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("pads", V{1, 1, 1, 1, 1, 1}).Attr("strides", V{1, 2, 1});
       }},
      {"1x1", {4, 64, 14, 14}, {32, 64, 1, 1}, true, [](KernelTester&) {}},
      {"3x3, 32 -> 64 channels",
       {1, 32, 28, 28},
       {64, 32, 3, 3},
       false,
       [](KernelTester& t) {
         t.Attr("pads", V{1, 1, 1, 1});
       }},
      {"no input channels: the bias", {1, 0, 5, 5}, {4, 0, 3, 3}, true, [](KernelTester&) {}},
  };
  ExpectMatchesCpu("Conv", cases);
}

TEST(CudaConvTransposeTest, MatchesCpu) {
  const std::vector<Case> cases = {
      {"stride 2, bias",
       {1, 3, 5, 5},
       {3, 4, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{2, 2});
       }},
      {"pads 1, output_padding 1",
       {2, 3, 5, 5},
       {3, 4, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{2, 2}).Attr("pads", V{1, 1, 1, 1}).Attr("output_padding", V{1, 1});
       }},
      {"output_shape past the natural size",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{3, 2}).Attr("output_shape", V{10, 8});
       }},
      {"asymmetric pads",
       {1, 2, 4, 5},
       {2, 3, 3, 3},
       false,
       [](KernelTester& t) {
         t.Attr("pads", V{2, 0, 0, 1});
       }},
      {"SAME_UPPER, stride 2",
       {1, 2, 5, 4},
       {2, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("auto_pad", std::string("SAME_UPPER")).Attr("strides", V{2, 2});
       }},
      {"SAME_LOWER, stride 2",
       {1, 2, 5, 4},
       {2, 3, 4, 4},
       false,
       [](KernelTester& t) {
         t.Attr("auto_pad", std::string("SAME_LOWER")).Attr("strides", V{2, 2});
       }},
      {"group 2",
       {1, 4, 5, 5},
       {4, 3, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("group", int64_t{2}).Attr("strides", V{2, 2});
       }},
      {"dilations 2",
       {1, 2, 4, 4},
       {2, 3, 3, 3},
       false,
       [](KernelTester& t) {
         t.Attr("dilations", V{2, 2});
       }},
      {"1-D",
       {2, 3, 7},
       {3, 2, 4},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{3}).Attr("pads", V{1, 2});
       }},
      {"3-D",
       {1, 2, 3, 4, 5},
       {2, 3, 2, 3, 3},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{2, 1, 2});
       }},
      {"64 -> 32 channels, stride 2",
       {2, 64, 8, 8},
       {64, 32, 4, 4},
       true,
       [](KernelTester& t) {
         t.Attr("strides", V{2, 2}).Attr("pads", V{1, 1, 1, 1});
       }},
  };
  ExpectMatchesCpu("ConvTranspose", cases);
}

// One kernel, input shapes unknown at load: a plan per shape, each matching the CPU.
TEST(CudaConvTest, PlansPerInputShape) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const TestTensor w = TestTensor::Of<float>({6, 3, 3, 3}, RandomFloats(162, -1, 1, seed));
  const TestTensor b = TestTensor::Of<float>({6}, RandomFloats(6, -1, 1, seed + 1));
  const TestTensor x0 = TestTensor::Of<float>({1, 3, 9, 9}, RandomFloats(243, -1, 1, seed + 2));
  KernelTester t("Conv", 11);
  t.Attr("pads", V{1, 0, 0, 1}).Input(x0, /*shape_known_at_load=*/false).Input(w).Input(b);
  auto cpu = t.DeviceType(engine::DeviceKind::kCpu).Create(cpu::testing::CpuRegistry());
  auto gpu = t.DeviceType(engine::DeviceKind::kCuda).Create(testing::CudaRegistry());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  testing::CpuComparison compare;
  uint32_t next = seed + 3;
  for (const Shape& s : {Shape{1, 3, 9, 9}, Shape{4, 3, 16, 12}, Shape{1, 3, 9, 9}}) {
    SCOPED_TRACE(s.ToString());
    const TestTensor x = TestTensor::Of<float>(s, RandomFloats(s.NumElements(), -1, 1, next++));
    testing::CpuAndCuda out;
    auto want = engine::testing::RunKernel(**cpu, {&x, &w, &b}, 1, 1);
    auto got = testing::RunCudaKernel(**gpu, {&x, &w, &b}, 1);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    out.cpu = *std::move(want);
    out.cuda = *std::move(got);
    compare.ExpectNear(out, Tolerance(27));
  }
  compare.Record();
}

// The partitioner's estimate (no kernel instance) is the workspace the kernel declares.
TEST(CudaConvTest, EstimateIsTheDeclaredWorkspace) {
  SKIP_WITHOUT_CUDA_DEVICE();
  struct Estimated {
    const char* op;
    Shape x, w;
    std::function<void(KernelTester&)> attrs;
  };
  const std::vector<Estimated> cases = {
      {"Conv",
       {8, 64, 56, 56},
       {64, 64, 3, 3},
       [](KernelTester& t) {
         t.Attr("pads", V{1, 1, 1, 1});
       }},
      {"Conv",
       {1, 3, 224, 224},
       {64, 3, 7, 7},
       [](KernelTester& t) {
         t.Attr("pads", V{3, 3, 3, 3}).Attr("strides", V{2, 2});
       }},
      {"Conv",
       {1, 32, 15, 15},
       {32, 1, 3, 3},  // depthwise, SAME_UPPER: staged input
       [](KernelTester& t) {
         t.Attr("group", int64_t{32})
             .Attr("auto_pad", std::string("SAME_UPPER"))
             .Attr("strides", V{2, 2});
       }},
      {"ConvTranspose",
       {2, 64, 16, 16},
       {64, 32, 4, 4},
       [](KernelTester& t) {
         t.Attr("strides", V{2, 2}).Attr("pads", V{1, 1, 1, 1});
       }},
      {"ConvTranspose",
       {1, 4, 6, 6},
       {4, 4, 3, 3},  // staged output
       [](KernelTester& t) {
         t.Attr("pads", V{2, 0, 0, 1});
       }},
  };
  for (const Estimated& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.op, " x ", c.x.ToString(), " w ", c.w.ToString()));
    const TestTensor x = TestTensor::Of<float>(c.x, std::vector<float>(c.x.NumElements()));
    const TestTensor w = TestTensor::Of<float>(c.w, std::vector<float>(c.w.NumElements()));
    KernelTester t(c.op, 11);
    c.attrs(t);
    t.Input(x).Input(w, true, true).DeviceType(engine::DeviceKind::kCuda);
    absl::StatusOr<size_t> estimate = t.Estimate(testing::CudaRegistry());
    ASSERT_TRUE(estimate.ok()) << estimate.status();
    auto kernel = t.Create(testing::CudaRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    size_t declared = 0;
    for (const engine::WorkspaceRequirement& r :
         (*kernel)->DeclareWorkspaceRequirements({c.x, c.w})) {
      declared += r.bytes;
    }
    EXPECT_EQ(*estimate, declared);
    ::testing::Test::RecordProperty(absl::StrCat("workspace_", c.op, "_", c.x.ToString()),
                                    static_cast<int>(declared));
  }
}

}  // namespace
}  // namespace inferd::kernels::cuda

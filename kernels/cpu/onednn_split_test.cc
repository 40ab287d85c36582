// The oneDNN-backed kernels split large problems into parts that the intra-op threads run at
// once (batch, rows or columns of a matmul; images, output-channel blocks or groups of a
// convolution; planes of a pooling). Each split gives what one thread computes, for weights
// constant at load (prepacked per part or shared) and given at run time, for shapes known at
// load and not, and the workspace declared with 4 threads is the one estimated.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

struct Attr {
  std::string name;
  std::vector<int64_t> ints;
  float f = 0;
  bool is_float = false;
};

struct Case {
  std::string name, op;
  int opset = 13;
  std::vector<Attr> attrs;
  std::vector<Shape> inputs;
  bool constant = false;  // inputs after the first are constants
  std::string domain;
};

// Runs `c` with `threads` through KernelTester (shapes known at load) and through a kernel made
// with the first input's shape unknown; returns the first, checks the second matches it.
std::vector<float> Run(const Case& c, int threads) {
  KernelTester t(c.op, c.opset, c.domain);
  KernelTester spec(c.op, c.opset, c.domain);
  for (const Attr& a : c.attrs) {
    if (a.is_float) {
      t.Attr(a.name, a.f), spec.Attr(a.name, a.f);
    } else if (a.ints.size() == 1 && a.name != "kernel_shape" && a.name != "strides" &&
               a.name != "pads") {
      t.Attr(a.name, a.ints[0]), spec.Attr(a.name, a.ints[0]);
    } else {
      t.Attr(a.name, a.ints), spec.Attr(a.name, a.ints);
    }
  }
  std::vector<TestTensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::vector<float> v = RandomFloats(c.inputs[i].NumElements(), 80 + i);
    const bool constant = c.constant && i > 0;
    t.Input<float>(c.inputs[i], v, constant);
    inputs.push_back(TestTensor::Of<float>(c.inputs[i], v));
    spec.Input(inputs.back(), /*shape_known=*/i > 0, constant);
  }
  t.Threads(threads);
  spec.Threads(threads);
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  std::vector<float> result = Values<float>((*out)[0]);

  KernelTester known(c.op, c.opset, c.domain);  // for the workspace estimate: every shape known
  for (const Attr& a : c.attrs) {
    if (a.is_float) {
      known.Attr(a.name, a.f);
    } else if (a.ints.size() == 1 && a.name != "kernel_shape" && a.name != "strides" &&
               a.name != "pads") {
      known.Attr(a.name, a.ints[0]);
    } else {
      known.Attr(a.name, a.ints);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) known.Input(inputs[i], true, c.constant && i > 0);
  known.Threads(threads);
  absl::StatusOr<size_t> estimate = known.Estimate(CpuRegistry());
  EXPECT_TRUE(estimate.ok()) << estimate.status();
  if (estimate.ok()) {
    EXPECT_EQ(*estimate, t.workspace_bytes_declared());
  }

  auto kernel = spec.Create(CpuRegistry());
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (!kernel.ok()) return result;
  std::vector<const TestTensor*> ptrs;
  for (const TestTensor& in : inputs) ptrs.push_back(&in);
  auto dynamic = engine::testing::RunKernel(**kernel, ptrs, 1, threads);
  EXPECT_TRUE(dynamic.ok()) << dynamic.status();
  if (dynamic.ok()) ExpectNear((*dynamic)[0].values<float>(), result, 1e-4f);
  return result;
}

void Check(const Case& c) {
  SCOPED_TRACE(c.name);
  const std::vector<float> one = Run(c, 1);
  for (int threads : {2, 3, 4}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    ExpectNear(Run(c, threads), one, 2e-4f);
  }
}

Attr Ints(std::string name, std::vector<int64_t> v) { return {std::move(name), std::move(v)}; }
Attr Float(std::string name, float f) { return {std::move(name), {}, f, true}; }

TEST(OneDnnSplitTest, MatMulBatchRowsAndColumns) {
  Check({"batch", "MatMul", 13, {}, {Shape{8, 128, 128}, Shape{8, 128, 128}}});
  Check({"batch, B broadcast", "MatMul", 13, {}, {Shape{8, 96, 128}, Shape{128, 64}}, true});
  Check({"rows, prepacked B shared", "MatMul", 13, {}, {Shape{250, 256}, Shape{256, 200}}, true});
  Check({"rows, runtime B", "MatMul", 13, {}, {Shape{1, 4, 130, 64}, Shape{1, 4, 64, 130}}});
  Check(
      {"columns, B prepacked per part", "MatMul", 13, {}, {Shape{8, 512}, Shape{512, 1000}}, true});
  Check({"columns, runtime B", "MatMul", 13, {}, {Shape{4, 512}, Shape{512, 2000}}});
  Check({"FusedMatMul rows",
         "FusedMatMul",
         1,
         {},
         {Shape{200, 256}, Shape{256, 192}, Shape{192}},
         true,
         "com.inferd"});
}

TEST(OneDnnSplitTest, GemmTransposesAndC) {
  Check({"transA transB, matrix C, alpha beta",
         "Gemm",
         13,
         {Ints("transA", {1}), Ints("transB", {1}), Float("alpha", 0.5f), Float("beta", 2.0f)},
         {Shape{256, 200}, Shape{300, 256}, Shape{200, 300}}});
  Check({"bias row, columns",
         "Gemm",
         13,
         {Ints("transB", {1})},
         {Shape{8, 512}, Shape{1024, 512}, Shape{1024}},
         true});
}

TEST(OneDnnSplitTest, ConvImagesChannelBlocksAndGroups) {
  Check({"images",
         "Conv",
         11,
         {Ints("pads", {1, 1, 1, 1})},
         {Shape{4, 16, 28, 28}, Shape{32, 16, 3, 3}, Shape{32}},
         true});
  Check({"channel blocks, prepacked per part",
         "Conv",
         11,
         {Ints("pads", {1, 1, 1, 1})},
         {Shape{1, 64, 28, 28}, Shape{120, 64, 3, 3}, Shape{120}},
         true});
  Check({"channel blocks, runtime weights",
         "Conv",
         11,
         {Ints("strides", {2, 2})},
         {Shape{1, 32, 30, 30}, Shape{96, 32, 3, 3}}});
  Check({"channel blocks, 1x1 plain",
         "Conv",
         11,
         {},
         {Shape{1, 64, 56, 56}, Shape{128, 64, 1, 1}, Shape{128}},
         true});
  Check({"channel blocks, two images, 1x1 plain",
         "Conv",
         11,
         {},
         {Shape{2, 64, 40, 40}, Shape{128, 64, 1, 1}},
         true});
  Check({"depthwise, blocks of groups",
         "Conv",
         11,
         {Ints("pads", {1, 1, 1, 1}), Ints("group", {128})},
         {Shape{1, 128, 56, 56}, Shape{128, 1, 3, 3}, Shape{128}},
         true});
  Check({"two groups",
         "Conv",
         11,
         {Ints("pads", {1, 1, 1, 1}), Ints("group", {2})},
         {Shape{1, 32, 40, 40}, Shape{64, 16, 3, 3}}});
  Check({"3-D images",
         "Conv",
         11,
         {Ints("pads", {1, 1, 1, 1, 1, 1})},
         {Shape{3, 8, 12, 12, 12}, Shape{16, 8, 3, 3, 3}},
         true});
}

TEST(OneDnnSplitTest, ConvTransposeImagesChannelBlocksAndGroups) {
  Check({"images",
         "ConvTranspose",
         11,
         {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})},
         {Shape{4, 32, 14, 14}, Shape{32, 16, 4, 4}, Shape{16}},
         true});
  Check({"channel blocks",
         "ConvTranspose",
         11,
         {Ints("strides", {2, 2})},
         {Shape{1, 64, 14, 14}, Shape{64, 64, 4, 4}, Shape{64}},
         true});
  Check({"channel blocks, runtime weights",
         "ConvTranspose",
         11,
         {Ints("strides", {2, 2})},
         {Shape{1, 64, 14, 14}, Shape{64, 48, 3, 3}}});
  Check({"groups",
         "ConvTranspose",
         11,
         {Ints("strides", {2, 2}), Ints("group", {4})},
         {Shape{1, 64, 20, 20}, Shape{64, 8, 3, 3}},
         true});
}

TEST(OneDnnSplitTest, PoolingPlanes) {
  Check({"MaxPool",
         "MaxPool",
         12,
         {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2})},
         {Shape{2, 63, 56, 56}}});
  Check({"AveragePool ceil include pad",
         "AveragePool",
         11,
         {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}),
          Ints("ceil_mode", {1}), Ints("count_include_pad", {1})},
         {Shape{2, 61, 56, 56}}});
  Check({"GlobalAveragePool", "GlobalAveragePool", 1, {}, {Shape{4, 2048, 7, 7}}});
}

}  // namespace
}  // namespace inferd::kernels::cpu

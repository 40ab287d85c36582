// The CUDA kernels' registration, beside the CPU kernels. Runs without a GPU.
#include "kernels/cuda/cuda_kernels.h"

#include <limits>
#include <string>
#include <vector>

#include "base/cuda_status.h"
#include "engine/data_type.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cuda/cublas_handle.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::DeviceKind;
using engine::KernelRegistry;
using engine::testing::KernelTester;
using engine::testing::TestTensor;

TEST(CudaKernelsTest, RegisterBesideTheCpuKernels) {
  KernelRegistry registry;
  ASSERT_TRUE(cpu::RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const std::vector<DataType> f2 = {DataType::kFloat32, DataType::kFloat32};
  const std::vector<DataType> f1 = {DataType::kFloat32};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "MatMul", "Gemm"}) {
    const engine::KernelDef* def = registry.Find("", op, 14, "cuda", f2, f1);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_EQ(def->device_type, DeviceKind::kCuda) << op;
    EXPECT_NE(registry.Find("", op, 14, "cpu", f2, f1), nullptr) << op;
  }
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "MaxPool", "AveragePool", "GlobalMaxPool",
                         "GlobalAveragePool"}) {
    EXPECT_NE(registry.Find("", op, 14, "cuda", f1, f1), nullptr) << op;
  }
  for (const char* op : {"Conv", "ConvTranspose"}) {
    for (int opset : {1, 11, 22}) {
      EXPECT_NE(registry.Find("", op, opset, "cuda", f2, f1), nullptr) << op << " " << opset;
    }
  }
  const std::vector<DataType> f5(5, DataType::kFloat32);
  for (int opset : {7, 9, 14, 15, 22}) {
    EXPECT_NE(registry.Find("", "BatchNormalization", opset, "cuda", f5, f1), nullptr) << opset;
  }
  const std::vector<DataType> i64 = {DataType::kInt64, DataType::kInt64};
  EXPECT_NE(registry.Find("", "Add", 14, "cuda", i64, {DataType::kInt64}), nullptr);
  // What has no CUDA kernel is not found on cuda: float16, opsets past the bound, other ops.
  const std::vector<DataType> h2 = {DataType::kFloat16, DataType::kFloat16};
  EXPECT_EQ(registry.Find("", "Add", 14, "cuda", h2, {DataType::kFloat16}), nullptr);
  EXPECT_EQ(registry.Find("", "Add", 99, "cuda", f2, f1), nullptr);
  EXPECT_EQ(registry.Find("", "Hardmax", 13, "cuda", f1, f1), nullptr);
  EXPECT_EQ(registry.Find("", "Conv", 23, "cuda", f2, f1), nullptr);
  EXPECT_EQ(registry.Find("", "Conv", 11, "cuda", h2, {DataType::kFloat16}), nullptr);
  const std::vector<DataType> u8 = {DataType::kUint8};
  EXPECT_EQ(registry.Find("", "MaxPool", 12, "cuda", u8, u8), nullptr);
  // A second registration overlaps the first.
  EXPECT_FALSE(RegisterCudaKernels(registry).ok());
  EXPECT_NE(engine::FormatKernelTable(registry).find("cuda"), std::string::npos);
}

// Every CUDA kernel estimates its arena workspace (none), so the partitioner needs no heuristic.
// TF32 for the matrix products is opt-in (INFERD_CUDA_TF32), full float32 otherwise.
TEST(CudaKernelsTest, Tf32IsOptIn) {
  EXPECT_FALSE(ParseTf32(nullptr));
  EXPECT_FALSE(ParseTf32(""));
  EXPECT_FALSE(ParseTf32("0"));
  EXPECT_FALSE(ParseTf32("false"));
  EXPECT_TRUE(ParseTf32("1"));
  EXPECT_TRUE(ParseTf32("TRUE"));
  EXPECT_TRUE(ParseTf32("on"));
}

TEST(CudaKernelsTest, EveryKernelEstimatesItsWorkspace) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  for (const engine::KernelDef* def : registry.Defs()) {
    ASSERT_TRUE(def->estimate_workspace) << def->op_type;
  }
}

// Run in a host context (no CUDA stream), a CUDA kernel refuses instead of touching host memory
// as if it were the device's.
TEST(CudaKernelsTest, RefusesToRunWithoutACudaStream) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor a = TestTensor::Of<float>({2}, {1, 2});
  KernelTester t("Add", 14);
  t.Input(a).Input(a).DeviceType(DeviceKind::kCuda);
  auto kernel = t.Create(registry);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  absl::StatusOr<std::vector<TestTensor>> out =
      engine::testing::RunKernel(**kernel, {&a, &a}, 1, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
}

// The softmax, norm, reduction, movement and view kernels: each beside its CPU sibling, for the
// opsets and types the CPU registry has them.
TEST(CudaKernelsTest, TransformerAndCnnOpsRegisterBesideTheCpuKernels) {
  KernelRegistry registry;
  ASSERT_TRUE(cpu::RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const DataType f = DataType::kFloat32, i64 = DataType::kInt64, i32 = DataType::kInt32;
  struct Case {
    const char* domain;
    const char* op;
    int opset;
    std::vector<DataType> inputs, outputs;
  };
  const std::vector<Case> cases = {
      {"", "Softmax", 11, {f}, {f}},
      {"", "Softmax", 13, {f}, {f}},
      {"", "LogSoftmax", 11, {f}, {f}},
      {"", "LogSoftmax", 13, {f}, {f}},
      {"", "LayerNormalization", 17, {f, f, f}, {f}},
      {"", "SimplifiedLayerNormalization", 1, {f, f}, {f}},
      {"com.microsoft", "SkipLayerNormalization", 1, {f, f, f}, {f}},
      {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, {f, f, f}, {f}},
      {"", "ReduceSum", 11, {f}, {f}},
      {"", "ReduceSum", 13, {i64, i64}, {i64}},
      {"", "ReduceMean", 13, {f}, {f}},
      {"", "ReduceMean", 18, {f, i64}, {f}},
      {"", "ReduceMax", 18, {i32, i64}, {i32}},
      {"", "ReduceMin", 13, {f}, {f}},
      {"", "Transpose", 13, {DataType::kFloat16}, {DataType::kFloat16}},
      {"", "Concat", 13, {i64, i64}, {i64}},
      {"", "Split", 13, {f, i64}, {f, f}},
      {"", "Split", 18, {f}, {f, f}},
      {"", "Slice", 13, {f, i64, i64}, {f}},
      {"", "Expand", 13, {f, i64}, {f}},
      {"", "Gather", 13, {f, i64}, {f}},
      {"", "Cast", 13, {f}, {DataType::kFloat16}},
      {"", "Where", 16, {DataType::kBool, f, f}, {f}},
      {"", "Reshape", 14, {f, i64}, {f}},
      {"", "Flatten", 13, {f}, {f}},
      {"", "Squeeze", 13, {f, i64}, {f}},
      {"", "Unsqueeze", 11, {f}, {f}},
      {"", "Identity", 16, {i64}, {i64}},
      {"", "Erf", 13, {f}, {f}},
      {"", "Gelu", 20, {f}, {f}},
      {"", "Exp", 13, {f}, {f}},
      {"", "Reciprocal", 13, {f}, {f}},
      // Pad, the activations, Pow, Clip.
      {"", "Pad", 2, {f}, {f}},
      {"", "Pad", 13, {f, i64}, {f}},
      {"", "Pad", 18, {i64, i64, i64, i64}, {i64}},
      {"", "Pad", 21, {DataType::kFloat16, i64}, {DataType::kFloat16}},
      {"", "LeakyRelu", 16, {f}, {f}},
      {"", "Elu", 6, {f}, {f}},
      {"", "Selu", 6, {f}, {f}},
      {"", "HardSigmoid", 6, {f}, {f}},
      {"", "HardSwish", 14, {f}, {f}},
      {"", "Softplus", 1, {f}, {f}},
      {"", "Sin", 7, {f}, {f}},
      {"", "Cos", 7, {f}, {f}},
      {"", "Floor", 13, {f}, {f}},
      {"", "Ceil", 13, {f}, {f}},
      {"", "Round", 11, {f}, {f}},
      {"", "Pow", 7, {f, f}, {f}},
      {"", "Pow", 15, {i64, i64}, {i64}},
      {"", "Clip", 6, {f}, {f}},
      {"", "Clip", 13, {i32, i32, i32}, {i32}},
      {"com.microsoft", "Gelu", 1, {f}, {f}},
      {"com.microsoft", "FastGelu", 1, {f, f}, {f}},
      {"com.microsoft", "BiasGelu", 1, {f, f}, {f}},
      {"com.microsoft", "QuickGelu", 1, {f}, {f}},
      {"", "ArgMax", 11, {f}, {i64}},
      {"", "ArgMax", 13, {i32}, {i64}},
      {"", "ArgMin", 1, {i64}, {i64}},
      {"", "ArgMin", 22, {f}, {i64}},
  };
  for (const Case& c : cases) {
    const engine::KernelDef* def =
        registry.Find(c.domain, c.op, c.opset, "cuda", c.inputs, c.outputs);
    ASSERT_NE(def, nullptr) << c.op << " " << c.opset;
    EXPECT_EQ(def->device_type, DeviceKind::kCuda) << c.op;
    EXPECT_TRUE(def->estimate_workspace) << c.op;
    EXPECT_NE(registry.Find(c.domain, c.op, c.opset, "cpu", c.inputs, c.outputs), nullptr) << c.op;
  }
  // Types without a CUDA kernel stay on the CPU: float64 softmax, bool reductions, double casts.
  const std::vector<DataType> d1 = {DataType::kFloat64};
  EXPECT_EQ(registry.Find("", "Softmax", 13, "cuda", d1, d1), nullptr);
  EXPECT_EQ(registry.Find("", "ReduceMax", 20, "cuda", {DataType::kBool, i64}, {DataType::kBool}),
            nullptr);
  EXPECT_EQ(registry.Find("", "Cast", 13, "cuda", d1, {f}), nullptr);
  EXPECT_EQ(registry.Find("", "LeakyRelu", 16, "cuda", d1, d1), nullptr);
  EXPECT_EQ(registry.Find("", "Clip", 13, "cuda", {DataType::kUint8}, {DataType::kUint8}), nullptr);
  EXPECT_EQ(registry.Find("", "Pad", 23, "cuda", {f, i64}, {f}), nullptr);
}

// The inputs each CUDA kernel reads on the host (the engine binds them in host memory).
TEST(CudaKernelsTest, HostInputsAreDeclared) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const DataType f = DataType::kFloat32, i64 = DataType::kInt64;
  struct Case {
    const char* op;
    int opset;
    std::vector<DataType> inputs;
    std::vector<int> host_inputs;
  };
  const std::vector<Case> cases = {
      {"Reshape", 14, {f, i64}, {1}},
      {"Reshape", 4, {f}, {}},
      {"Squeeze", 13, {f, i64}, {1}},
      {"Squeeze", 11, {f}, {}},
      {"Unsqueeze", 13, {f, i64}, {1}},
      {"Flatten", 13, {f}, {}},
      {"Identity", 13, {f}, {}},
      {"Slice", 13, {f, i64, i64}, {1, 2, 3, 4}},
      {"Slice", 9, {f}, {}},
      {"Split", 13, {f, i64}, {1}},
      {"Split", 11, {f}, {}},
      {"Expand", 13, {f, i64}, {1}},
      {"ReduceSum", 13, {f, i64}, {1}},
      {"ReduceSum", 11, {f}, {}},
      {"ReduceMean", 18, {f, i64}, {1}},
      {"ReduceMean", 13, {f}, {}},
      {"Softmax", 13, {f}, {}},
      {"Gather", 13, {f, i64}, {}},
      {"Transpose", 13, {f}, {}},
      {"Concat", 13, {f, f}, {}},
      {"Pad", 2, {f}, {}},
      {"Pad", 11, {f, i64}, {1, 2, 3}},
      {"Pad", 19, {f, i64, f, i64}, {1, 2, 3}},
      {"Clip", 6, {f}, {}},
      {"Clip", 13, {f, f, f}, {1, 2}},
      {"Pow", 15, {f, f}, {}},
      {"LeakyRelu", 16, {f}, {}},
  };
  for (const Case& c : cases) {
    const engine::KernelDef* def = registry.Find("", c.op, c.opset, "cuda", c.inputs, {});
    ASSERT_NE(def, nullptr) << c.op << " " << c.opset;
    EXPECT_EQ(def->host_inputs, c.host_inputs) << c.op << " " << c.opset;
  }
}

// The new kernels refuse a host run too, views included (they launch nothing but alias device
// buffers).
TEST(CudaKernelsTest, NewKernelsRefuseToRunWithoutACudaStream) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor x = TestTensor::Of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const TestTensor shape = TestTensor::Of<int64_t>({1}, {6});
  const TestTensor axes = TestTensor::Of<int64_t>({1}, {1});
  const TestTensor pads = TestTensor::Of<int64_t>({4}, {0, 1, 1, 0});
  struct Case {
    const char* op;
    std::vector<const TestTensor*> inputs;
  };
  for (const Case& c : std::vector<Case>{{"Softmax", {&x}},
                                         {"Transpose", {&x}},
                                         {"ReduceSum", {&x, &axes}},
                                         {"Reshape", {&x, &shape}},
                                         {"Identity", {&x}},
                                         {"Pad", {&x, &pads}},
                                         {"Pow", {&x, &x}},
                                         {"Clip", {&x}},
                                         {"LeakyRelu", {&x}},
                                         {"HardSwish", {&x}},
                                         {"ArgMax", {&x}}}) {
    KernelTester t(c.op, 14);
    for (const TestTensor* in : c.inputs) t.Input(*in);
    t.DeviceType(DeviceKind::kCuda);
    auto kernel = t.Create(registry);
    ASSERT_TRUE(kernel.ok()) << c.op << ": " << kernel.status();
    absl::StatusOr<std::vector<TestTensor>> out =
        engine::testing::RunKernel(**kernel, c.inputs, 1, 1);
    ASSERT_FALSE(out.ok()) << c.op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
  }
}

// com.microsoft's activations refuse a host run too; a Pow whose exponent type differs from its
// base's is refused at creation (UNIMPLEMENTED: it stays on the CPU).
TEST(CudaKernelsTest, ContribActivationsAndPowRefusals) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor x = TestTensor::Of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const TestTensor bias = TestTensor::Of<float>({3}, {1, 2, 3});
  for (const char* op : {"Gelu", "FastGelu", "BiasGelu", "QuickGelu"}) {
    SCOPED_TRACE(op);
    KernelTester t(op, 1, "com.microsoft");
    t.Input(x).Input(bias).DeviceType(DeviceKind::kCuda);
    auto kernel = t.Create(registry);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    absl::StatusOr<std::vector<TestTensor>> out =
        engine::testing::RunKernel(**kernel, {&x, &bias}, 1, 1);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
  }
  KernelTester quick("QuickGelu", 1, "com.microsoft");
  quick.Attr("alpha", std::numeric_limits<float>::infinity()).Input(x);
  EXPECT_FALSE(quick.DeviceType(DeviceKind::kCuda).Create(registry).ok());

  const TestTensor e = TestTensor::Of<int64_t>({}, {2});
  KernelTester pow("Pow", 15);
  pow.Input(x).Input(e).DeviceType(DeviceKind::kCuda);
  auto kernel = pow.Create(registry);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented) << kernel.status();
  KernelTester wrap("Pad", 18);
  wrap.Attr("mode", std::string("wrap")).Input(x).DeviceType(DeviceKind::kCuda);
  EXPECT_FALSE(wrap.Create(registry).ok());  // wrap is opset 19's
}

// The cuDNN kernels refuse a host context like the others (before touching any input).
TEST(CudaKernelsTest, CudnnAndNnKernelsRefuseToRunWithoutACudaStream) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor x = TestTensor::Of<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const TestTensor w = TestTensor::Of<float>({1, 1, 2, 2}, std::vector<float>(4, 1.0f));
  const TestTensor c = TestTensor::Of<float>({1}, {1.0f});
  struct Node {
    const char* op;
    std::vector<const TestTensor*> inputs;
  };
  for (const Node& n : std::vector<Node>{{"Conv", {&x, &w}},
                                         {"ConvTranspose", {&x, &w}},
                                         {"MaxPool", {&x}},
                                         {"GlobalAveragePool", {&x}},
                                         {"BatchNormalization", {&x, &c, &c, &c, &c}}}) {
    SCOPED_TRACE(n.op);
    KernelTester t(n.op, 15);
    if (std::string(n.op) == "MaxPool") t.Attr("kernel_shape", std::vector<int64_t>{2, 2});
    for (const TestTensor* in : n.inputs) t.Input(*in);
    t.DeviceType(DeviceKind::kCuda);
    auto kernel = t.Create(registry);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    absl::StatusOr<std::vector<TestTensor>> out =
        engine::testing::RunKernel(**kernel, n.inputs, 1, 1);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
  }
}

// What the CUDA kernels do not do is refused at creation, so the engine can keep the node on the
// CPU: MaxPool's Indices output, BatchNormalization's training mode.
TEST(CudaKernelsTest, UnsupportedNodesAreRefusedAtCreation) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor x = TestTensor::Of<float>({1, 1, 4, 4}, std::vector<float>(16, 1.0f));
  KernelTester pool("MaxPool", 12);
  pool.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Input(x).Outputs(2);
  auto k = pool.DeviceType(DeviceKind::kCuda).Create(registry);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented) << k.status();
  EXPECT_NE(k.status().message().find("Indices"), std::string::npos) << k.status();

  const TestTensor c = TestTensor::Of<float>({1}, {1.0f});
  KernelTester bn("BatchNormalization", 15);
  bn.Attr("training_mode", int64_t{1}).Input(x).Input(c).Input(c).Input(c).Input(c);
  k = bn.DeviceType(DeviceKind::kCuda).Create(registry);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented) << k.status();
}

// The convolutions' workspace estimate runs cuDNN's heuristic, which needs the GPU: without one
// it is an error (the partitioner then uses its heuristic), never a crash; with one it is a
// byte count. Geometry errors come first, device or not.
TEST(CudaKernelsTest, ConvEstimateNeedsADevice) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCudaKernels(registry).ok());
  const TestTensor x = TestTensor::Of<float>({1, 3, 8, 8}, std::vector<float>(192));
  const TestTensor w = TestTensor::Of<float>({4, 3, 3, 3}, std::vector<float>(108));
  const TestTensor wt = TestTensor::Of<float>({3, 4, 3, 3}, std::vector<float>(108));
  const bool device = CheckCudaDevice(0).ok();
  for (const char* op : {"Conv", "ConvTranspose"}) {
    SCOPED_TRACE(op);
    KernelTester t(op, 11);
    t.Attr("pads", std::vector<int64_t>{1, 0, 0, 1}).Input(x);
    t.Input(std::string(op) == "Conv" ? w : wt, true, true);
    t.DeviceType(DeviceKind::kCuda);
    absl::StatusOr<size_t> estimate = t.Estimate(registry);
    if (device) {
      EXPECT_TRUE(estimate.ok()) << estimate.status();
    } else {
      ASSERT_FALSE(estimate.ok());
      EXPECT_EQ(estimate.status().code(), absl::StatusCode::kFailedPrecondition)
          << estimate.status();
    }
  }
  KernelTester bad("Conv", 11);
  bad.Attr("group", int64_t{2}).Input(x).Input(w).DeviceType(DeviceKind::kCuda);
  absl::StatusOr<size_t> estimate = bad.Estimate(registry);
  ASSERT_FALSE(estimate.ok());
  EXPECT_EQ(estimate.status().code(), absl::StatusCode::kInvalidArgument) << estimate.status();
  // Shapes unknown at load: no estimate.
  KernelTester dynamic("Conv", 11);
  dynamic.Input(x, /*shape_known_at_load=*/false).Input(w).DeviceType(DeviceKind::kCuda);
  EXPECT_FALSE(dynamic.Estimate(registry).ok());
}

}  // namespace
}  // namespace inferd::kernels::cuda

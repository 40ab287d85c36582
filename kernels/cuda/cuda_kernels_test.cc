// The CUDA kernels' registration, beside the CPU kernels. Runs without a GPU.
#include "kernels/cuda/cuda_kernels.h"

#include <vector>

#include "base/cuda_status.h"
#include "engine/data_type.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"

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
  EXPECT_EQ(registry.Find("", "Conv", 23, "cuda", f2, f1), nullptr);
  EXPECT_EQ(registry.Find("", "Conv", 11, "cuda", h2, {DataType::kFloat16}), nullptr);
  const std::vector<DataType> u8 = {DataType::kUint8};
  EXPECT_EQ(registry.Find("", "MaxPool", 12, "cuda", u8, u8), nullptr);
  EXPECT_EQ(registry.Find("", "Softmax", 13, "cuda", f1, f1), nullptr);
  // A second registration overlaps the first.
  EXPECT_FALSE(RegisterCudaKernels(registry).ok());
  EXPECT_NE(engine::FormatKernelTable(registry).find("cuda"), std::string::npos);
}

// Every CUDA kernel estimates its arena workspace (none), so the partitioner needs no heuristic.
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

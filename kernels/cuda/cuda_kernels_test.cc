// The CUDA kernels' registration, beside the CPU kernels. Runs without a GPU.
#include "kernels/cuda/cuda_kernels.h"

#include <vector>

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
  for (const char* op : {"Relu", "Sigmoid", "Tanh"}) {
    EXPECT_NE(registry.Find("", op, 14, "cuda", f1, f1), nullptr) << op;
  }
  const std::vector<DataType> i64 = {DataType::kInt64, DataType::kInt64};
  EXPECT_NE(registry.Find("", "Add", 14, "cuda", i64, {DataType::kInt64}), nullptr);
  // What has no CUDA kernel is not found on cuda: float16, opsets past the bound, other ops.
  const std::vector<DataType> h2 = {DataType::kFloat16, DataType::kFloat16};
  EXPECT_EQ(registry.Find("", "Add", 14, "cuda", h2, {DataType::kFloat16}), nullptr);
  EXPECT_EQ(registry.Find("", "Add", 99, "cuda", f2, f1), nullptr);
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

}  // namespace
}  // namespace inferd::kernels::cuda

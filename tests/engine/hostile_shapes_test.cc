// Issue 12 case 1: shapes a model or a config declares must never crash the process. An MLP
// whose input is declared [2^34, 64] died with SIGFPE in oneDNN's primitive creation at load;
// max_input_shapes {x: [2^40, 64]} crashed the partitioner's cost accounting. Each is now
// refused at load, before any kernel is made, with INVALID_ARGUMENT naming the value, its shape
// and the bound (engine/shape.h); a model within the bounds still loads and runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd {
namespace {

using engine::DataType;
using engine::Session;
using engine::SessionOptions;
using engine::testing::ModelBuilder;

constexpr int64_t k2To34 = int64_t{1} << 34;
constexpr int64_t k2To40 = int64_t{1} << 40;

class HostileShapes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new engine::KernelRegistry();
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(*registry_).ok());
  }

  // y = Relu(x @ W + b), W [64, 64]; `rows` < 0 declares a dynamic first dim.
  std::string WriteMlp(const std::string& name, int64_t rows) {
    ModelBuilder b(13);
    b.Input("x", DataType::kFloat32, {rows, 64});
    b.Initializer("w", engine::Shape{64, 64}, std::vector<float>(64 * 64, 0.5f));
    b.Initializer("b", engine::Shape{64}, std::vector<float>(64, 1.0f));
    b.Node("MatMul", {"x", "w"}, {"xw"}, "matmul");
    b.Node("Add", {"xw", "b"}, {"h"}, "add");
    b.Node("Relu", {"h"}, {"y"}, "relu");
    b.Output("y", DataType::kFloat32, {rows, 64});
    return Write(name, b);
  }

  // y = Relu(x) with x of `dims`.
  std::string WriteRelu(const std::string& name, const std::vector<int64_t>& dims) {
    ModelBuilder b(13);
    b.Input("x", DataType::kFloat32, dims);
    b.Node("Relu", {"x"}, {"y"}, "relu");
    b.Output("y", DataType::kFloat32, dims);
    return Write(name, b);
  }

  std::string Write(const std::string& name, const ModelBuilder& b) {
    const std::string path = engine::testing::TempDir() + "/" + name + ".onnx";
    std::ofstream(path, std::ios::binary) << b.Serialize();
    return path;
  }

  absl::Status Load(const std::string& path, const SessionOptions& options = {}) {
    return Session::Load(path, options, *registry_).status();
  }

  static engine::KernelRegistry* registry_;
};

engine::KernelRegistry* HostileShapes::registry_ = nullptr;

void ExpectRefused(const absl::Status& status, const std::vector<std::string>& needles) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& n : needles) {
    EXPECT_NE(status.message().find(n), std::string::npos) << "no '" << n << "' in " << status;
  }
}

TEST_F(HostileShapes, AModelWithinTheBoundsLoadsAndRuns) {
  auto session = Session::Load(WriteMlp("mlp_8", 8), {}, *registry_);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<float> x(8 * 64, 1.0f);
  engine::InputTensor in{"x", DataType::kFloat32, engine::Shape{8, 64}, x.data(),
                         x.size() * sizeof(float)};
  auto out = (*session)->Run({in}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, (engine::Shape{8, 64}));
  EXPECT_FLOAT_EQ(static_cast<const float*>((*out)[0].buffer.data())[0], 33.0f);  // 64 * 0.5 + 1
}

TEST_F(HostileShapes, AStaticDimBeyondOneDnnsIntsIsRefusedAtLoad) {
  ExpectRefused(Load(WriteMlp("mlp_2_34", k2To34)),
                {"value 'x'", "[17179869184,64]", "dim 0", "2147483647", "before any kernel"});
}

TEST_F(HostileShapes, HugeMaxInputShapesAreRefused) {
  SessionOptions options;
  options.max_input_shapes["x"] = {k2To40, 64};
  options.partition.devices.push_back(partition::DeviceSpec{"cpu:0", uint64_t{1} << 30});
  ExpectRefused(Load(WriteMlp("mlp_dynamic", -1), options),
                {"max_input_shapes", "fixed shape for 'x'", "[1099511627776,64]", "2147483647"});
}

TEST_F(HostileShapes, HugeFixedInputShapesAreRefused) {
  SessionOptions options;
  options.fixed_input_shapes["x"] = {k2To40, 64};
  ExpectRefused(Load(WriteMlp("mlp_dynamic_fixed", -1), options),
                {"fixed shape for 'x'", "[1099511627776,64]", "2147483647"});
}

TEST_F(HostileShapes, SizesThatOverflowAreRefused) {
  // Every dim within the per-dim bound, the product not: 2^90 elements.
  ExpectRefused(Load(WriteRelu("relu_2_90", {1 << 30, 1 << 30, 1 << 30})),
                {"value 'x'", "140737488355328 bytes"});
  // ~2^62 elements of float32: the element count fits in int64, the byte size does not.
  ExpectRefused(Load(WriteRelu("relu_2_62", {engine::kMaxDim, engine::kMaxDim})),
                {"value 'x'", "bytes"});
  // A zero dim does not excuse the others: strides multiply them.
  ExpectRefused(Load(WriteRelu("relu_zero", {0, 1 << 30, 1 << 30, 1 << 30})), {"bytes"});
  SessionOptions options;
  options.fixed_input_shapes["x"] = {1 << 30, 1 << 30, 1 << 30};
  ExpectRefused(Load(WriteRelu("relu_dynamic", {-1, -1, -1}), options),
                {"fixed shape for 'x'", "bytes"});
}

TEST_F(HostileShapes, RanksAreBoundedAndMessagesStaySmall) {
  ExpectRefused(Load(WriteRelu("relu_rank_65", std::vector<int64_t>(65, 1))),
                {"rank 65 is above the limit of 64"});
  const absl::Status huge = Load(WriteRelu("relu_rank_100000", std::vector<int64_t>(100000, 1)));
  ExpectRefused(huge, {"rank 100000 is above the limit of 64"});
  EXPECT_LT(huge.message().size(), 1000u);
  EXPECT_TRUE(Load(WriteRelu("relu_rank_64", std::vector<int64_t>(64, 1))).ok());
}

TEST_F(HostileShapes, RequestShapesBeyondTheBoundsAreRefused) {
  auto session = Session::Load(WriteRelu("relu_any", {-1, -1}), {}, *registry_);
  ASSERT_TRUE(session.ok()) << session.status();
  // No bytes, yet a dim oneDNN would truncate.
  engine::InputTensor in{"x", DataType::kFloat32, engine::Shape{int64_t{1} << 32, 0}, nullptr, 0};
  auto out = (*session)->Run({in}, {});
  ASSERT_FALSE(out.ok());
  ExpectRefused(out.status(), {"input 'x'", "[4294967296,0]", "2147483647"});
}

}  // namespace
}  // namespace inferd

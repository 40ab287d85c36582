// RegisterCpuKernels: a sample of ops resolves for opsets 7..17 (or from the opset it appears
// in), with the right element types and a workspace estimate (0 bytes for the families that take
// no workspace, set at registration; LayerNormalization's own); registering
// twice is refused; unsupported opsets and types are explained; the listing (`inferctl ops`) has
// every def once. The operator set as a whole is checked against the ONNX backend test data by
// //tests/conformance:conformance_floor_test.
#include "kernels/cpu/cpu_kernels.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/kernel_registry.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelRegistry;

struct OpCase {
  const char* domain;
  const char* op;
  int first_opset, last_opset;
  std::vector<DataType> types;  // accepted on input 0
  bool has_estimate;
};

const std::vector<OpCase>& Ops() {
  static const auto* ops = new std::vector<OpCase>{
      {"", "MatMul", 7, 17, {DataType::kFloat32}, true},
      {"", "Gemm", 7, 17, {DataType::kFloat32}, true},
      {"", "Add", 7, 17, {DataType::kFloat32, DataType::kInt32, DataType::kInt64}, true},
      {"", "Mul", 7, 17, {DataType::kFloat32, DataType::kInt32, DataType::kInt64}, true},
      {"", "Relu", 7, 17, {DataType::kFloat32}, true},
      {"", "Softmax", 7, 17, {DataType::kFloat32}, true},
      {"", "Reshape", 7, 17, {DataType::kFloat32, DataType::kInt64, DataType::kUint8}, true},
      {"", "Transpose", 7, 17, {DataType::kFloat32, DataType::kInt64, DataType::kBool}, true},
      {"", "Conv", 7, 17, {DataType::kFloat32}, true},
      {"", "MaxPool", 7, 17, {DataType::kFloat32}, true},
      {"", "LayerNormalization", 17, 17, {DataType::kFloat32}, true},
      {"", "Gather", 7, 17, {DataType::kFloat32, DataType::kInt64, DataType::kInt32}, true},
      {"", "Concat", 7, 17, {DataType::kFloat32, DataType::kInt64, DataType::kFloat16}, true},
      {"com.inferd", "FusedMatMul", 1, 1, {DataType::kFloat32}, true},
      {"com.inferd", "FusedConv", 1, 1, {DataType::kFloat32}, true},
  };
  return *ops;
}

TEST(CpuKernelsTest, EveryOpResolvesOverItsOpsets) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  EXPECT_GE(registry.Ops().size(), 100u);  // the whole operator set; these rows are a sample
  for (const OpCase& c : Ops()) {
    for (int opset = c.first_opset; opset <= c.last_opset; ++opset) {
      for (DataType type : c.types) {
        SCOPED_TRACE(std::string(c.op) + " opset " + std::to_string(opset) + " " +
                     engine::DataTypeName(type));
        const engine::KernelDef* def =
            registry.Find(c.domain, c.op, opset, "cpu", {type, DataType::kInt64}, {});
        ASSERT_NE(def, nullptr);
        EXPECT_EQ(static_cast<bool>(def->estimate_workspace), c.has_estimate);
      }
    }
  }
  // "ai.onnx" is the default domain.
  EXPECT_NE(registry.Find("ai.onnx", "Conv", 11, "cpu", {DataType::kFloat32}, {}), nullptr);
}

engine::KernelIoInfo Io(const engine::Shape& shape) {
  engine::KernelIoInfo io;
  io.name = "v";
  io.present = true;
  io.type = DataType::kFloat32;
  io.shape = engine::ShapeInfo::FromShape(shape);
  return io;
}

// Families that take no workspace estimate exactly 0 (the partitioner charges them nothing on
// top of their outputs); LayerNormalization estimates 0 unless Scale is broadcast, when it takes
// a temporary beside the plan's block and has no estimate (the partitioner's heuristic).
TEST(CpuKernelsTest, KernelsWithoutWorkspaceEstimateZero) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  const std::vector<onnx::AttributeProto> none;
  for (const char* op : {"Add", "Relu", "Softmax", "Reshape", "Transpose", "Gather", "Concat"}) {
    SCOPED_TRACE(op);
    const engine::KernelDef* def =
        registry.Find("", op, 17, "cpu", {DataType::kFloat32, DataType::kInt64}, {});
    ASSERT_NE(def, nullptr);
    engine::KernelInfo info("n", op, "", 17, &none, {Io(engine::Shape({2, 8}))},
                            {Io(engine::Shape({2, 8}))});
    absl::StatusOr<size_t> bytes = def->estimate_workspace(info);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(*bytes, 0u);
  }
  const engine::KernelDef* ln =
      registry.Find("", "LayerNormalization", 17, "cpu", {DataType::kFloat32}, {});
  ASSERT_NE(ln, nullptr);
  const engine::Shape x({2, 4, 8});
  engine::KernelInfo in_place("ln", "LayerNormalization", "", 17, &none,
                              {Io(x), Io(engine::Shape({8})), Io(engine::Shape({8}))}, {Io(x)});
  absl::StatusOr<size_t> bytes = ln->estimate_workspace(in_place);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 0u);
  engine::KernelInfo broadcast("ln", "LayerNormalization", "", 17, &none,
                               {Io(x), Io(engine::Shape({1}))}, {Io(x)});
  EXPECT_FALSE(ln->estimate_workspace(broadcast).ok());
}

TEST(CpuKernelsTest, RegisteringTwiceIsRefused) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  absl::Status again = RegisterCpuKernels(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
}

TEST(CpuKernelsTest, UnsupportedCasesAreExplained) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  EXPECT_EQ(registry.Find("", "Conv", 11, "cpu", {DataType::kFloat64}, {}), nullptr);
  absl::Status s = registry.Explain("", "Conv", 11, "cpu", {DataType::kFloat64}, {}, "conv1");
  EXPECT_NE(s.message().find("does not support element type float64"), std::string::npos) << s;
  EXPECT_EQ(registry.Find("", "Erf", 8, "cpu", {DataType::kFloat32}, {}), nullptr);  // Erf is 9+
  EXPECT_NE(registry.Find("", "Add", 22, "cpu", {DataType::kFloat32}, {}), nullptr);
  EXPECT_EQ(registry.Find("", "Add", 23, "cpu", {DataType::kFloat32}, {}), nullptr);  // past 22
  EXPECT_EQ(registry.Find("", "Add", 13, "cuda", {DataType::kFloat32}, {}), nullptr);
  // Strings have their own kernels (docs/strings.md); Add on strings has none.
  EXPECT_NE(registry.Find("", "Gather", 13, "cpu", {DataType::kString}, {}), nullptr);
  EXPECT_EQ(registry.Find("", "Add", 13, "cpu", {DataType::kString}, {}), nullptr);
}

TEST(CpuKernelsTest, TheListingHasEveryDefOnce) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  const std::vector<const engine::KernelDef*> defs = registry.Defs();
  EXPECT_EQ(defs.size(), registry.size());
  for (const engine::KernelDef* d : defs) EXPECT_EQ(d->device_type, engine::DeviceKind::kCpu);
  const std::string table = engine::FormatKernelTable(registry);
  EXPECT_EQ(static_cast<size_t>(std::count(table.begin(), table.end(), '\n')),
            registry.size() + 1);  // a header line, then one line per def
  // Column widths follow the longest domain and op name: match the fields, not the spacing.
  auto has_row = [&](const std::string& domain, const std::string& op) {
    for (size_t at = table.find("\n" + domain + " "); at != std::string::npos;
         at = table.find("\n" + domain + " ", at + 1)) {
      const size_t op_at = table.find_first_not_of(' ', at + 1 + domain.size());
      if (table.compare(op_at, op.size() + 1, op + " ") == 0) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_row("com.inferd", "FusedConv")) << table;
  EXPECT_TRUE(has_row("ai.onnx", "Relu")) << table;
  EXPECT_TRUE(has_row("com.microsoft", "Attention")) << table;
  const std::string json = engine::FormatKernelJson(registry);
  size_t objects = 0;
  for (size_t at = json.find("{\"domain\""); at != std::string::npos;
       at = json.find("{\"domain\"", at + 1)) {
    ++objects;
  }
  EXPECT_EQ(objects, registry.size());
}

// The harness looks the kernel up by device kind: the same case asks for a cuda kernel, which a
// CPU-only registry does not have.
TEST(CpuKernelsTest, TheHarnessLooksUpByDevice) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  for (engine::DeviceKind device : {engine::DeviceKind::kCpu, engine::DeviceKind::kCuda}) {
    engine::testing::KernelTester t("Relu", 14);
    t.Input<float>({3}, {-1, 0, 2}).DeviceType(device);
    absl::StatusOr<std::vector<engine::Tensor>> out = t.Run(registry);
    if (device == engine::DeviceKind::kCpu) {
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(engine::testing::Values<float>((*out)[0]), (std::vector<float>{0, 0, 2}));
      EXPECT_NE(t.Find(registry), nullptr);
    } else {
      EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
      EXPECT_NE(out.status().message().find("no kernel for device type 'cuda'"), std::string::npos)
          << out.status();
      EXPECT_EQ(t.Find(registry), nullptr);
    }
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

#include "engine/execution_plan.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

// Never run here: only what the plan asks of a kernel (its workspaces).
class PlannedKernel : public OpKernel {
 public:
  explicit PlannedKernel(size_t workspace) : workspace_(workspace) {}
  absl::Status Compute(KernelContext&) const override {
    return absl::UnimplementedError("not run in this test");
  }
  std::vector<WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape>) const override {
    if (workspace_ == 0) return {};
    return {{0, workspace_}};
  }

 private:
  size_t workspace_;
};

KernelDef Def(const std::string& op, size_t workspace) {
  KernelDef def;
  def.op_type = op;
  def.create = [workspace](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<PlannedKernel>(workspace);
  };
  return def;
}

class ExecutionPlanTest : public ::testing::Test {
 protected:
  ExecutionPlanTest() {
    EXPECT_TRUE(registry_.Register(Def("Relu", 100)).ok());
    EXPECT_TRUE(registry_.Register(Def("Neg", 0)).ok());
  }
  // x[dim0,4] -> A (Relu, 100 bytes of workspace) -> a -> B (Neg) -> b (graph output).
  Graph& Chain(int64_t dim0) {
    b_.Input("x", {dim0, 4});
    b_.Node("A", "Relu", {"x"}, {"a"}, {dim0, 4});
    b_.Node("B", "Neg", {"a"}, {"b"}, {dim0, 4});
    b_.Output("b");
    return b_.graph();
  }
  KernelRegistry registry_;
  GraphBuilder b_;
};

TEST_F(ExecutionPlanTest, RolesByWhatAValueIs) {
  Graph& g = Chain(1);
  auto plan = ExecutionPlan::Build(g, registry_, {"cpu:0"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<ValuePlan>& v = (*plan)->values();
  EXPECT_EQ(v[g.FindValue("x")].role, AllocationRole::kBorrowed);
  EXPECT_EQ(v[g.FindValue("a")].role, AllocationRole::kExecution);
  EXPECT_EQ(v[g.FindValue("b")].role, AllocationRole::kIO);
  EXPECT_STREQ(AllocationRoleName(AllocationRole::kIO), "io");
  ASSERT_EQ((*plan)->steps().size(), 2u);
  EXPECT_EQ(g.nodes[(*plan)->steps()[0].node].name, "A");
}

TEST_F(ExecutionPlanTest, IntermediatesReturnAtTheirLastUseOutputsNever) {
  Graph& g = Chain(1);
  auto plan = ExecutionPlan::Build(g, registry_, {"cpu:0"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const int a = g.FindValue("a"), b = g.FindValue("b");
  EXPECT_EQ((*plan)->values()[a].last_use, 1);
  EXPECT_EQ((*plan)->values()[b].last_use, kNeverReleased);
  EXPECT_EQ((*plan)->steps()[1].release, std::vector<int>{a});
  EXPECT_TRUE((*plan)->steps()[0].release.empty());
}

TEST_F(ExecutionPlanTest, StaticPlanLaysOutIntermediatesAndWorkspaces) {
  Graph& g = Chain(1);
  auto plan = ExecutionPlan::Build(g, registry_, {"cpu:0"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE((*plan)->is_static());
  EXPECT_TRUE((*plan)->fully_static());
  const DevicePlan& d = (*plan)->devices()[0];
  EXPECT_EQ(d.name, "cpu:0");
  EXPECT_EQ(d.workspace_bytes, 100u);
  EXPECT_EQ(d.output_bytes, 16u);        // b: 4 floats
  EXPECT_EQ(d.naive_bytes, 64u + 128u);  // a and the workspace, each rounded to 64 bytes
  // a and A's workspace are live together at step 0: no overlap, so the peak is their sum.
  EXPECT_EQ(d.block_bytes, 64u + 128u);
  const ValuePlan& a = (*plan)->values()[g.FindValue("a")];
  EXPECT_TRUE(a.planned);
  ASSERT_EQ((*plan)->steps()[0].workspace_offsets.size(), 1u);
  const size_t ws = (*plan)->steps()[0].workspace_offsets[0];
  EXPECT_TRUE(a.offset + 64 <= ws || ws + 128 <= a.offset) << a.offset << " " << ws;
}

TEST_F(ExecutionPlanTest, UnknownShapesMeanNoStaticPlanAndSayWhy) {
  Graph& g = Chain(-1);
  auto plan = ExecutionPlan::Build(g, registry_, {"cpu:0"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE((*plan)->is_static());
  EXPECT_NE((*plan)->dynamic_reason().find("'x'"), std::string::npos) << (*plan)->dynamic_reason();
  EXPECT_EQ(StaticBytes(g.values[g.FindValue("a")]), -1);
}

TEST_F(ExecutionPlanTest, MissingKernelFailsTheBuild) {
  Graph& g = Chain(1);
  g.nodes[1].op_type = "Unknown";
  EXPECT_FALSE(ExecutionPlan::Build(g, registry_, {"cpu:0"}, 1).ok());
}

// Every node that cannot run is reported at once, one line per reason with its nodes.
TEST_F(ExecutionPlanTest, ReportsEveryMissingKernelAtOnce) {
  b_.Input("x", {2, 4});
  b_.Node("A", "Lstm", {"x"}, {"a"}, {2, 4});
  b_.Node("B", "Lstm", {"a"}, {"b"}, {2, 4});
  b_.Node("C", "Relu", {"b"}, {"c"}, {2, 4});
  b_.Node("D", "Gru", {"c"}, {"d"}, {2, 4});
  b_.Output("d");
  auto plan = ExecutionPlan::Build(b_.graph(), registry_, {"cpu:0"}, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("3 nodes cannot run (2 reasons)"), std::string::npos) << message;
  EXPECT_NE(message.find("Lstm (opset"), std::string::npos) << message;
  EXPECT_NE(message.find("[nodes 'A', 'B']"), std::string::npos) << message;
  EXPECT_NE(message.find("[node 'D']"), std::string::npos) << message;
}

// One node alone keeps its own message.
TEST_F(ExecutionPlanTest, OneMissingKernelKeepsItsMessage) {
  b_.Input("x", {2, 4});
  b_.Node("A", "Lstm", {"x"}, {"a"}, {2, 4});
  b_.Output("a");
  auto plan = ExecutionPlan::Build(b_.graph(), registry_, {"cpu:0"}, 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("node 'A': operator ai.onnx::Lstm"), std::string::npos)
      << plan.status();
}

}  // namespace
}  // namespace inferd::engine

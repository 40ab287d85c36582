#include "engine/rewrites.h"

#include <memory>
#include <string>

#include "engine/domain.h"
#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

KernelDef Def(const std::string& domain, const std::string& op) {
  KernelDef def;
  def.domain = domain;
  def.op_type = op;
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return absl::UnimplementedError("not made in this test");
  };
  return def;
}

// x[2,8] -> MatMul(x, w[8,4]) -> t[2,4] -> Add(t, bias[4]) -> y.
struct MatMulAdd {
  GraphBuilder b;
  Graph* g;
  explicit MatMulAdd(bool t_is_output = false) {
    b.Input("x", {2, 8}).Weight("w", {8, 4}).Weight("bias", {4});
    b.Node("/m/mm", "MatMul", {"x", "w"}, {"t"}, {2, 4});
    b.Node("/m/add", "Add", {"t", "bias"}, {"y"}, {2, 4});
    b.Output("y");
    if (t_is_output) b.Output("t");
    g = &b.graph();
  }
};

TEST(RewritesTest, MatMulAddBecomesFusedMatMulNamedAfterTheMatMul) {
  MatMulAdd m;
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(m.g->nodes.size(), 1u);
  const Node& f = m.g->nodes[0];
  EXPECT_EQ(f.name, std::string("/m/mm") + kMatMulAddSuffix);
  EXPECT_EQ(OriginalNodeName(f.name), "/m/mm");
  EXPECT_EQ(f.op_type, "FusedMatMul");
  EXPECT_EQ(f.domain, kInferdDomain);
  ASSERT_EQ(f.inputs.size(), 3u);
  EXPECT_EQ(m.g->values[f.inputs[2]].name, "bias");
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
  EXPECT_TRUE(m.g->Validate().ok());
}

TEST(RewritesTest, NoFusionWithoutAKernelForTheFusedOp) {
  MatMulAdd m;
  KernelRegistry registry;
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 0);
  EXPECT_EQ(m.g->nodes.size(), 2u);
}

TEST(RewritesTest, NoFusionWhenTheIntermediateIsAGraphOutputOrDevicesDiffer) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
  MatMulAdd out(/*t_is_output=*/true);
  EXPECT_EQ(ApplyFusions(*out.g, registry).value_or(-1), 0);
  MatMulAdd split;
  split.g->nodes[1].device = "cpu:1";
  EXPECT_EQ(ApplyFusions(*split.g, registry).value_or(-1), 0);
}

}  // namespace
}  // namespace inferd::engine

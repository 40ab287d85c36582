// Rewrites of quantized graphs: the QDQ groups around elementwise and pooling ops (qdq_fusion.h,
// pass 2): Add -> QLinearAdd, MaxPool between a DequantizeLinear and a QuantizeLinear of the same
// parameters -> MaxPool on the 8-bit tensor; the zero Pad before quantize_dynamic's ConvInteger
// (rewrites.cc); and the cases that must stay as they are.
#include <string>

#include "engine/domain.h"
#include "engine/rewrite_util.h"
#include "engine/rewrites.h"
#include "engine/testing/fake_kernel_def.h"
#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

KernelDef Def(const std::string& domain, const std::string& op) {
  return testing::FakeKernelDef(domain, op);
}

// a, b [1,16,4,4] uint8 -> DQ each -> op (Add, or MaxPool of a) -> Q -> y uint8. `y_scale`:
// the Q's scale (DQ's are 0.1).
struct QdqElementwise {
  GraphBuilder b;
  Graph* g;
  float scale = 0.1f, y_scale;
  uint8_t zp = 128;
  Tensor s, ys, z;
  QdqElementwise(const std::string& op, float q_scale, bool q_int8 = false) : y_scale(q_scale) {
    b.Input("a", {1, 16, 4, 4}).Input("b", {1, 16, 4, 4});
    b.Weight("s", {}).Weight("ys", {}).Weight("z", {});
    b.Node("/m/dqa", "DequantizeLinear", {"a", "s", "z"}, {"ad"}, {1, 16, 4, 4});
    if (op == "Add") {
      b.Node("/m/dqb", "DequantizeLinear", {"b", "s", "z"}, {"bd"}, {1, 16, 4, 4});
      b.Node("/m/add", "Add", {"ad", "bd"}, {"h"}, {1, 16, 4, 4});
    } else {
      b.Node("/m/pool", "MaxPool", {"ad"}, {"h"}, {1, 16, 4, 4});
    }
    b.Node("/m/q", "QuantizeLinear", {"h", "ys", "z"}, {"y"}, {1, 16, 4, 4});
    b.Output("y");
    g = &b.graph();
    s = Tensor::Borrowed(DataType::kFloat32, Shape{}, &scale);
    ys = Tensor::Borrowed(DataType::kFloat32, Shape{}, &y_scale);
    z = Tensor::Borrowed(DataType::kUint8, Shape{}, &zp);
    Set("s", &s);
    Set("ys", &ys);
    Set("z", &z);
    g->values[g->FindValue("a")].type = DataType::kUint8;
    g->values[g->FindValue("b")].type = DataType::kUint8;
    g->values[g->FindValue("y")].type = q_int8 ? DataType::kInt8 : DataType::kUint8;
  }
  void Set(const std::string& name, const Tensor* t) {
    Value& v = g->values[g->FindValue(name)];
    v.initializer = t;
    v.type = t->dtype();
  }
};

KernelRegistry QAddRegistry() {
  KernelRegistry registry;
  EXPECT_TRUE(registry.Register(Def(kMicrosoftDomain, "QLinearAdd")).ok());
  return registry;
}

TEST(QdqFusionTest, QdqAddBecomesQLinearAdd) {
  QdqElementwise m("Add", 0.2f);
  KernelRegistry registry = QAddRegistry();
  DerivedWeights derived;
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(m.g->nodes.size(), 1u);
  const Node& f = m.g->nodes[0];
  EXPECT_EQ(f.name, std::string("/m/add") + kQdqSuffix);
  EXPECT_EQ(f.op_type, "QLinearAdd");
  EXPECT_EQ(f.domain, kMicrosoftDomain);
  const char* want[] = {"a", "s", "z", "b", "s", "z", "ys", "z"};
  ASSERT_EQ(f.inputs.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m.g->values[f.inputs[i]].name, want[i]) << i;
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
  EXPECT_TRUE(m.g->Validate().ok());
}

TEST(QdqFusionTest, NoQLinearAddWhenTheOutputTypeDiffers) {
  QdqElementwise m("Add", 0.2f, /*q_int8=*/true);  // uint8 inputs, int8 y: no one T
  KernelRegistry registry = QAddRegistry();
  DerivedWeights derived;
  EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  EXPECT_EQ(m.g->nodes.size(), 4u);
}

TEST(QdqFusionTest, NoQLinearAddWithoutItsKernel) {
  QdqElementwise m("Add", 0.2f);
  KernelRegistry registry;
  DerivedWeights derived;
  EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  EXPECT_EQ(m.g->nodes.size(), 4u);
}

// Two Adds of the same DQ(a) and DQ(b) (a residual block's input read twice): both become
// QLinearAdds and the DequantizeLinears, read by neither any more, go; one that is a graph output
// stays.
TEST(QdqFusionTest, DequantizeReadByTwoFusedGroupsGoesWithThem) {
  for (bool dq_is_output : {false, true}) {
    QdqElementwise m("Add", 0.2f);
    m.b.Node("/m/add2", "Add", {"ad", "bd"}, {"h2"}, {1, 16, 4, 4});
    m.b.Node("/m/q2", "QuantizeLinear", {"h2", "ys", "z"}, {"y2"}, {1, 16, 4, 4});
    m.b.Output("y2");
    if (dq_is_output) m.b.Output("bd");
    m.g = &m.b.graph();
    m.g->values[m.g->FindValue("y2")].type = DataType::kUint8;
    KernelRegistry registry = QAddRegistry();
    DerivedWeights derived;
    ASSERT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 2);
    size_t dqs = 0;
    for (const Node& n : m.g->nodes) dqs += n.op_type == "DequantizeLinear" ? 1 : 0;
    EXPECT_EQ(dqs, dq_is_output ? 1u : 0u);
    EXPECT_EQ(m.g->nodes.size(), dq_is_output ? 3u : 2u);
    EXPECT_TRUE(m.g->Validate().ok());
  }
}

TEST(QdqFusionTest, MaxPoolBetweenEqualQdqParamsRunsOnTheQuantizedTensor) {
  QdqElementwise m("MaxPool", 0.1f);
  KernelRegistry registry;
  DerivedWeights derived;
  ASSERT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 1);
  ASSERT_EQ(m.g->nodes.size(), 1u);
  const Node& f = m.g->nodes[0];
  EXPECT_EQ(f.op_type, "MaxPool");
  EXPECT_EQ(f.name, "/m/pool");
  ASSERT_EQ(f.inputs.size(), 1u);
  EXPECT_EQ(m.g->values[f.inputs[0]].name, "a");
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
  EXPECT_TRUE(m.g->Validate().ok());
}

TEST(QdqFusionTest, MaxPoolStaysFloatWhenTheQuantizeRescales) {
  QdqElementwise m("MaxPool", 0.2f);  // Q's scale differs from DQ's: not the identity
  KernelRegistry registry;
  DerivedWeights derived;
  EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  EXPECT_EQ(m.g->nodes.size(), 3u);
}

// x -> Pad(constant 0 over H and W) -> DynamicQuantizeLinear -> ConvInteger (quantize_dynamic's
// CNN form): the Pad folds into the ConvInteger's pads and the DynamicQuantizeLinear reads x,
// its output taking x's shape; not where the quantized tensor has another reader.
TEST(QdqFusionTest, ZeroPadBeforeDynamicQuantizeFoldsIntoTheConvInteger) {
  for (bool other_reader : {false, true}) {
    GraphBuilder b;
    b.Input("x", {1, 2, 5, 5}).Weight("w", {3, 2, 3, 3}).Weight("pads", {8});
    b.Node("/m/pad", "Pad", {"x", "pads"}, {"p"}, {1, 2, 7, 7});
    b.Node("/m/dql", "DynamicQuantizeLinear", {"p"}, {"q", "qs", "qz"}, {1, 2, 7, 7});
    b.Node("/m/conv", "ConvInteger", {"q", "w", "qz"}, {"y"}, {1, 3, 5, 5});
    b.Output("y");
    if (other_reader) {
      b.Node("/m/other", "Identity", {"q"}, {"o"}, {1, 2, 7, 7});
      b.Output("o");
    }
    Graph& g = b.graph();
    const int64_t pads[] = {0, 0, 1, 1, 0, 0, 1, 1};
    Tensor pads_tensor = Tensor::Borrowed(DataType::kInt64, Shape{8}, pads);
    g.values[g.FindValue("pads")].initializer = &pads_tensor;
    g.values[g.FindValue("pads")].type = DataType::kInt64;
    KernelRegistry registry;
    DerivedWeights derived;
    ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), other_reader ? 0 : 1);
    if (other_reader) {
      EXPECT_EQ(g.nodes.size(), 4u);
      continue;
    }
    ASSERT_EQ(g.nodes.size(), 2u);
    const Node& dql = g.nodes[0];
    const Node& conv = g.nodes[1];
    EXPECT_EQ(g.values[dql.inputs[0]].name, "x");
    EXPECT_EQ(g.values[dql.outputs[0]].shape.dims[2].value, 5);
    EXPECT_EQ(rewrite::FindAttribute(conv, "pads")->ints_size(), 4);
    for (int64_t v : rewrite::FindAttribute(conv, "pads")->ints()) EXPECT_EQ(v, 1);
    EXPECT_TRUE(g.Validate().ok());
  }
}

}  // namespace
}  // namespace inferd::engine

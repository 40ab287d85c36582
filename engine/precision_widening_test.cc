// The precision widening pass on small models loaded through Model::Parse, with a registry of
// kernel definitions that say which ops have float16 kernels (never instantiated here).
#include "engine/precision_widening.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/testing/model_builder.h"

namespace inferd::engine {
namespace {

using testing::ModelBuilder;
constexpr DataType kF16 = DataType::kFloat16;
constexpr DataType kBF16 = DataType::kBFloat16;
constexpr DataType kF32 = DataType::kFloat32;

KernelDef Def(const std::string& op, std::vector<DataType> types) {
  KernelDef def;
  def.op_type = op;
  def.types = std::move(types);
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return absl::UnimplementedError("not made in this test");
  };
  return def;
}

// Conv, MatMul: float32 only. Relu, Add, Reshape: float32 and float16. Cast: any.
KernelRegistry Registry() {
  KernelRegistry r;
  EXPECT_TRUE(r.Register(Def("Conv", {kF32})).ok());
  EXPECT_TRUE(r.Register(Def("MatMul", {kF32})).ok());
  EXPECT_TRUE(r.Register(Def("Relu", {kF32, kF16})).ok());
  EXPECT_TRUE(r.Register(Def("Add", {kF32, kF16})).ok());
  EXPECT_TRUE(r.Register(Def("Cast", {})).ok());
  return r;
}

void HalfWeight(ModelBuilder& b, const std::string& name, const std::vector<int64_t>& dims,
                DataType type, uint16_t bits) {
  onnx::TensorProto* t = b.RawInitializer();
  t->set_name(name);
  t->set_data_type(static_cast<int>(type));
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::vector<uint16_t> v(n, bits);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * 2));
}

std::shared_ptr<const Model> Load(const ModelBuilder& b) {
  absl::StatusOr<std::shared_ptr<const Model>> m = Model::Parse(b.Serialize(), "");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : nullptr;
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const Node* ProducerOf(const Graph& g, const std::string& value) {
  const int v = g.FindValue(value);
  if (v < 0 || g.values[v].producer < 0) return nullptr;
  return &g.nodes[g.values[v].producer];
}

int64_t CastTo(const Node& n) {
  for (const auto& a : n.attributes)
    if (a.name() == "to") return a.i();
  return -1;
}

TEST(PrecisionWideningTest, HalfConversions) {
  EXPECT_EQ(HalfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(HalfBitsToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(0x7e00)));
  EXPECT_EQ(BFloat16BitsToFloat(0x3f80), 1.0f);
  EXPECT_EQ(BFloat16BitsToFloat(0xc040), -3.0f);
}

// x(f16) -> Conv(w f16) -> c -> Relu -> y(f16): one float32 region, casts only at its edges.
TEST(PrecisionWideningTest, ConvReluRegionCastsAtItsEdgesAndConvertsTheWeight) {
  ModelBuilder b(17);
  b.Input("x", kF16, {1, 2, 4, 4}).Output("y", kF16, {1, 3, 4, 4});
  HalfWeight(b, "w", {3, 2, 1, 1}, kF16, 0x3c00);
  b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  b.Node("Relu", {"c"}, {"y"}, "relu");
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  Graph g = model->graph();
  KernelRegistry registry = Registry();
  DerivedWeights weights;
  absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->widened_nodes, 2);
  EXPECT_EQ(r->half_nodes, 0);
  EXPECT_EQ(r->casts_to_float, 1);
  EXPECT_EQ(r->casts_to_half, 1);
  EXPECT_EQ(r->converted_weights, 1);
  EXPECT_EQ(r->converted_weight_bytes, 6u * sizeof(float));
  EXPECT_EQ(weights.bytes(), 6u * sizeof(float));
  EXPECT_TRUE(g.Validate().ok());
  ASSERT_EQ(g.nodes.size(), 4u);

  const Node* conv = FindNode(g, "conv");
  ASSERT_NE(conv, nullptr);
  const Value& cx = g.values[conv->inputs[0]];
  const Value& cw = g.values[conv->inputs[1]];
  EXPECT_EQ(cx.type, kF32);
  EXPECT_EQ(cw.type, kF32);
  ASSERT_NE(cw.initializer, nullptr);
  EXPECT_EQ(cw.initializer->dtype(), kF32);
  EXPECT_EQ(cw.initializer->data<float>()[5], 1.0f);
  EXPECT_EQ(g.values[conv->outputs[0]].type, kF32);
  // x enters through a Cast to float; y leaves through a Cast back, keeping its declared type.
  const Node* in = ProducerOf(g, cx.name);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->op_type, "Cast");
  EXPECT_EQ(CastTo(*in), static_cast<int64_t>(kF32));
  EXPECT_EQ(g.values[in->inputs[0]].name, "x");
  const Node* out = ProducerOf(g, "y");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->op_type, "Cast");
  EXPECT_EQ(CastTo(*out), static_cast<int64_t>(kF16));
  EXPECT_EQ(g.values[g.FindValue("y")].type, kF16);
  EXPECT_EQ(g.values[g.outputs[0]].name, "y");
  const Node* relu = FindNode(g, "relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(g.values[relu->inputs[0]].type, kF32);
  EXPECT_EQ(g.values[relu->outputs[0]].type, kF32);
}

// A weight read by a widened Conv and by an Add that stays float16 (its other input is a graph
// input): the Add keeps the original weight, the Conv reads the float32 copy.
TEST(PrecisionWideningTest, WeightSharedBetweenHalfAndFloatConsumers) {
  ModelBuilder b(17);
  b.Input("x", kF16, {1, 1, 2, 2}).Input("z", kF16, {1, 1, 1, 1});
  b.Output("y", kF16, {1, 1, 2, 2}).Output("s", kF16, {1, 1, 1, 1});
  HalfWeight(b, "w", {1, 1, 1, 1}, kF16, 0x4000);
  b.Node("Conv", {"x", "w"}, {"y"}, "conv");
  b.Node("Add", {"z", "w"}, {"s"}, "add");
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  Graph g = model->graph();
  KernelRegistry registry = Registry();
  DerivedWeights weights;
  absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->widened_nodes, 1);
  EXPECT_EQ(r->half_nodes, 1);
  EXPECT_EQ(r->converted_weights, 1);
  const Node* add = FindNode(g, "add");
  const Node* conv = FindNode(g, "conv");
  ASSERT_TRUE(add != nullptr && conv != nullptr);
  EXPECT_EQ(g.values[add->inputs[1]].name, "w");
  EXPECT_EQ(g.values[add->inputs[1]].type, kF16);
  EXPECT_EQ(g.values[add->inputs[1]].initializer->dtype(), kF16);
  EXPECT_NE(g.values[conv->inputs[1]].name, "w");
  EXPECT_EQ(g.values[conv->inputs[1]].initializer->dtype(), kF32);
  EXPECT_EQ(g.values[conv->inputs[1]].initializer->data<float>()[0], 2.0f);
}

// MatMul's 2-D half weight stays half when the float32 kernel declares B a half-weight input (and
// a 3-D one, or a kernel without the declaration, or keep_half_weights off, converts it); Conv's
// weight is converted as before.
TEST(PrecisionWideningTest, ProductsKeepTheirHalfWeightsWhenTheKernelTakesThem) {
  ModelBuilder b(17);
  b.Input("x", kF16, {2, 4}).Input("x3", kF16, {2, 2, 4}).Input("xc", kF16, {1, 4, 1, 2});
  b.Output("y", kF16, {2, 3}).Output("y3", kF16, {2, 2, 3}).Output("yc", kF16, {1, 3, 1, 2});
  HalfWeight(b, "w", {4, 3}, kF16, 0x3c00);
  HalfWeight(b, "w3", {2, 4, 3}, kF16, 0x3c00);
  HalfWeight(b, "wc", {3, 4, 1, 1}, kF16, 0x3c00);
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.Node("MatMul", {"x3", "w3"}, {"y3"}, "mm3");
  b.Node("Conv", {"xc", "wc"}, {"yc"}, "conv");
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  for (bool declared : {true, false}) {
    for (bool keep : {true, false}) {
      SCOPED_TRACE(std::string(declared ? "declared" : "not declared") + (keep ? ", keep" : ""));
      KernelRegistry registry;
      KernelDef mm = Def("MatMul", {kF32});
      if (declared) mm.half_weight_inputs = {1};
      ASSERT_TRUE(registry.Register(mm).ok());
      ASSERT_TRUE(registry.Register(Def("Conv", {kF32})).ok());
      ASSERT_TRUE(registry.Register(Def("Cast", {})).ok());
      Graph g = model->graph();
      DerivedWeights weights;
      absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights, keep);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->widened_nodes, 3);
      const bool kept = declared && keep;
      EXPECT_EQ(r->half_weights, kept ? 1 : 0);
      EXPECT_EQ(r->half_weight_bytes, kept ? 12u * 2 : 0u);
      EXPECT_EQ(r->converted_weights, kept ? 2 : 3);
      EXPECT_TRUE(g.Validate().ok());
      const Node* node = FindNode(g, "mm");
      ASSERT_NE(node, nullptr);
      const Value& w = g.values[node->inputs[1]];
      EXPECT_EQ(w.type, kept ? kF16 : kF32);
      EXPECT_EQ(w.initializer->dtype(), kept ? kF16 : kF32);
      EXPECT_EQ(g.values[node->inputs[0]].type, kF32);  // A is the region's float32 twin
      const Node* node3 = FindNode(g, "mm3");
      ASSERT_NE(node3, nullptr);
      EXPECT_EQ(g.values[node3->inputs[1]].type, kF32);  // 3-D: converted
      if (kept) {
        EXPECT_NE(r->Summary().find("1 weights kept half for their products (24 bytes)"),
                  std::string::npos)
            << r->Summary();
      }
    }
  }
}

// An intermediate that is also a graph output: widened readers use the float32 twin, the output
// gets a Cast back; an op with no kernel for either type is left alone.
TEST(PrecisionWideningTest, HalfGraphOutputInsideARegionIsCastBack) {
  ModelBuilder b(17);
  b.Input("a", kBF16, {2, 3}).Input("bm", kBF16, {3, 2});
  b.Output("m", kBF16, {2, 2}).Output("y", kBF16, {2, 2}).Output("t", kBF16, {2, 2});
  b.Node("MatMul", {"a", "bm"}, {"m"}, "mm");
  b.Node("Relu", {"m"}, {"y"}, "relu");
  b.Node("Neg", {"m"}, {"t"}, "neg");  // no kernel at all here
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  Graph g = model->graph();
  KernelRegistry registry = Registry();
  DerivedWeights weights;
  absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->widened_nodes, 2);  // MatMul; Relu (both kernels, its input made in float32)
  EXPECT_EQ(r->half_nodes, 1);     // Neg
  EXPECT_EQ(r->casts_to_float, 2);
  EXPECT_EQ(r->casts_to_half, 2);  // m (graph output, read by Neg) and y
  EXPECT_EQ(r->converted_weights, 0);
  EXPECT_TRUE(g.Validate().ok());
  const Node* m = ProducerOf(g, "m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->op_type, "Cast");
  EXPECT_EQ(CastTo(*m), static_cast<int64_t>(kBF16));
  const Node* relu = FindNode(g, "relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(g.values[relu->inputs[0]].type, kF32);
  EXPECT_EQ(g.values[relu->inputs[0]].producer, g.values[m->inputs[0]].producer);
  const Node* neg = FindNode(g, "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(g.values[neg->inputs[0]].name, "m");
}

// Nothing half: the graph is untouched.
TEST(PrecisionWideningTest, FloatModelIsUntouched) {
  ModelBuilder b(17);
  b.Input("x", kF32, {2, 2}).Output("y", kF32, {2, 2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  Graph g = model->graph();
  KernelRegistry registry = Registry();
  DerivedWeights weights;
  absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->any_half());
  EXPECT_EQ(r->Summary(), "no float16/bfloat16 compute");
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.values.size(), model->graph().values.size());
}

// If branches are widened on their own: a MatMul reading an outer-scope float16 value gets its
// Cast inside the branch; the branch output keeps its type.
TEST(PrecisionWideningTest, IfBranchesAreWidened) {
  ModelBuilder b(17);
  b.Input("cond", DataType::kBool, {}).Input("x", kF16, {2, 2});
  b.Output("y", kF16, {2, 2});
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* sg = a->mutable_g();
    sg->set_name(branch);
    onnx::NodeProto* mm = sg->add_node();
    mm->set_op_type(std::string(branch) == "then_branch" ? "MatMul" : "Add");
    mm->set_name(std::string(branch) + "/op");
    mm->add_input("x");
    mm->add_input("x");
    mm->add_output(std::string(branch) + "_y");
    onnx::ValueInfoProto* out = sg->add_output();
    out->set_name(std::string(branch) + "_y");
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(kF16));
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto model = Load(b);
  ASSERT_NE(model, nullptr);
  Graph g = model->graph();
  KernelRegistry registry = Registry();
  DerivedWeights weights;
  absl::StatusOr<WideningReport> r = WidenHalfPrecision(g, registry, weights);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->widened_nodes, 1);  // then: MatMul; else: Add stays float16
  EXPECT_EQ(r->half_nodes, 2);     // the If (half output) and the Add
  EXPECT_EQ(r->casts_to_float, 1);
  EXPECT_EQ(r->casts_to_half, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Graph& then_g = *g.nodes[0].subgraphs.at("then_branch");
  const Graph& else_g = *g.nodes[0].subgraphs.at("else_branch");
  EXPECT_EQ(then_g.nodes.size(), 3u);
  EXPECT_EQ(else_g.nodes.size(), 1u);
  EXPECT_TRUE(then_g.Validate().ok());
  const Node* mm = FindNode(then_g, "then_branch/op");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->inputs[0], mm->inputs[1]);  // one Cast serves both readings of x
  EXPECT_EQ(then_g.values[mm->inputs[0]].type, kF32);
  const Value& out = then_g.values[then_g.outputs[0]];
  EXPECT_EQ(out.name, "then_branch_y");
  EXPECT_EQ(out.type, kF16);
  // The model's own branch is unchanged (the session's graph holds a widened copy).
  EXPECT_EQ(model->graph().nodes[0].subgraphs.at("then_branch")->nodes.size(), 1u);
}

TEST(PrecisionWideningTest, WidenRefusesOtherTypes) {
  DerivedWeights weights;
  float v = 1.0f;
  Tensor t = Tensor::Borrowed(kF32, Shape{1}, &v);
  EXPECT_FALSE(weights.Widen(t).ok());
}

}  // namespace
}  // namespace inferd::engine

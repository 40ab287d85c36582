#include "engine/rewrites.h"

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/domain.h"
#include "engine/testing/fake_kernel_def.h"
#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

KernelDef Def(const std::string& domain, const std::string& op) {
  return testing::FakeKernelDef(domain, op);
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
  DerivedWeights derived;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
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

// A bias read through Identity (as exporters write shared parameters) still fuses: the Identity
// of a weight is dropped and the Add reads the weight. An Identity that is a graph output stays.
TEST(RewritesTest, IdentityOfAWeightIsForwarded) {
  GraphBuilder b;
  b.Input("x", {2, 8}).Weight("w", {8, 4}).Weight("bias", {4});
  b.Node("/m/copy", "Identity", {"bias"}, {"bias_copy"}, {4});
  b.Node("/m/kept", "Identity", {"w"}, {"w_copy"}, {8, 4});
  b.Node("/m/mm", "MatMul", {"x", "w"}, {"t"}, {2, 4});
  b.Node("/m/add", "Add", {"t", "bias_copy"}, {"y"}, {2, 4});
  b.Output("y").Output("w_copy");
  Graph& g = b.graph();
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
  DerivedWeights derived;
  ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  for (const Node& n : g.nodes) {
    if (n.op_type == "FusedMatMul") EXPECT_EQ(g.values[n.inputs[2]].name, "bias");
    if (n.op_type == "Identity") EXPECT_EQ(n.name, "/m/kept");
  }
  EXPECT_TRUE(g.Validate().ok());
}

// x -> MatMul + Add (a Linear) -> GELU as torch exports it: Div by sqrt(2), Erf, Add 1, Mul by
// the input, Mul by 0.5. One FusedMatMul with activation "Gelu" remains, writing y.
TEST(RewritesTest, LinearThenGeluErfBecomesOneFusedMatMul) {
  for (bool half_first : {false, true}) {
    SCOPED_TRACE(half_first ? "(x * 0.5) * a" : "(x * a) * 0.5");
    GraphBuilder b;
    b.Input("x", {2, 8}).Weight("w", {8, 4}).Weight("bias", {4});
    for (const char* c : {"sqrt2", "one", "half"}) b.Weight(c, {});
    b.Node("/m/mm", "MatMul", {"x", "w"}, {"t"}, {2, 4});
    b.Node("/m/add", "Add", {"t", "bias"}, {"h"}, {2, 4});
    b.Node("/m/act/Div", "Div", {"h", "sqrt2"}, {"d"}, {2, 4});
    b.Node("/m/act/Erf", "Erf", {"d"}, {"e"}, {2, 4});
    b.Node("/m/act/Add", "Add", {"e", "one"}, {"a"}, {2, 4});
    if (half_first) {
      b.Node("/m/act/Mul", "Mul", {"h", "half"}, {"m"}, {2, 4});
      b.Node("/m/act/Mul_1", "Mul", {"m", "a"}, {"y"}, {2, 4});
    } else {
      b.Node("/m/act/Mul", "Mul", {"h", "a"}, {"m"}, {2, 4});
      b.Node("/m/act/Mul_1", "Mul", {"m", "half"}, {"y"}, {2, 4});
    }
    b.Output("y");
    Graph& g = b.graph();
    const float sqrt2 = 1.4142135f, one = 1.0f, half = 0.5f;
    std::deque<Tensor> scalars;
    for (const auto& [name, value] :
         {std::pair<const char*, const float*>{"sqrt2", &sqrt2}, {"one", &one}, {"half", &half}}) {
      scalars.push_back(Tensor::Borrowed(DataType::kFloat32, Shape{}, value));
      g.values[g.FindValue(name)].initializer = &scalars.back();
    }
    KernelRegistry registry;
    ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
    DerivedWeights derived;
    ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), 2);
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node& f = g.nodes[0];
    EXPECT_EQ(f.op_type, "FusedMatMul");
    EXPECT_EQ(f.name, std::string("/m/mm") + kMatMulAddSuffix);
    EXPECT_EQ(g.values[f.outputs[0]].name, "y");
    ASSERT_FALSE(f.attributes.empty());
    EXPECT_EQ(f.attributes.back().name(), "activation");
    EXPECT_EQ(f.attributes.back().s(), "Gelu");
    EXPECT_TRUE(g.Validate().ok());
  }
}

// A GELU whose input no FusedMatMul writes (here an Add of two inputs, as after a quantized
// model's MatMulInteger) becomes one com.microsoft Gelu named after its Erf, reading h and
// writing y; without a Gelu kernel it stays as it is.
TEST(RewritesTest, GeluErfAfterAnythingBecomesOneGelu) {
  for (bool with_kernel : {true, false}) {
    SCOPED_TRACE(with_kernel ? "Gelu registered" : "no Gelu kernel");
    GraphBuilder b;
    b.Input("p", {2, 4}).Input("q", {2, 4});
    for (const char* c : {"inv_sqrt2", "one", "half"}) b.Weight(c, {});
    b.Node("/m/add", "Add", {"p", "q"}, {"h"}, {2, 4});
    b.Node("/m/act/Mul_s", "Mul", {"h", "inv_sqrt2"}, {"d"}, {2, 4});
    b.Node("/m/act/Erf", "Erf", {"d"}, {"e"}, {2, 4});
    b.Node("/m/act/Add", "Add", {"e", "one"}, {"a"}, {2, 4});
    b.Node("/m/act/Mul", "Mul", {"h", "a"}, {"m"}, {2, 4});
    b.Node("/m/act/Mul_1", "Mul", {"m", "half"}, {"y"}, {2, 4});
    b.Output("y");
    Graph& g = b.graph();
    const float inv_sqrt2 = 0.70710678f, one = 1.0f, half = 0.5f;
    std::deque<Tensor> scalars;
    for (const auto& [name, value] : {std::pair<const char*, const float*>{"inv_sqrt2", &inv_sqrt2},
                                      {"one", &one},
                                      {"half", &half}}) {
      scalars.push_back(Tensor::Borrowed(DataType::kFloat32, Shape{}, value));
      g.values[g.FindValue(name)].initializer = &scalars.back();
    }
    KernelRegistry registry;
    ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
    if (with_kernel) ASSERT_TRUE(registry.Register(Def(kMicrosoftDomain, "Gelu")).ok());
    DerivedWeights derived;
    ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), with_kernel ? 1 : 0);
    ASSERT_EQ(g.nodes.size(), with_kernel ? 2u : 6u);
    if (!with_kernel) continue;
    const Node& gelu = g.nodes[1];
    EXPECT_EQ(gelu.op_type, "Gelu");
    EXPECT_EQ(gelu.domain, kMicrosoftDomain);
    EXPECT_EQ(gelu.name, std::string("/m/act/Erf") + kGeluSuffix);
    ASSERT_EQ(gelu.inputs.size(), 1u);
    EXPECT_EQ(g.values[gelu.inputs[0]].name, "h");
    EXPECT_EQ(g.values[gelu.outputs[0]].name, "y");
    EXPECT_TRUE(g.Validate().ok());
  }
}

// quantize_dynamic's MatMul: MatMulInteger -> Cast(float) -> Mul(a_scale * b_scale) [-> Add
// bias] becomes one MatMulIntegerToFloat named after the MatMulInteger, whichever order the scales'
// Mul has; without the Add the Mul's output is the fused node's.
TEST(RewritesTest, MatMulIntegerCastMulBecomesMatMulIntegerToFloat) {
  for (bool with_bias : {true, false}) {
    SCOPED_TRACE(with_bias ? "with the bias Add" : "no bias");
    GraphBuilder b;
    b.Input("a_q", {2, 8}).Input("a_zp", {}).Input("a_scale", {});
    b.Weight("b", {8, 4}).Weight("b_zp", {}).Weight("b_scale", {4}).Weight("bias", {4});
    b.Node("/m/MatMul_quant", "MatMulInteger", {"a_q", "b", "a_zp", "b_zp"}, {"t"}, {2, 4});
    const int cast = b.Node("/m/cast", "Cast", {"t"}, {"c"}, {2, 4});
    if (with_bias) {
      b.Node("/m/scales", "Mul", {"a_scale", "b_scale"}, {"s"}, {4});
      b.Node("/m/mul", "Mul", {"c", "s"}, {"m"}, {2, 4});
      b.Node("/m/add", "Add", {"bias", "m"}, {"y"}, {2, 4});
      b.Output("y");
    } else {
      b.Node("/m/scales", "Mul", {"b_scale", "a_scale"}, {"s"}, {4});
      b.Node("/m/mul", "Mul", {"s", "c"}, {"m"}, {2, 4});
      b.Output("m");
    }
    Graph& g = b.graph();
    onnx::AttributeProto to;
    to.set_name("to");
    to.set_type(onnx::AttributeProto::INT);
    to.set_i(1);  // float
    g.nodes[cast].attributes.push_back(to);
    KernelRegistry registry;
    ASSERT_TRUE(registry.Register(Def(kMicrosoftDomain, "MatMulIntegerToFloat")).ok());
    DerivedWeights derived;
    ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), 1);
    ASSERT_EQ(g.nodes.size(), 1u);
    const Node& f = g.nodes[0];
    EXPECT_EQ(f.op_type, "MatMulIntegerToFloat");
    EXPECT_EQ(f.domain, kMicrosoftDomain);
    EXPECT_EQ(f.name, std::string("/m/MatMul_quant") + kMatMulIntegerToFloatSuffix);
    std::vector<std::string> inputs;
    for (int v : f.inputs) inputs.push_back(v < 0 ? "" : g.values[v].name);
    std::vector<std::string> want = {"a_q", "b", "a_scale", "b_scale", "a_zp", "b_zp"};
    if (with_bias) want.push_back("bias");
    EXPECT_EQ(inputs, want);
    EXPECT_EQ(g.values[f.outputs[0]].name, with_bias ? "y" : "m");
    EXPECT_TRUE(g.Validate().ok());
  }
}

// x -> Pad(constant 0, pads over H and W) -> Conv(pads 1,0,0,1): the Pad folds into the Conv,
// which reads x and keeps its name; without Conv's kernel registered nothing else changes.
TEST(RewritesTest, ZeroPadFoldsIntoTheConvsPads) {
  GraphBuilder b;
  b.Input("x", {1, 2, 5, 5}).Weight("w", {3, 2, 3, 3}).Weight("pads", {8});
  b.Node("/m/pad", "Pad", {"x", "pads"}, {"p"}, {1, 2, 7, 8});
  const int conv = b.Node("/m/conv", "Conv", {"p", "w"}, {"y"}, {1, 3, 5, 6});
  b.Output("y");
  Graph& g = b.graph();
  const int64_t pads[] = {0, 0, 1, 2, 0, 0, 1, 1};
  Tensor pads_tensor = Tensor::Borrowed(DataType::kInt64, Shape{8}, pads);
  g.values[g.FindValue("pads")].initializer = &pads_tensor;
  g.values[g.FindValue("pads")].type = DataType::kInt64;
  onnx::AttributeProto own;
  own.set_name("pads");
  own.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {1, 0, 0, 1}) own.add_ints(v);
  g.nodes[conv].attributes.push_back(own);
  KernelRegistry registry;
  DerivedWeights derived;
  ASSERT_EQ(ApplyFusions(g, registry, derived).value_or(-1), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& c = g.nodes[0];
  EXPECT_EQ(c.name, "/m/conv");
  EXPECT_EQ(g.values[c.inputs[0]].name, "x");
  const onnx::AttributeProto* merged = nullptr;
  for (const onnx::AttributeProto& a : c.attributes) {
    if (a.name() == "pads") merged = &a;
  }
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(std::vector<int64_t>(merged->ints().begin(), merged->ints().end()),
            (std::vector<int64_t>{2, 2, 1, 2}));  // H begin, W begin, H end, W end
  EXPECT_TRUE(g.Validate().ok());
}

TEST(RewritesTest, NoFusionWithoutAKernelForTheFusedOp) {
  MatMulAdd m;
  KernelRegistry registry;
  DerivedWeights derived;
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 0);
  EXPECT_EQ(m.g->nodes.size(), 2u);
}

TEST(RewritesTest, NoFusionWhenTheIntermediateIsAGraphOutputOrDevicesDiffer) {
  KernelRegistry registry;
  DerivedWeights derived;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedMatMul")).ok());
  MatMulAdd out(/*t_is_output=*/true);
  EXPECT_EQ(ApplyFusions(*out.g, registry, derived).value_or(-1), 0);
  MatMulAdd split;
  split.g->nodes[1].device = "cpu:1";
  EXPECT_EQ(ApplyFusions(*split.g, registry, derived).value_or(-1), 0);
}

// x[1,2,2,2] -> Conv(w[2,2,1,1], b[2]) -> c -> BatchNormalization -> t -> LeakyRelu -> y, with
// real weights: the BN folds into new conv weights, then the activation fuses.
TEST(RewritesTest, ConvBatchNormFoldsThenTheActivationFuses) {
  GraphBuilder b;
  b.Input("x", {1, 2, 2, 2}).Weight("w", {2, 2, 1, 1}).Weight("b", {2});
  for (const char* n : {"scale", "shift", "mean", "var"}) b.Weight(n, {2});
  b.Node("/m/conv", "Conv", {"x", "w", "b"}, {"c"}, {1, 2, 2, 2});
  b.Node("/m/bn", "BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"t"},
         {1, 2, 2, 2});
  const int act = b.Node("/m/act", "LeakyRelu", {"t"}, {"y"}, {1, 2, 2, 2});
  b.Output("y");
  Graph& g = b.graph();
  g.nodes[act].attributes.push_back(onnx::AttributeProto());
  g.nodes[act].attributes.back().set_name("alpha");
  g.nodes[act].attributes.back().set_type(onnx::AttributeProto::FLOAT);
  g.nodes[act].attributes.back().set_f(0.25f);
  const std::map<std::string, std::vector<float>> data = {
      {"w", {1, 2, 3, 4}}, {"b", {0.5f, -1}},   {"scale", {2, 3}},
      {"shift", {1, -2}},  {"mean", {0.5f, 1}}, {"var", {4 - 1e-5f, 9 - 1e-5f}}};
  std::deque<Tensor> tensors;
  for (const auto& [name, values] : data) {
    Value& v = g.values[g.FindValue(name)];
    tensors.push_back(Tensor::Borrowed(DataType::kFloat32, v.initializer->shape(), values.data()));
    v.initializer = &tensors.back();
  }
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(Def(kInferdDomain, "FusedConv")).ok());
  DerivedWeights derived;
  absl::StatusOr<int> fused = ApplyFusions(g, registry, derived);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 2);  // the fold and the activation
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& f = g.nodes[0];
  EXPECT_EQ(f.op_type, "FusedConv");
  EXPECT_EQ(f.name, std::string("/m/conv") + kConvActivationSuffix);
  EXPECT_EQ(g.values[f.outputs[0]].name, "y");
  ASSERT_EQ(f.inputs.size(), 3u);
  EXPECT_EQ(g.values[f.inputs[1]].name, std::string("w") + kConvBatchNormSuffix);
  // f = scale / sqrt(var + 1e-5) = {1, 1}; W' = W f; B' = (b - mean) f + shift.
  const Tensor* w = g.values[f.inputs[1]].initializer;
  const Tensor* bias = g.values[f.inputs[2]].initializer;
  ASSERT_NE(w, nullptr);
  ASSERT_NE(bias, nullptr);
  const float* wd = w->data<float>();
  const float* bd = bias->data<float>();
  EXPECT_NEAR(wd[0], 1.0f, 1e-5f);
  EXPECT_NEAR(wd[3], 4.0f, 1e-5f);
  EXPECT_NEAR(bd[0], 1.0f, 1e-5f);   // (0.5 - 0.5) * 1 + 1
  EXPECT_NEAR(bd[1], -4.0f, 1e-5f);  // (-1 - 1) * 1 - 2
  EXPECT_EQ(derived.count(), 2u);
  EXPECT_EQ(derived.bytes(), 6 * sizeof(float));
  bool alpha = false;
  for (const onnx::AttributeProto& a : f.attributes) {
    if (a.name() == "activation") EXPECT_EQ(a.s(), "LeakyRelu");
    if (a.name() == "activation_params") {
      alpha = true;
      ASSERT_EQ(a.floats_size(), 1);
      EXPECT_FLOAT_EQ(a.floats(0), 0.25f);
    }
  }
  EXPECT_TRUE(alpha);
  EXPECT_TRUE(g.Validate().ok());
}

// x[2,8] -> Q -> DQ -> MatMul(., DQ(wq[8,4] int8)) -> h [-> Q -> y uint8]. The builder's
// weights have no data: the QDQ parameters get real constants here.
struct QdqMatMul {
  GraphBuilder b;
  Graph* g;
  float scale = 0.1f;
  uint8_t u8_zp = 128;
  int8_t s8_zp = 0;
  int8_t w[32] = {};
  Tensor xs, xz, wq, ws, wz;
  explicit QdqMatMul(bool requant, bool constant_w = true) {
    b.Input("x", {2, 8});
    b.Weight("xs", {}).Weight("xz", {}).Weight("ws", {}).Weight("wz", {}).Weight("ys", {});
    b.Weight("yz", {});
    if (constant_w) {
      b.Weight("wq", {8, 4});
    } else {
      b.Input("wq", {8, 4});
    }
    b.Node("/m/qx", "QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, {2, 8});
    b.Node("/m/dqx", "DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}, {2, 8});
    b.Node("/m/dqw", "DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, {8, 4});
    b.Node("/m/mm", "MatMul", {"xd", "wd"}, {requant ? "h" : "y"}, {2, 4});
    if (requant) b.Node("/m/qy", "QuantizeLinear", {"h", "ys", "yz"}, {"y"}, {2, 4});
    b.Output("y");
    g = &b.graph();
    xs = Tensor::Borrowed(DataType::kFloat32, Shape{}, &scale);
    xz = Tensor::Borrowed(DataType::kUint8, Shape{}, &u8_zp);
    wq = Tensor::Borrowed(DataType::kInt8, Shape{8, 4}, w);
    wz = Tensor::Borrowed(DataType::kInt8, Shape{}, &s8_zp);
    Set("xs", &xs);
    Set("ys", &xs);
    Set("ws", &xs);
    Set("xz", &xz);
    Set("yz", &xz);
    Set("wz", &wz);
    if (constant_w) Set("wq", &wq);
    g->values[g->FindValue("xq")].type = DataType::kUint8;
    g->values[g->FindValue("wq")].type = DataType::kInt8;
    if (requant) g->values[g->FindValue("y")].type = DataType::kUint8;
  }
  void Set(const std::string& name, const Tensor* t) {
    Value& v = g->values[g->FindValue(name)];
    v.initializer = t;
    v.type = t->dtype();
  }
};

KernelRegistry QdqRegistry() {
  KernelRegistry registry;
  EXPECT_TRUE(registry.Register(Def(kOnnxDomain, "QLinearMatMul")).ok());
  EXPECT_TRUE(registry.Register(Def(kMicrosoftDomain, "MatMulIntegerToFloat")).ok());
  return registry;
}

TEST(RewritesTest, QdqMatMulBecomesQLinearMatMul) {
  QdqMatMul m(/*requant=*/true);
  KernelRegistry registry = QdqRegistry();
  DerivedWeights derived;
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(m.g->nodes.size(), 2u);  // the QuantizeLinear of x stays
  const Node& f = m.g->nodes[1];
  EXPECT_EQ(f.name, std::string("/m/mm") + kQdqSuffix);
  EXPECT_EQ(f.op_type, "QLinearMatMul");
  const char* want[] = {"xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"};
  ASSERT_EQ(f.inputs.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m.g->values[f.inputs[i]].name, want[i]) << i;
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
  EXPECT_TRUE(m.g->Validate().ok());
}

TEST(RewritesTest, QdqMatMulWithoutQuantizeBecomesMatMulIntegerToFloat) {
  QdqMatMul m(/*requant=*/false);
  KernelRegistry registry = QdqRegistry();
  DerivedWeights derived;
  ASSERT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 1);
  ASSERT_EQ(m.g->nodes.size(), 2u);
  const Node& f = m.g->nodes[1];
  EXPECT_EQ(f.op_type, "MatMulIntegerToFloat");
  EXPECT_EQ(f.domain, kMicrosoftDomain);
  const char* want[] = {"xq", "wq", "xs", "ws", "xz", "wz"};
  ASSERT_EQ(f.inputs.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m.g->values[f.inputs[i]].name, want[i]) << i;
}

TEST(RewritesTest, NoQdqFusionWhenTheWeightsAreNotConstant) {
  QdqMatMul m(/*requant=*/true, /*constant_w=*/false);
  KernelRegistry registry = QdqRegistry();
  DerivedWeights derived;
  EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  EXPECT_EQ(m.g->nodes.size(), 5u);
}

// x[2,8] -> Q -> DQ -> Gemm(., DQ(wq[4,8] int8), DQ(bq[4] int32), transB=1) [-> Q -> y uint8]
// (the form quantize_static writes for a Linear layer).
struct QdqGemm {
  GraphBuilder b;
  Graph* g;
  float scale = 0.1f, bias_scale = 0.1f * 0.1f;
  uint8_t u8_zp = 128;
  int8_t s8_zp = 0;
  int32_t s32_zp = 0;
  int8_t w[32] = {};
  int32_t bias[4] = {1, -2, 3, -4};
  float float_bias[4] = {0.5f, -1.0f, 2.0f, 0.0f};
  Tensor xs, xz, wq, wz, bq, bs, bz, bf;
  // float_bias: the Gemm reads a float32 constant bias instead of DequantizeLinear(bq).
  explicit QdqGemm(bool requant, float alpha = 1.0f, bool use_float_bias = false) {
    b.Input("x", {2, 8});
    b.Weight("xs", {}).Weight("xz", {}).Weight("wz", {}).Weight("ys", {}).Weight("yz", {});
    b.Weight("wq", {4, 8}).Weight("bq", {4}).Weight("bs", {}).Weight("bz", {}).Weight("bf", {4});
    b.Node("/fc/qx", "QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, {2, 8});
    b.Node("/fc/dqx", "DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}, {2, 8});
    b.Node("/fc/dqw", "DequantizeLinear", {"wq", "xs", "wz"}, {"wd"}, {4, 8});
    if (!use_float_bias) b.Node("/fc/dqb", "DequantizeLinear", {"bq", "bs", "bz"}, {"bd"}, {4});
    const int gemm = b.Node("/fc/gemm", "Gemm", {"xd", "wd", use_float_bias ? "bf" : "bd"},
                            {requant ? "h" : "y"}, {2, 4});
    if (requant) b.Node("/fc/qy", "QuantizeLinear", {"h", "ys", "yz"}, {"y"}, {2, 4});
    b.Output("y");
    g = &b.graph();
    onnx::AttributeProto trans_b;
    trans_b.set_name("transB");
    trans_b.set_type(onnx::AttributeProto::INT);
    trans_b.set_i(1);
    g->nodes[gemm].attributes.push_back(trans_b);
    if (alpha != 1.0f) {
      onnx::AttributeProto a;
      a.set_name("alpha");
      a.set_type(onnx::AttributeProto::FLOAT);
      a.set_f(alpha);
      g->nodes[gemm].attributes.push_back(a);
    }
    xs = Tensor::Borrowed(DataType::kFloat32, Shape{}, &scale);
    xz = Tensor::Borrowed(DataType::kUint8, Shape{}, &u8_zp);
    wq = Tensor::Borrowed(DataType::kInt8, Shape{4, 8}, w);
    wz = Tensor::Borrowed(DataType::kInt8, Shape{}, &s8_zp);
    bq = Tensor::Borrowed(DataType::kInt32, Shape{4}, bias);
    bs = Tensor::Borrowed(DataType::kFloat32, Shape{}, &bias_scale);
    bz = Tensor::Borrowed(DataType::kInt32, Shape{}, &s32_zp);
    bf = Tensor::Borrowed(DataType::kFloat32, Shape{4}, float_bias);
    for (const auto& [name, t] : std::map<std::string, const Tensor*>{{"xs", &xs},
                                                                      {"ys", &xs},
                                                                      {"xz", &xz},
                                                                      {"yz", &xz},
                                                                      {"wq", &wq},
                                                                      {"wz", &wz},
                                                                      {"bq", &bq},
                                                                      {"bs", &bs},
                                                                      {"bz", &bz},
                                                                      {"bf", &bf}}) {
      Value& v = g->values[g->FindValue(name)];
      v.initializer = t;
      v.type = t->dtype();
    }
    g->values[g->FindValue("xq")].type = DataType::kUint8;
    if (requant) g->values[g->FindValue("y")].type = DataType::kUint8;
  }
};

KernelRegistry QGemmRegistry() {
  KernelRegistry registry;
  EXPECT_TRUE(registry.Register(Def(kMicrosoftDomain, "QGemm")).ok());
  return registry;
}

TEST(RewritesTest, QdqGemmBecomesQGemmWithTheInt32BiasAsC) {
  QdqGemm m(/*requant=*/true);
  KernelRegistry registry = QGemmRegistry();
  DerivedWeights derived;
  absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  ASSERT_EQ(m.g->nodes.size(), 2u);  // the QuantizeLinear of x stays
  const Node& f = m.g->nodes[1];
  EXPECT_EQ(f.name, std::string("/fc/gemm") + kQdqSuffix);
  EXPECT_EQ(f.op_type, "QGemm");
  EXPECT_EQ(f.domain, kMicrosoftDomain);
  const char* want[] = {"xq", "xs", "xz", "wq", "xs", "wz", "bq", "ys", "yz"};
  ASSERT_EQ(f.inputs.size(), 9u);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(m.g->values[f.inputs[i]].name, want[i]) << i;
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
  ASSERT_EQ(f.attributes.size(), 1u);
  EXPECT_EQ(f.attributes[0].name(), "transB");
  EXPECT_EQ(f.attributes[0].i(), 1);
  EXPECT_TRUE(m.g->Validate().ok());
}

TEST(RewritesTest, QdqGemmWithoutQuantizeBecomesFloatOutputQGemm) {
  QdqGemm m(/*requant=*/false);
  KernelRegistry registry = QGemmRegistry();
  DerivedWeights derived;
  ASSERT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 1);
  ASSERT_EQ(m.g->nodes.size(), 2u);
  const Node& f = m.g->nodes[1];
  EXPECT_EQ(f.op_type, "QGemm");
  ASSERT_EQ(f.inputs.size(), 7u);  // no y_scale / y_zero_point: float Y
  EXPECT_EQ(m.g->values[f.inputs[6]].name, "bq");
  EXPECT_EQ(m.g->values[f.outputs[0]].name, "y");
}

// quantize_static leaves a last Gemm's float bias as it is: QGemm (float Y) + Add(bias), the
// QuantizeLinear after it (if any) staying.
TEST(RewritesTest, QdqGemmWithAFloatBiasBecomesQGemmThenAdd) {
  for (bool requant : {false, true}) {
    QdqGemm m(requant, /*alpha=*/1.0f, /*use_float_bias=*/true);
    KernelRegistry registry = QGemmRegistry();
    DerivedWeights derived;
    absl::StatusOr<int> fused = ApplyFusions(*m.g, registry, derived);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(*fused, 1);
    // Q(x), QGemm, Add [, Q(h)].
    ASSERT_EQ(m.g->nodes.size(), requant ? 4u : 3u);
    const Node& q = m.g->nodes[1];
    const Node& add = m.g->nodes[2];
    EXPECT_EQ(q.op_type, "QGemm");
    EXPECT_EQ(q.name, std::string("/fc/gemm") + kQdqSuffix);
    ASSERT_EQ(q.inputs.size(), 6u);
    EXPECT_EQ(m.g->values[q.inputs[3]].name, "wq");
    EXPECT_EQ(add.op_type, "Add");
    EXPECT_EQ(OriginalNodeName(add.name), "/fc/gemm");
    ASSERT_EQ(add.inputs.size(), 2u);
    EXPECT_EQ(add.inputs[0], q.outputs[0]);
    EXPECT_EQ(m.g->values[add.inputs[1]].name, "bf");
    EXPECT_EQ(m.g->values[add.outputs[0]].name, requant ? "h" : "y");
    EXPECT_EQ(m.g->values[q.outputs[0]].type, DataType::kFloat32);
    EXPECT_TRUE(m.g->Validate().ok());
  }
}

TEST(RewritesTest, NoQdqGemmFusionWithAlphaOrAMismatchedBiasScale) {
  {
    QdqGemm m(/*requant=*/true, /*alpha=*/0.5f);
    KernelRegistry registry = QGemmRegistry();
    DerivedWeights derived;
    EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  }
  {
    QdqGemm m(/*requant=*/true);
    m.bias_scale = 0.02f;  // not x_scale * w_scale
    KernelRegistry registry = QGemmRegistry();
    DerivedWeights derived;
    EXPECT_EQ(ApplyFusions(*m.g, registry, derived).value_or(-1), 0);
  }
}

}  // namespace
}  // namespace inferd::engine

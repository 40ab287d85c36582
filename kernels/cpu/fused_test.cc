// The com.inferd fusions against the unfused pairs they replace: FusedMatMul == MatMul then Add
// (bias over the last dimension), FusedConv == Conv then its activation (Relu, LeakyRelu, Elu,
// HardSigmoid, HardSwish, Sigmoid, Tanh, Clip; Conv alone for activation "").
// Also their errors and workspace estimates.
#include "engine/kernel_registry.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::kInferdDomain;
using engine::Shape;
using engine::Tensor;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

// Runs a single-output node and returns output 0's values (and shape).
std::vector<float> RunOne(KernelTester& t, Shape* shape = nullptr) {
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  if (shape != nullptr) *shape = (*out)[0].shape();
  return Values<float>((*out)[0]);
}

void CheckFusedMatMul(const Shape& as, const Shape& bs, const Shape& bias_shape, bool constant_b,
                      int threads) {
  SCOPED_TRACE(as.ToString() + " x " + bs.ToString() + " + " + bias_shape.ToString());
  const auto a = RandomFloats(as.NumElements(), 1), b = RandomFloats(bs.NumElements(), 2);
  const auto bias = RandomFloats(bias_shape.NumElements(), 3);
  // Unfused: MatMul, then Add.
  KernelTester matmul("MatMul", 13);
  matmul.Input<float>(as, a).Input<float>(bs, b).Threads(threads);
  Shape product_shape;
  const auto product = RunOne(matmul, &product_shape);
  KernelTester add("Add", 14);
  add.Input<float>(product_shape, product).Input<float>(bias_shape, bias);
  Shape expected_shape;
  const auto expected = RunOne(add, &expected_shape);
  // Fused.
  KernelTester fused("FusedMatMul", 1, kInferdDomain);
  fused.Input<float>(as, a).Input<float>(bs, b, constant_b).Input<float>(bias_shape, bias, true);
  fused.Threads(threads);
  Shape shape;
  ExpectNear(RunOne(fused, &shape), expected, 1e-5f);
  EXPECT_EQ(shape, expected_shape);

  KernelTester spec("FusedMatMul", 1, kInferdDomain);
  spec.Input(TestTensor::Of<float>(as, a))
      .Input(TestTensor::Of<float>(bs, b), true, constant_b)
      .Input(TestTensor::Of<float>(bias_shape, bias), true, true)
      .Threads(threads);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, fused.workspace_bytes_declared());
}

TEST(FusedMatMulTest, EqualsMatMulThenAdd) {
  for (int threads : {1, 2}) {
    for (bool constant_b : {false, true}) {
      CheckFusedMatMul({4, 8}, {8, 16}, {16}, constant_b, threads);
      CheckFusedMatMul({2, 3, 8}, {8, 5}, {5}, constant_b, threads);
      CheckFusedMatMul({2, 3, 8}, {2, 8, 5}, {1, 5}, constant_b, threads);
      CheckFusedMatMul({64, 256}, {256, 192}, {192}, constant_b, threads);
      CheckFusedMatMul({8}, {8, 6}, {6}, constant_b, threads);                // 1-D A
      CheckFusedMatMul({1, 1, 256}, {256, 700}, {700}, constant_b, threads);  // one row
    }
  }
}

TEST(FusedMatMulTest, KZeroIsTheBias) {
  KernelTester t("FusedMatMul", 1, kInferdDomain);
  t.Input<float>({2, 0}, {}).Input<float>({0, 3}, {}).Input<float>({3}, {1, 2, 3});
  EXPECT_EQ(RunOne(t), (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

// FusedMatMul with a GELU activation (the fusion of an exported GELU after a Linear) equals
// MatMul, Add, then ONNX's Gelu (opset 20) in the same form; K == 0 activates the bias.
TEST(FusedMatMulTest, GeluActivations) {
  for (const char* form : {"Gelu", "GeluTanh"}) {
    SCOPED_TRACE(form);
    // Rows against constant weights (the primitive's eltwise post-op); one row against weights
    // that are not (the row product, the activation applied after it).
    for (const auto& [as, constant_b] :
         {std::pair(Shape{3, 37, 64}, true), std::pair(Shape{1, 64}, false)}) {
      for (int threads : {1, 2}) {
        const Shape bs{64, 96}, bias_shape{96};
        const auto a = RandomFloats(as.NumElements(), 7), b = RandomFloats(bs.NumElements(), 8);
        const auto bias = RandomFloats(96, 9);
        KernelTester plain("FusedMatMul", 1, kInferdDomain);
        plain.Input<float>(as, a).Input<float>(bs, b, true).Input<float>(bias_shape, bias, true);
        Shape shape;
        const auto linear = RunOne(plain, &shape);
        KernelTester gelu("Gelu", 20);
        gelu.Attr("approximate", std::string(std::string(form) == "Gelu" ? "none" : "tanh"));
        gelu.Input<float>(shape, linear);
        const auto expected = RunOne(gelu);
        KernelTester fused("FusedMatMul", 1, kInferdDomain);
        fused.Attr("activation", std::string(form)).Threads(threads);
        fused.Input<float>(as, a)
            .Input<float>(bs, b, constant_b)
            .Input<float>(bias_shape, bias, true);
        ExpectNear(RunOne(fused), expected, 2e-5f);
      }
    }
  }
  KernelTester empty("FusedMatMul", 1, kInferdDomain);
  empty.Attr("activation", std::string("Gelu"));
  empty.Input<float>({1, 0}, {}).Input<float>({0, 2}, {}).Input<float>({2}, {1.0f, -1.0f});
  ExpectNear(RunOne(empty), {0.841345f, -0.158655f}, 1e-5f);
}

// FusedMatMul without a bias and with `alpha` (MatMul then a scalar Mul or Div, fused) equals
// the product scaled; alpha with a bias is refused (oneDNN does not fix their order).
TEST(FusedMatMulTest, AlphaScalesTheProduct) {
  // Batched rows (the primitive's output scale), and one row (the row product scales inside
  // dnnl_sgemm).
  for (const auto& [as, bs] : {std::pair(Shape{2, 3, 17, 16}, Shape{2, 3, 16, 17}),
                               std::pair(Shape{1, 16}, Shape{16, 300})}) {
    SCOPED_TRACE(as.ToString() + " x " + bs.ToString());
    const auto a = RandomFloats(as.NumElements(), 10), b = RandomFloats(bs.NumElements(), 11);
    KernelTester matmul("MatMul", 13);
    matmul.Input<float>(as, a).Input<float>(bs, b);
    std::vector<float> expected = RunOne(matmul);
    for (float& v : expected) v *= 0.125f;
    for (int threads : {1, 2}) {
      KernelTester fused("FusedMatMul", 1, kInferdDomain);
      fused.Attr("alpha", 0.125f).Threads(threads).Input<float>(as, a).Input<float>(bs, b);
      ExpectNear(RunOne(fused), expected, 1e-5f);
    }
  }
  KernelTester both("FusedMatMul", 1, kInferdDomain);
  both.Attr("alpha", 0.5f)
      .Input<float>({2, 4}, std::vector<float>(8))
      .Input<float>({4, 3}, std::vector<float>(12))
      .Input<float>({3}, std::vector<float>(3));
  auto refused = both.Run(CpuRegistry());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("alpha with a bias is not supported"),
            std::string::npos)
      << refused.status();
}

TEST(FusedMatMulTest, BadBias) {
  KernelTester t("FusedMatMul", 1, kInferdDomain);
  t.Input<float>({2, 4}, std::vector<float>(8))
      .Input<float>({4, 3}, std::vector<float>(12))
      .Input<float>({2, 1}, std::vector<float>(2));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("node 'test_FusedMatMul' (FusedMatMul): bias has shape "
                                        "[2,1] but must broadcast over the last dimension"),
            std::string::npos)
      << out.status();
}

// An activation FusedConv applies, and the op it replaces (engine/rewrites.h).
struct Activation {
  std::string op;  // "" for none
  std::vector<float> params;
};

// `values` after the unfused activation op.
std::vector<float> RunActivation(const Activation& act, const Shape& shape,
                                 const std::vector<float>& values) {
  if (act.op.empty()) return values;
  if (act.op == "Silu") {  // Sigmoid, then the product
    std::vector<float> y = RunActivation({"Sigmoid"}, shape, values);
    for (size_t i = 0; i < y.size(); ++i) y[i] *= values[i];
    return y;
  }
  const bool clip = act.op == "Clip";
  KernelTester t(act.op, act.op == "HardSwish" ? 14 : clip ? 13 : 6);
  t.Input<float>(shape, values);
  if (clip) {
    t.Input<float>(Shape{}, {act.params[0]}).Input<float>(Shape{}, {act.params[1]});
  } else if (act.op == "HardSigmoid") {
    t.Attr("alpha", act.params[0]).Attr("beta", act.params[1]);
  } else if (!act.params.empty()) {
    t.Attr("alpha", act.params[0]);
  }
  return RunOne(t);
}

void CheckFusedConv(const Activation& act, bool with_bias, bool constant_w, int threads) {
  SCOPED_TRACE("activation '" + act.op + "' bias " + std::to_string(with_bias));
  const Shape xs{2, 8, 13, 11}, ws{12, 4, 3, 3};
  const auto x = RandomFloats(xs.NumElements(), 4), w = RandomFloats(ws.NumElements(), 5);
  const auto b = RandomFloats(12, 6);
  auto attrs = [&](KernelTester& t) {
    t.Attr("group", int64_t{2})
        .Attr("strides", std::vector<int64_t>{2, 1})
        .Attr("pads", std::vector<int64_t>{1, 0, 1, 2})
        .Attr("dilations", std::vector<int64_t>{1, 2})
        .Threads(threads);
    t.Attr("activation", act.op);
    if (!act.params.empty()) t.Attr("activation_params", act.params);
  };
  KernelTester conv("Conv", 11);
  conv.Attr("group", int64_t{2})
      .Attr("strides", std::vector<int64_t>{2, 1})
      .Attr("pads", std::vector<int64_t>{1, 0, 1, 2})
      .Attr("dilations", std::vector<int64_t>{1, 2});
  conv.Input<float>(xs, x).Input<float>(ws, w);
  if (with_bias) conv.Input<float>({12}, b);
  Shape conv_shape;
  const std::vector<float> conv_out = RunOne(conv, &conv_shape);
  const std::vector<float> expected = RunActivation(act, conv_shape, conv_out);
  KernelTester fused("FusedConv", 1, kInferdDomain);
  attrs(fused);
  fused.Input<float>(xs, x).Input<float>(ws, w, constant_w);
  if (with_bias) fused.Input<float>({12}, b, constant_w);
  Shape shape;
  ExpectNear(RunOne(fused, &shape), expected, 2e-5f);
  EXPECT_EQ(shape, conv_shape);

  KernelTester spec("FusedConv", 1, kInferdDomain);
  attrs(spec);
  spec.Input(TestTensor::Of<float>(xs, x)).Input(TestTensor::Of<float>(ws, w), true, constant_w);
  if (with_bias) spec.Input(TestTensor::Of<float>({12}, b), true, constant_w);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, fused.workspace_bytes_declared());
}

TEST(FusedConvTest, EqualsConvThenRelu) {
  for (int threads : {1, 2}) {
    for (bool constant_w : {false, true}) {
      for (bool with_bias : {false, true}) {
        CheckFusedConv({"Relu"}, with_bias, constant_w, threads);
        CheckFusedConv({""}, with_bias, constant_w, threads);
      }
    }
  }
}

TEST(FusedConvTest, EqualsConvThenEachActivation) {
  const std::vector<Activation> acts = {{"LeakyRelu", {0.1f}},
                                        {"Elu", {0.7f}},
                                        {"HardSigmoid", {0.3f, 0.4f}},
                                        {"HardSwish"},
                                        {"Sigmoid"},
                                        {"Tanh"},
                                        {"Clip", {-0.5f, 0.75f}},
                                        {"Clip", {0.0f, 6.0f}},
                                        {"Silu"}};
  for (const Activation& act : acts) {
    CheckFusedConv(act, /*with_bias=*/true, /*constant_w=*/true, /*threads=*/1);
    CheckFusedConv(act, /*with_bias=*/false, /*constant_w=*/false, /*threads=*/2);
  }
}

TEST(FusedConvTest, BadActivationsAreRefusedAtLoad) {
  auto refusal = [](const std::string& activation, const std::vector<float>& params) {
    KernelTester t("FusedConv", 1, kInferdDomain);
    t.Attr("activation", activation)
        .Input<float>({1, 1, 3, 3}, std::vector<float>(9))
        .Input<float>({1, 1, 1, 1}, {1.0f});
    if (!params.empty()) t.Attr("activation_params", params);
    auto out = t.Run(CpuRegistry());
    return out.ok() ? std::string("ok") : std::string(out.status().message());
  };
  EXPECT_EQ(refusal("Softplus", {}),
            "node 'test_FusedConv' (FusedConv): activation 'Softplus' is not supported (Relu, "
            "LeakyRelu, Elu, HardSigmoid, HardSwish, Sigmoid, Tanh, Clip, Silu, Gelu, GeluTanh)");
  EXPECT_EQ(refusal("LeakyRelu", {}),
            "node 'test_FusedConv' (FusedConv): activation 'LeakyRelu' takes 1 "
            "activation_params, got 0");
  EXPECT_EQ(refusal("Clip", {2.0f, 1.0f}),
            "node 'test_FusedConv' (FusedConv): Clip's min 2 is above its max 1");
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Gemm against a naive reference: every transA/transB/alpha/beta combination, each form of C
// (absent, scalar, [N], [1,N], [M,1], [M,N]), prepacked weights, opset-dependent C requirement,
// K == 0, errors, workspace declared == estimated, threads.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

struct GemmCase {
  int64_t m, k, n;
  bool trans_a, trans_b;
  float alpha, beta;
  std::optional<Shape> c;  // nullopt: no C
  bool constant_b = false;
  int opset = 13;
  int threads = 1;
};

std::string Describe(const GemmCase& g) {
  return absl::StrCat("M", g.m, " K", g.k, " N", g.n, " tA", g.trans_a, " tB", g.trans_b, " alpha ",
                      g.alpha, " beta ", g.beta, " C ", g.c ? g.c->ToString() : "none",
                      g.constant_b ? " constB" : "", " threads ", g.threads);
}

void CheckGemm(const GemmCase& g) {
  SCOPED_TRACE(Describe(g));
  const Shape as = g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k};
  const Shape bs = g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n};
  const std::vector<float> a = RandomFloats(as.NumElements(), 11);
  const std::vector<float> b = RandomFloats(bs.NumElements(), 12);
  const std::vector<float> c = g.c ? RandomFloats(g.c->NumElements(), 13) : std::vector<float>();
  const std::vector<float> expected =
      testing::RefGemm(a, as, b, bs, g.c ? &c : nullptr, g.c ? *g.c : Shape(), g.trans_a, g.trans_b,
                       g.alpha, g.beta);
  KernelTester t("Gemm", g.opset);
  t.Attr("transA", int64_t{g.trans_a}).Attr("transB", int64_t{g.trans_b});
  t.Attr("alpha", g.alpha).Attr("beta", g.beta).Threads(g.threads);
  t.Input<float>(as, a).Input<float>(bs, b, g.constant_b);
  if (g.c) t.Input<float>(*g.c, c);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{g.m, g.n}));
  ExpectNear(Values<float>((*out)[0]), expected, 1e-4f * (1 + g.k));

  // The workspace estimate from the KernelInfo equals what the kernel declared.
  KernelTester spec("Gemm", g.opset);
  spec.Attr("transA", int64_t{g.trans_a}).Attr("transB", int64_t{g.trans_b});
  spec.Attr("alpha", g.alpha).Attr("beta", g.beta).Threads(g.threads);
  spec.Input(TestTensor::Of<float>(as, a)).Input(TestTensor::Of<float>(bs, b), true, g.constant_b);
  if (g.c) spec.Input(TestTensor::Of<float>(*g.c, c));
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(GemmTest, AllAttributeForms) {
  // M = 1 with B not constant is the row product (dnnl_sgemm), bias, alpha and beta applied
  // around it; M = 5 the matmul primitive.
  for (const int64_t m : {5, 1}) {
    const int64_t k = 7, n = 6;
    const std::vector<std::optional<Shape>> cs = {std::nullopt, std::optional<Shape>(std::in_place),
                                                  Shape{1},     Shape{n},
                                                  Shape{1, n},  Shape{m, 1},
                                                  Shape{m, n},  Shape{1, 1}};
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (const auto& c : cs) {
          for (auto [alpha, beta] : std::vector<std::pair<float, float>>{
                   {1.0f, 1.0f}, {0.5f, 1.0f}, {1.0f, 2.0f}, {-1.5f, 0.25f}, {2.0f, 0.0f}}) {
            CheckGemm({m, k, n, ta, tb, alpha, beta, c});
          }
        }
      }
    }
  }
}

TEST(GemmTest, PrepackedAndThreaded) {
  for (int threads : {1, 2}) {
    CheckGemm({128, 256, 192, false, true, 1.0f, 1.0f, Shape{192}, true, 13, threads});
    CheckGemm({64, 96, 80, true, false, 0.5f, 2.0f, Shape{64, 80}, true, 11, threads});
    // One row, weights not constant: the row product, in column parts with 2 threads.
    CheckGemm({1, 384, 1000, false, true, 1.0f, 1.0f, Shape{1000}, false, 13, threads});
    CheckGemm({1, 384, 1000, true, false, 0.5f, 2.0f, Shape{1, 1000}, false, 13, threads});
  }
}

TEST(GemmTest, OldOpsetsRequireC) {
  CheckGemm({3, 4, 5, false, false, 1.0f, 1.0f, Shape{5}, false, 7});
  CheckGemm({3, 4, 5, false, false, 1.0f, 1.0f, Shape{3, 5}, false, 9});
  KernelTester t("Gemm", 9);
  t.Input<float>({2, 2}, {1, 2, 3, 4}).Input<float>({2, 2}, {1, 0, 0, 1});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("C is required before opset 11"), std::string::npos)
      << out.status();
  // Opset 11+: C optional.
  CheckGemm({3, 4, 5, true, true, 1.0f, 1.0f, std::nullopt, false, 11});
}

TEST(GemmTest, EmptyK) {
  KernelTester t("Gemm", 13);
  t.Attr("beta", 2.0f)
      .Input<float>({2, 0}, {})
      .Input<float>({0, 3}, {})
      .Input<float>({3}, {1, 2, 3});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{2, 4, 6, 2, 4, 6}));
}

TEST(GemmTest, BadShapes) {
  {
    KernelTester t("Gemm", 13);
    t.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({4, 2}, std::vector<float>(8));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("node 'test_Gemm' (Gemm)"), std::string::npos);
    EXPECT_NE(out.status().message().find("K is 3 vs 4"), std::string::npos) << out.status();
  }
  {
    KernelTester t("Gemm", 13);
    t.Input<float>({2, 3}, std::vector<float>(6))
        .Input<float>({3, 4}, std::vector<float>(12))
        .Input<float>({3}, std::vector<float>(3));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("does not broadcast to [2,4]"), std::string::npos)
        << out.status();
  }
  {
    KernelTester t("Gemm", 13);
    t.Input<float>({2, 3, 1}, std::vector<float>(6)).Input<float>({3, 4}, std::vector<float>(12));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("must be 2-D"), std::string::npos) << out.status();
  }
}

TEST(GemmTest, ShapesUnknownAtLoad) {
  // A Linear layer with a dynamic batch: constant B [N,K] (transB) and C [N].
  const int64_t k = 24, n = 10;
  const auto b = TestTensor::Of<float>({n, k}, RandomFloats(n * k, 14));
  const auto c = TestTensor::Of<float>({n}, RandomFloats(n, 15));
  KernelTester spec("Gemm", 13);
  spec.Attr("transB", int64_t{1})
      .Input(TestTensor::Of<float>({1, k}, std::vector<float>(k)), /*shape_known=*/false)
      .Input(b, true, true)
      .Input(c, true, true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int64_t m : {1, 7, 3, 7}) {
    const auto a = TestTensor::Of<float>({m, k}, RandomFloats(m * k, 16 + m));
    const std::vector<float> c_values = c.values<float>();
    const auto expected = testing::RefGemm(a.values<float>(), a.shape, b.values<float>(), b.shape,
                                           &c_values, c.shape, false, true, 1.0f, 1.0f);
    auto out = engine::testing::RunKernel(**kernel, {&a, &b, &c}, 1, 2);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, (Shape{m, n}));
    ExpectNear((*out)[0].values<float>(), expected, 1e-4f);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

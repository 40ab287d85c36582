// MatMul against a naive numpy-semantics reference: 1-D promotion, batch broadcasting,
// prepacked constant weights, shapes unknown at load, degenerate sizes, errors, workspace
// declared == estimated, and threads.
#include <thread>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::RunKernel;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

struct MatMulCase {
  Shape a, b;
};

void CheckMatMul(const Shape& as, const Shape& bs, bool constant_b, int threads) {
  SCOPED_TRACE(as.ToString() + " x " + bs.ToString() + (constant_b ? " constant B" : "") +
               " threads " + std::to_string(threads));
  const std::vector<float> a = RandomFloats(as.NumElements(), 1);
  const std::vector<float> b = RandomFloats(bs.NumElements(), 2);
  Shape expected_shape;
  const std::vector<float> expected = testing::RefMatMul(a, as, b, bs, &expected_shape);
  KernelTester t("MatMul", 13);
  t.Input<float>(as, a).Input<float>(bs, b, constant_b).Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 1e-4f * (1 + as[as.rank() - 1]));
}

TEST(MatMulTest, MatchesReference) {
  const std::vector<MatMulCase> cases = {
      {{3, 4}, {4, 5}},
      {{1, 1}, {1, 1}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{7}, {7}},
      {{2, 3, 4}, {4}},
      {{5}, {2, 5, 3}},
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 6}},
      {{1, 3, 2, 4}, {2, 1, 4, 3}},
      {{65, 130}, {130, 97}},
      {{2, 2, 2, 2, 3, 4}, {4, 2}},
  };
  for (const MatMulCase& c : cases) {
    for (bool constant_b : {false, true}) CheckMatMul(c.a, c.b, constant_b, 1);
  }
}

TEST(MatMulTest, PrepackedWeightsOnLargeShapes) {
  CheckMatMul({64, 256}, {256, 192}, /*constant_b=*/true, 1);
  CheckMatMul({3, 64, 128}, {128, 96}, /*constant_b=*/true, 2);
}

TEST(MatMulTest, OneRowAgainstPlainWeights) {
  // The row product (dnnl_sgemm per column part): widths that are and are not multiples of the
  // 16-column part bounds, a single column, batch dims of 1, 1 and 2 threads.
  for (int threads : {1, 2}) {
    CheckMatMul({1, 300}, {300, 1000}, /*constant_b=*/false, threads);
    CheckMatMul({300}, {300, 1000}, false, threads);
    CheckMatMul({1, 1, 512}, {512, 1537}, false, threads);
    CheckMatMul({1, 64}, {64, 17}, false, threads);
    CheckMatMul({1, 64}, {64, 1}, false, threads);
    CheckMatMul({1, 1, 1, 96}, {1, 96, 40}, false, threads);
  }
}

TEST(MatMulTest, WhichProductsTakeTheRowProduct) {
  const NodeLabel node("mm", "MatMul");
  auto build = [&](const dnnl::memory::dims& src, const dnnl::memory::dims& weights,
                   const dnnl::memory::dims& dst, const void* constant, int threads) {
    MatMulSpec spec;
    spec.src = PlainDesc(src);
    spec.weights = PlainDesc(weights);
    spec.dst = PlainDesc(dst);
    spec.constant_weights = constant;
    absl::StatusOr<std::shared_ptr<const MatMulPrimitive>> p =
        MatMulPrimitive::Build(spec, threads, node);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : nullptr;
  };
  auto one_row = build({1, 1, 1536}, {1, 1536, 512}, {1, 1, 512}, nullptr, 2);
  ASSERT_NE(one_row, nullptr);
  EXPECT_TRUE(one_row->row_product());
  EXPECT_GT(one_row->parts(), 1);  // a decode step uses both threads
  EXPECT_EQ(one_row->scratchpad_bytes(), 0u);
  EXPECT_EQ(one_row->prepacked_bytes(), 0u);
  auto single = build({1, 1536}, {1536, 512}, {1, 512}, nullptr, 1);
  ASSERT_NE(single, nullptr);
  EXPECT_TRUE(single->row_product());
  EXPECT_EQ(single->parts(), 1);
  // Two rows, or one weight matrix per batch: the primitive.
  auto two_rows = build({2, 64}, {64, 32}, {2, 32}, nullptr, 1);
  ASSERT_NE(two_rows, nullptr);
  EXPECT_FALSE(two_rows->row_product());
  auto batched = build({2, 1, 64}, {2, 64, 32}, {2, 1, 32}, nullptr, 1);
  ASSERT_NE(batched, nullptr);
  EXPECT_FALSE(batched->row_product());
  // Constant weights are prepacked for the primitive instead.
  const std::vector<float> weights(1536 * 512, 0.5f);
  auto prepacked = build({1, 1536}, {1536, 512}, {1, 512}, weights.data(), 1);
  ASSERT_NE(prepacked, nullptr);
  EXPECT_FALSE(prepacked->row_product());
}

TEST(MatMulTest, TwoThreadsMatchOne) {
  const Shape as{4, 96, 160}, bs{160, 112};
  const std::vector<float> a = RandomFloats(as.NumElements(), 3);
  const std::vector<float> b = RandomFloats(bs.NumElements(), 4);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    KernelTester t("MatMul", 13);
    t.Input<float>(as, a).Input<float>(bs, b, true).Threads(threads);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(Values<float>((*out)[0]));
  }
  ExpectNear(results[1], results[0], 1e-5f);
}

TEST(MatMulTest, DegenerateSizes) {
  {  // K == 0: all zeros
    KernelTester t("MatMul", 13);
    t.Input<float>({2, 0}, {}).Input<float>({0, 3}, {});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>(6, 0.0f));
  }
  {  // M == 0: empty output
    KernelTester t("MatMul", 13);
    t.Input<float>({0, 4}, {}).Input<float>({4, 3}, std::vector<float>(12, 1.0f));
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{0, 3}));
  }
}

TEST(MatMulTest, BadShapesNameTheNode) {
  struct Bad {
    Shape a, b;
    const char* message;
  };
  for (const Bad& c : std::vector<Bad>{{{3, 4}, {5, 6}, "do not match"},
                                       {{2, 3, 4}, {3, 4, 5}, "cannot be broadcast"},
                                       {{}, {3}, "rank >= 1"}}) {
    KernelTester t("MatMul", 13);
    t.Input<float>(c.a, std::vector<float>(c.a.NumElements(), 1.0f))
        .Input<float>(c.b, std::vector<float>(c.b.NumElements(), 1.0f));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("node 'test_MatMul' (MatMul)"), std::string::npos)
        << out.status();
    EXPECT_NE(out.status().message().find(c.message), std::string::npos) << out.status();
  }
}

TEST(MatMulTest, WorkspaceDeclaredEqualsEstimate) {
  for (int threads : {1, 2}) {
    for (bool constant_b : {false, true}) {
      for (const MatMulCase& c : std::vector<MatMulCase>{
               {{256, 256}, {256, 256}}, {{8, 64, 96}, {96, 128}}, {{3, 4}, {4, 5}}}) {
        SCOPED_TRACE(c.a.ToString() + " threads " + std::to_string(threads));
        const auto a = TestTensor::Of<float>(c.a, RandomFloats(c.a.NumElements(), 5));
        const auto b = TestTensor::Of<float>(c.b, RandomFloats(c.b.NumElements(), 6));
        KernelTester spec("MatMul", 13);
        spec.Input(a).Input(b, true, constant_b).Threads(threads);
        absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
        ASSERT_TRUE(estimate.ok()) << estimate.status();

        KernelTester t("MatMul", 13);
        t.Input<float>(c.a, a.values<float>())
            .Input<float>(c.b, b.values<float>(), constant_b)
            .Threads(threads);
        ASSERT_TRUE(t.Run(CpuRegistry()).ok());
        EXPECT_EQ(t.workspace_bytes_declared(), *estimate);
      }
    }
  }
}

TEST(MatMulTest, EstimateNeedsStaticShapes) {
  KernelTester spec("MatMul", 13);
  spec.Input(TestTensor::Of<float>({2, 3}, std::vector<float>(6)), /*shape_known=*/false)
      .Input(TestTensor::Of<float>({3, 2}, std::vector<float>(6)));
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  EXPECT_FALSE(estimate.ok());
  EXPECT_NE(estimate.status().message().find("not static"), std::string::npos);
}

TEST(MatMulTest, ShapesUnknownAtLoadOneKernelManyShapes) {
  // Constant weights, batch and rows change per run: one primitive per shape, cached.
  const Shape bs{48, 40};
  const auto b = TestTensor::Of<float>(bs, RandomFloats(bs.NumElements(), 7));
  KernelTester spec("MatMul", 13);
  spec.Input(TestTensor::Of<float>({1, 48}, std::vector<float>(48)), /*shape_known=*/false)
      .Input(b, true, /*constant=*/true)
      .Threads(2);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int round = 0; round < 2; ++round) {
    for (const Shape& as : {Shape{1, 48}, Shape{5, 48}, Shape{2, 3, 48}, Shape{48}}) {
      const std::vector<float> a = RandomFloats(as.NumElements(), 8 + round);
      Shape expected_shape;
      const std::vector<float> expected =
          testing::RefMatMul(a, as, b.values<float>(), bs, &expected_shape);
      const auto at = TestTensor::Of<float>(as, a);
      auto out = RunKernel(**kernel, {&at, &b}, 1, 2);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape, expected_shape);
      ExpectNear((*out)[0].values<float>(), expected, 1e-4f);
    }
  }
}

TEST(MatMulTest, ShapesUnknownAtLoadShareOnePrepackedCopy) {
  // Constant weights, rows changing per run: the plans of every row count read one prepacked copy
  // of B (held once, counted once), and each result is still right.
  const Shape bs{256, 192};
  const auto b = TestTensor::Of<float>(bs, RandomFloats(bs.NumElements(), 21));
  for (const char* op : {"MatMul", "Gemm"}) {
    SCOPED_TRACE(op);
    KernelTester spec(op, 13);
    spec.Input(TestTensor::Of<float>({1, 256}, std::vector<float>(256)), /*shape_known=*/false)
        .Input(b, true, /*constant=*/true);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ((*kernel)->PersistentBytes(), 0u);  // nothing packed before the first run
    size_t after_first = 0;
    for (const int64_t m : {5, 64, 1, 17, 33}) {
      const Shape as{m, 256};
      const std::vector<float> a = RandomFloats(as.NumElements(), 22 + static_cast<uint32_t>(m));
      Shape expected_shape;
      const std::vector<float> expected =
          testing::RefMatMul(a, as, b.values<float>(), bs, &expected_shape);
      const auto at = TestTensor::Of<float>(as, a);
      auto out = RunKernel(**kernel, {&at, &b}, 1, 1);
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectNear((*out)[0].values<float>(), expected, 1e-3f);
      if (after_first == 0) after_first = (*kernel)->PersistentBytes();
    }
    EXPECT_GE(after_first, bs.NumElements() * sizeof(float));  // one packed copy of B
    EXPECT_EQ((*kernel)->PersistentBytes(), after_first);      // and no other
  }
}

TEST(MatMulTest, ConcurrentRunsOfOneKernel) {
  KernelTester spec("MatMul", 13);
  spec.Input(TestTensor::Of<float>({1, 32}, std::vector<float>(32)), false)
      .Input(TestTensor::Of<float>({32, 16}, std::vector<float>(512)), false);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int iter = 0; iter < 20; ++iter) {
        const Shape as{1 + (i + iter) % 3, 32}, bs{32, 16};
        const auto a = TestTensor::Of<float>(as, RandomFloats(as.NumElements(), i * 100 + iter));
        const auto b = TestTensor::Of<float>(bs, RandomFloats(bs.NumElements(), iter));
        Shape s;
        const auto expected = testing::RefMatMul(a.values<float>(), as, b.values<float>(), bs, &s);
        auto out = RunKernel(**kernel, {&a, &b}, 1, 1);
        if (!out.ok() || (*out)[0].shape != s) {
          ++failures[i];
          continue;
        }
        const auto got = (*out)[0].values<float>();
        for (size_t j = 0; j < got.size(); ++j) {
          if (std::abs(got[j] - expected[j]) > 1e-4f) ++failures[i];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace inferd::kernels::cpu

// The KV-cache rewrite's kernels against naive references: KvCacheMatMul reads a block's valid
// prefix with head repeat, transpose and scale; KvCacheAppend writes in place and refuses to
// overflow the block; KvCacheShape reproduces the removed layout ops' shapes.
#include <random>
#include <vector>

#include "engine/domain.h"
#include "engine/kernel_registry.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::RunKernel;
using engine::testing::TestTensor;
using engine::testing::Values;

class KvCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(RegisterCpuKernels(registry_).ok()); }
  engine::KernelRegistry registry_;
};

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Q K^T (transpose_b) and P V over the first `len` of `cap` positions, heads repeated.
TEST_F(KvCacheTest, MatMulReadsThePrefixWithRepeatAndScale) {
  const int64_t B = 2, kvH = 2, rep = 3, H = kvH * rep, cap = 16, D = 8, q = 3, len = 11;
  const float scale = 0.375f;
  const std::vector<float> block = Random(B * kvH * cap * D, 1);
  for (bool transpose : {true, false}) {
    const int64_t inner = transpose ? D : len, cols = transpose ? len : D;
    const std::vector<float> a = Random(B * H * q * inner, 2);
    const std::vector<int64_t> chain =
        transpose ? std::vector<int64_t>{B, H, D, len} : std::vector<int64_t>{B, H, len, D};
    KernelTester t("KvCacheMatMul", 1, engine::kInferdDomain);
    t.Attr("transpose_b", int64_t{transpose}).Attr("scale", scale);
    t.Input<float>(Shape{B, H, q, inner}, a)
        .Input<float>(Shape{B, kvH, cap, D}, block)
        .Input<int64_t>(Shape{4}, {B, kvH, len, D})
        .Input<int64_t>(Shape{4}, chain)
        .Input<int64_t>(Shape{5}, {B, kvH, rep, len, D})
        .Threads(2);
    auto out = t.Run(registry_);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), (Shape{B, H, q, cols}));
    const std::vector<float> y = Values<float>((*out)[0]);
    double max_err = 0;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        const float* kv = block.data() + ((b * kvH + h / rep) * cap) * D;
        for (int64_t i = 0; i < q; ++i) {
          const float* ar = a.data() + ((b * H + h) * q + i) * inner;
          for (int64_t c = 0; c < cols; ++c) {
            double ref = 0;
            for (int64_t k = 0; k < inner; ++k) {
              ref += transpose ? ar[k] * (kv[c * D + k] * scale) : ar[k] * (kv[k * D + c] * scale);
            }
            max_err = std::max(max_err, std::abs(ref - y[((b * H + h) * q + i) * cols + c]));
          }
        }
      }
    }
    EXPECT_LT(max_err, 1e-5) << "transpose " << transpose;
  }
}

TEST_F(KvCacheTest, MatMulRefusesAChainItDoesNotCompute) {
  KernelTester t("KvCacheMatMul", 1, engine::kInferdDomain);
  t.Attr("transpose_b", int64_t{1});
  t.Input<float>(Shape{1, 2, 1, 4}, std::vector<float>(8, 1.f))
      .Input<float>(Shape{1, 2, 8, 4}, std::vector<float>(64, 1.f))
      .Input<int64_t>(Shape{4}, {1, 2, 5, 4})
      .Input<int64_t>(Shape{4}, {1, 2, 5, 4})  // not transposed: not what transpose_b says
      .AbsentInput();
  auto out = t.Run(registry_);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("layout ops"), std::string::npos) << out.status();
}

TEST_F(KvCacheTest, AppendWritesInPlaceAndRefusesOverflow) {
  const int64_t kvH = 2, cap = 4, D = 3;
  TestTensor block = TestTensor::Of<float>(Shape{1, kvH, cap, D}, std::vector<float>(24, 0.f));
  TestTensor fresh = TestTensor::Of<float>(Shape{1, kvH, 1, D}, {1, 2, 3, 4, 5, 6});
  TestTensor past = TestTensor::Of<int64_t>(Shape{}, {2});
  KernelTester t("KvCacheAppend", 1, engine::kInferdDomain);
  t.Input(block, false).Input(fresh, false).Input(past, false);
  auto kernel = t.Create(registry_);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto out = RunKernel(**kernel, {&block, &fresh, &past}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].values<int64_t>(), (std::vector<int64_t>{1, kvH, 3, D}));
  const std::vector<float> b = block.values<float>();
  EXPECT_EQ(std::vector<float>(b.begin() + 2 * D, b.begin() + 3 * D),
            (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(std::vector<float>(b.begin() + (cap + 2) * D, b.begin() + (cap + 3) * D),
            (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(b[0], 0.f);
  TestTensor full = TestTensor::Of<int64_t>(Shape{}, {4});
  auto overflow = RunKernel(**kernel, {&block, &fresh, &full}, 1, 1);
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("capacity"), std::string::npos);
}

TEST_F(KvCacheTest, ShapeOfTheRemovedOps) {
  struct Case {
    std::string of;
    std::vector<int64_t> in, operand, want;
  };
  const std::vector<Case> cases = {
      {"Unsqueeze", {1, 2, 5, 4}, {2}, {1, 2, 1, 5, 4}},
      {"Expand", {1, 2, 1, 5, 4}, {1, 2, 3, 5, 4}, {1, 2, 3, 5, 4}},
      {"Reshape", {1, 2, 3, 5, 4}, {1, 6, -1, 4}, {1, 6, 5, 4}},
  };
  for (const Case& c : cases) {
    KernelTester t("KvCacheShape", 1, engine::kInferdDomain);
    t.Attr("of", c.of)
        .Input<int64_t>(Shape{static_cast<int64_t>(c.in.size())}, c.in)
        .Input<int64_t>(Shape{static_cast<int64_t>(c.operand.size())}, c.operand);
    auto out = t.Run(registry_);
    ASSERT_TRUE(out.ok()) << c.of << ": " << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]), c.want) << c.of;
  }
  KernelTester tr("KvCacheShape", 1, engine::kInferdDomain);
  tr.Attr("of", std::string("Transpose")).Attr("perm", std::vector<int64_t>{0, 1, 3, 2});
  tr.Input<int64_t>(Shape{4}, {1, 6, 5, 4});
  auto out = tr.Run(registry_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 6, 4, 5}));
  KernelTester past("KvCacheShape", 1, engine::kInferdDomain);
  past.Attr("of", std::string("past"))
      .Input<float>(Shape{1, 2, 8, 4}, std::vector<float>(64))
      .Input<int64_t>(Shape{}, {3});
  out = past.Run(registry_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace inferd::kernels::cpu

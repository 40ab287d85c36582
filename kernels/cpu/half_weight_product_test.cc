// The half-weight product: HalfWeightGemm's streaming and blocked paths (AVX-512 and portable)
// against a double-precision reference, and MatMul / FusedMatMul / Gemm nodes whose B is a
// float16 or bfloat16 weight through the registry (shapes, transposes, bias and C, activation,
// threads, workspace declared == estimated, refusals).
#include <cmath>
#include <string>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/half_weight_gemm.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using testing::CpuRegistry;
using testing::RandomFloats;

// Half bits of `v` and the float values they stand for.
struct HalfValues {
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

HalfValues ToHalf(const std::vector<float>& v, DataType type) {
  HalfValues h;
  for (float x : v) {
    const uint16_t b = type == DataType::kBFloat16 ? FloatToBFloat16(x) : FloatToHalf(x);
    h.bits.push_back(b);
    h.values.push_back(type == DataType::kBFloat16 ? BFloat16ToFloat(b) : HalfToFloat(b));
  }
  return h;
}

// C = alpha * op(A) * op(B) (+ C0), in double.
std::vector<float> Reference(const HalfWeightGemmShape& s, const std::vector<float>& a,
                             const std::vector<float>& b, float alpha,
                             const std::vector<float>* c0) {
  std::vector<float> c(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const float x = s.trans_a ? a[kk * s.m + i] : a[i * s.k + kk];
        const float y = s.trans_b ? b[j * s.k + kk] : b[kk * s.n + j];
        sum += static_cast<double>(x) * y;
      }
      c[i * s.n + j] = static_cast<float>(alpha * sum + (c0 ? (*c0)[i * s.n + j] : 0.0));
    }
  }
  return c;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  // float32 sums of k products of values in [-1, 1): a few ulps of k.
  const float tol = 1e-6f * static_cast<float>(k + 8);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
  }
}

void CheckGemm(HalfWeightGemmShape s, int threads, bool accumulate, bool portable) {
  SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
               (s.trans_a ? " transA" : "") + (s.trans_b ? " transB" : "") + " " +
               DataTypeName(s.b_type) + " threads " + std::to_string(threads) +
               (accumulate ? " accumulate" : "") + (portable ? " portable" : ""));
  const std::vector<float> a = RandomFloats(s.m * s.k, 3);
  const HalfValues b = ToHalf(RandomFloats(s.n * s.k, 4), s.b_type);
  const std::vector<float> c0 = RandomFloats(s.m * s.n, 5);
  std::vector<float> c = accumulate ? c0 : std::vector<float>(s.m * s.n, 1e30f);
  engine::ThreadPool pool(threads);
  std::vector<char> ws(HalfWeightGemmWorkspace(s, threads));
  const NodeLabel node("gemm", "MatMul");
  ASSERT_TRUE(HalfWeightGemm(pool, s, a.data(), b.bits.data(), 0.5f, accumulate, c.data(),
                             ws.empty() ? nullptr : ws.data(), node, portable)
                  .ok());
  ExpectClose(c, Reference(s, a, b.values, 0.5f, accumulate ? &c0 : nullptr), s.k);
}

TEST(HalfWeightGemmTest, StreamingAndBlockedPathsMatchTheReference) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (bool trans_b : {false, true}) {
      // m <= kStreamRows streams; more rows convert blocks. Odd n and k exercise the tails.
      for (int64_t m : {1, 2, 3, 5, 8, 9, 33}) {
        for (auto [n, k] : {std::pair<int64_t, int64_t>{96, 64}, {53, 37}, {300, 530}}) {
          HalfWeightGemmShape s;
          s.m = m, s.n = n, s.k = k, s.trans_b = trans_b, s.b_type = type;
          CheckGemm(s, 1, false, false);
          if (m <= kStreamRows) CheckGemm(s, 1, false, /*portable=*/true);
        }
      }
      HalfWeightGemmShape big;
      big.m = 4, big.n = 1024, big.k = 512, big.trans_b = trans_b, big.b_type = type;
      CheckGemm(big, 2, true, false);
      big.m = 40;
      CheckGemm(big, 2, true, false);
      big.trans_a = true;
      CheckGemm(big, 2, false, false);
      big.m = 3;  // transposed A always takes the blocked path
      CheckGemm(big, 1, false, false);
    }
  }
}

TEST(HalfWeightGemmTest, EmptyKWritesZerosOrKeepsC) {
  HalfWeightGemmShape s;
  s.m = 2, s.n = 3, s.k = 0;
  engine::ThreadPool pool(1);
  const NodeLabel node("gemm", "MatMul");
  std::vector<float> c(6, 7.0f);
  ASSERT_TRUE(HalfWeightGemm(pool, s, nullptr, nullptr, 1.0f, true, c.data(), nullptr, node).ok());
  EXPECT_EQ(c, std::vector<float>(6, 7.0f));
  ASSERT_TRUE(HalfWeightGemm(pool, s, nullptr, nullptr, 1.0f, false, c.data(), nullptr, node).ok());
  EXPECT_EQ(c, std::vector<float>(6, 0.0f));
  s.b_type = DataType::kFloat32;
  EXPECT_FALSE(
      HalfWeightGemm(pool, s, nullptr, nullptr, 1.0f, false, c.data(), nullptr, node).ok());
}

// ---- through the registry --------------------------------------------------------------------

struct NodeCase {
  std::string op = "MatMul";
  std::string domain;  // "com.inferd" for FusedMatMul
  Shape a, b;
  DataType type = DataType::kFloat16;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  std::vector<int64_t> add_dims;  // FusedMatMul's bias / Gemm's C; empty: none
  std::string activation;
  int threads = 1;
};

void CheckNode(const NodeCase& nc) {
  SCOPED_TRACE(nc.op + " A " + nc.a.ToString() + " B " + nc.b.ToString() + " " +
               DataTypeName(nc.type) + " threads " + std::to_string(nc.threads));
  const std::vector<float> a = RandomFloats(nc.a.NumElements(), 7);
  const HalfValues b = ToHalf(RandomFloats(nc.b.NumElements(), 8), nc.type);
  const Shape add_shape(nc.add_dims);
  const std::vector<float> add = RandomFloats(add_shape.NumElements(), 9);
  // The node's attributes, for the half-weight node and its float32 reference.
  const auto attributes = [&nc](KernelTester& t) {
    if (nc.op == "Gemm") {
      t.Attr("transA", int64_t{nc.trans_a}).Attr("transB", int64_t{nc.trans_b});
      t.Attr("alpha", nc.alpha).Attr("beta", nc.beta);
    } else if (!nc.activation.empty()) {
      t.Attr("activation", nc.activation);
    }
  };
  const int opset = nc.domain.empty() ? 13 : 1;
  KernelTester t(nc.op, opset, nc.domain);
  attributes(t);
  t.Input<float>(nc.a, a).RawInput(nc.type, nc.b, b.bits.data(), b.bits.size() * 2, true);
  if (!nc.add_dims.empty()) t.Input<float>(add_shape, add);
  t.Threads(nc.threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  // The reference: the same node on float32 weights holding the half values.
  KernelTester f(nc.op, opset, nc.domain);
  attributes(f);
  f.Input<float>(nc.a, a).Input<float>(nc.b, b.values, true);
  if (!nc.add_dims.empty()) f.Input<float>(add_shape, add);
  auto want = f.Run(CpuRegistry());
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ((*out)[0].shape(), (*want)[0].shape());
  const int64_t k = nc.trans_a ? nc.a[0] : nc.a[nc.a.rank() - 1];
  ExpectClose(std::vector<float>((*out)[0].data<float>(),
                                 (*out)[0].data<float>() + (*out)[0].NumElements()),
              std::vector<float>((*want)[0].data<float>(),
                                 (*want)[0].data<float>() + (*want)[0].NumElements()),
              k);
  // What the partitioner is told is what the kernel declares.
  absl::StatusOr<size_t> estimate = t.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(HalfWeightProductTest, MatMulFusedMatMulAndGemmMatchTheirFloat32Kernels) {
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (int threads : {1, 2}) {
      NodeCase mm;
      mm.type = type, mm.threads = threads;
      for (auto [a, b] : {std::pair<Shape, Shape>{Shape{1, 64}, Shape{64, 96}},
                          {Shape{2, 7, 48}, Shape{48, 40}},  // batch dims are rows
                          {Shape{48}, Shape{48, 33}},        // 1-D A
                          {Shape{20, 256}, Shape{256, 300}},
                          {Shape{3, 0}, Shape{0, 5}}}) {  // K == 0
        mm.a = a, mm.b = b;
        CheckNode(mm);
      }
      NodeCase fused = mm;
      fused.op = "FusedMatMul", fused.domain = "com.inferd";
      fused.a = Shape{4, 64}, fused.b = Shape{64, 80}, fused.add_dims = {80};
      fused.activation = "Relu";
      CheckNode(fused);
      fused.a = Shape{16, 64};
      CheckNode(fused);
      NodeCase gemm;
      gemm.op = "Gemm", gemm.type = type, gemm.threads = threads;
      gemm.a = Shape{3, 64}, gemm.b = Shape{50, 64}, gemm.trans_b = true, gemm.add_dims = {50};
      CheckNode(gemm);  // a Linear layer
      gemm.alpha = 0.5f, gemm.beta = 2.0f, gemm.add_dims = {12, 1}, gemm.a = Shape{12, 64};
      CheckNode(gemm);
      gemm.trans_a = true, gemm.a = Shape{64, 12}, gemm.add_dims = {};
      CheckNode(gemm);
    }
  }
}

TEST(HalfWeightProductTest, RefusesWhatItCannotRun) {
  const std::vector<uint16_t> b(2 * 4 * 3, 0x3c00);
  const std::vector<float> a(2 * 4, 1.0f);
  {  // a half B must be 2-D
    KernelTester t("MatMul", 13);
    t.Input<float>(Shape{2, 4}, a)
        .RawInput(DataType::kFloat16, Shape{2, 4, 3}, b.data(), b.size() * 2, true);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
  }
  {  // K of A and B differ
    KernelTester t("MatMul", 13);
    t.Input<float>(Shape{2, 4}, a)
        .RawInput(DataType::kFloat16, Shape{3, 8}, b.data(), 3 * 8 * 2, true);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find("do not match"), std::string::npos) << out.status();
  }
  {  // a bias that does not cover N
    KernelTester t("FusedMatMul", 1, "com.inferd");
    t.Input<float>(Shape{2, 4}, a)
        .RawInput(DataType::kFloat16, Shape{4, 3}, b.data(), 4 * 3 * 2, true)
        .Input<float>(Shape{2}, {1.0f, 2.0f});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("bias"), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

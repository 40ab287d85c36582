// The com.microsoft transformer kernels against naive references written from ONNX Runtime's
// operator documentation: the Gelu family, SkipLayerNormalization (every optional input and
// output), SkipSimplified / SimplifiedLayerNormalization, EmbedLayerNormalization, Attention over
// its mask forms, unidirectional, past/present, qkv_hidden_sizes and attention_bias, and
// MultiHeadAttention with bias, masks and past; bad shapes and attributes are errors.
#include <cmath>
#include <string>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;

constexpr char kMs[] = "com.microsoft";

std::vector<float> Ref(const std::vector<float>& x, float (*f)(float)) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
  return y;
}
float GeluRef(float v) { return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))); }
float FastGeluRef(float v) {
  return 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
}

TEST(ContribActivationTest, GeluFamily) {
  const Shape s{3, 8};
  const auto x = RandomFloats(24, 1, -4.0f, 4.0f), bias = RandomFloats(8, 2);
  std::vector<float> xb(24);
  for (int i = 0; i < 24; ++i) xb[i] = x[i] + bias[i % 8];
  {
    KernelTester t("Gelu", 1, kMs);
    auto out = t.Input<float>(s, x).Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), Ref(x, GeluRef), 1e-5f);
  }
  {
    KernelTester t("BiasGelu", 1, kMs);
    auto out = t.Input<float>(s, x).Input<float>({8}, bias).Threads(2).Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), Ref(xb, GeluRef), 1e-5f);
  }
  for (bool with_bias : {false, true}) {
    KernelTester t("FastGelu", 1, kMs);
    t.Input<float>(s, x);
    if (with_bias) t.Input<float>({8}, bias);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), Ref(with_bias ? xb : x, FastGeluRef), 1e-5f);
  }
  {
    KernelTester t("QuickGelu", 1, kMs);
    auto out = t.Attr("alpha", 1.5f).Input<float>(s, x).Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> expected(24);
    for (int i = 0; i < 24; ++i) expected[i] = x[i] / (1.0f + std::exp(-1.5f * x[i]));
    ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
  }
  {
    const auto skip = RandomFloats(24, 3);
    KernelTester t("BiasAdd", 1, kMs);
    auto out = t.Input<float>({1, 3, 8}, x)
                   .Input<float>({8}, bias)
                   .Input<float>({1, 3, 8}, skip)
                   .Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> expected(24);
    for (int i = 0; i < 24; ++i) expected[i] = xb[i] + skip[i];
    ExpectNear(Values<float>((*out)[0]), expected, 1e-6f);
  }
  for (const std::string approximate : {"none", "tanh"}) {  // ONNX's Gelu, opset 20
    KernelTester t("Gelu", 20);
    auto out = t.Attr("approximate", approximate).Input<float>(s, x).Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), Ref(x, approximate == "none" ? GeluRef : FastGeluRef),
               1e-5f);
  }
  {
    KernelTester t("Gelu", 20);
    EXPECT_FALSE(
        t.Attr("approximate", std::string("fast")).Input<float>(s, x).Run(CpuRegistry()).ok());
  }
  {  // a bias of the wrong size
    KernelTester t("BiasGelu", 1, kMs);
    EXPECT_FALSE(t.Input<float>(s, x).Input<float>({3}, {1, 2, 3}).Run(CpuRegistry()).ok());
  }
}

// (s - mean) * inv * gamma + beta per row of d, LayerNorm or RMSNorm.
std::vector<float> NormRef(const std::vector<float>& s, int64_t d, const std::vector<float>& g,
                           const std::vector<float>& b, float eps, bool rms,
                           std::vector<float>* mean = nullptr, std::vector<float>* inv = nullptr) {
  std::vector<float> y(s.size());
  for (size_t r = 0; r * d < s.size(); ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < d; ++i) m += s[r * d + i];
    m = rms ? 0 : m / d;
    for (int64_t i = 0; i < d; ++i) v += (s[r * d + i] - m) * (s[r * d + i] - m);
    const double iv = 1.0 / std::sqrt(v / d + eps);
    for (int64_t i = 0; i < d; ++i) {
      y[r * d + i] = static_cast<float>((s[r * d + i] - m) * iv * g[i] + (b.empty() ? 0 : b[i]));
    }
    if (mean != nullptr) mean->push_back(static_cast<float>(m));
    if (inv != nullptr) inv->push_back(static_cast<float>(iv));
  }
  return y;
}

TEST(ContribNormTest, SkipLayerNormalizationEveryOptional) {
  const Shape s{2, 3, 16};
  const auto x = RandomFloats(96, 4, -2, 2), skip = RandomFloats(96, 5),
             gamma = RandomFloats(16, 6), beta = RandomFloats(16, 7), bias = RandomFloats(16, 8);
  for (bool simplified : {false, true}) {
    for (bool with_beta : {false, true}) {
      for (bool with_bias : {false, true}) {
        if (simplified && with_beta) continue;
        SCOPED_TRACE(::testing::Message() << simplified << with_beta << with_bias);
        std::vector<float> sum(96);
        for (int i = 0; i < 96; ++i) sum[i] = x[i] + skip[i] + (with_bias ? bias[i % 16] : 0);
        std::vector<float> mean, inv;
        const auto expected = NormRef(sum, 16, gamma, with_beta ? beta : std::vector<float>(),
                                      1e-5f, simplified, &mean, &inv);
        KernelTester t(simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization",
                       1, kMs);
        t.Attr("epsilon", 1e-5f).Input<float>(s, x).Input<float>(s, skip).Input<float>({16}, gamma);
        if (!simplified) {
          if (with_beta) {
            t.Input<float>({16}, beta);
          } else {
            t.AbsentInput();
          }
        }
        if (with_bias) t.Input<float>({16}, bias);
        t.Outputs(4).Threads(2);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        ExpectNear(Values<float>((*out)[0]), expected, 2e-5f);
        EXPECT_EQ((*out)[1].shape(), (Shape{2, 3, 1}));
        if (!simplified) ExpectNear(Values<float>((*out)[1]), mean, 1e-5f);
        ExpectNear(Values<float>((*out)[2]), inv, 1e-4f);
        ExpectNear(Values<float>((*out)[3]), sum, 1e-6f);
      }
    }
  }
  // skip broadcast over the batch: [1, 3, 16].
  std::vector<float> sum(96);
  for (int i = 0; i < 96; ++i) sum[i] = x[i] + skip[i % 48];
  KernelTester t("SkipLayerNormalization", 1, kMs);
  auto out = t.Input<float>(s, x)
                 .Input<float>({1, 3, 16}, std::vector<float>(skip.begin(), skip.begin() + 48))
                 .Input<float>({16}, gamma)
                 .Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), NormRef(sum, 16, gamma, {}, 1e-12f, false), 2e-5f);
  KernelTester bad("SkipLayerNormalization", 1, kMs);
  EXPECT_FALSE(bad.Input<float>(s, x)
                   .Input<float>(s, skip)
                   .Input<float>({8}, gamma)
                   .Run(CpuRegistry())
                   .ok());
}

TEST(ContribNormTest, SimplifiedLayerNormalization) {
  const auto x = RandomFloats(2 * 3 * 4, 9), g = RandomFloats(12, 10);
  KernelTester t("SimplifiedLayerNormalization", 1);
  t.Attr("axis", int64_t{1}).Attr("epsilon", 1e-6f).Input<float>({2, 3, 4}, x);
  auto out = t.Input<float>({3, 4}, g).Outputs(2).Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> inv;
  ExpectNear(Values<float>((*out)[0]), NormRef(x, 12, g, {}, 1e-6f, true, nullptr, &inv), 2e-5f);
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 1, 1}));
  ExpectNear(Values<float>((*out)[1]), inv, 1e-4f);
}

TEST(ContribNormTest, EmbedLayerNormalization) {
  const int64_t b = 2, s = 4, d = 8, vocab = 10, npos = 6;
  const std::vector<int32_t> ids = {1, 9, 0, 3, 4, 4, 2, 7}, seg = {0, 0, 1, 1, 0, 1, 1, 1},
                             mask = {1, 1, 1, 0, 1, 1, 0, 0};
  const auto word = RandomFloats(vocab * d, 11), pos = RandomFloats(npos * d, 12),
             segw = RandomFloats(2 * d, 13), gamma = RandomFloats(d, 14),
             beta = RandomFloats(d, 15);
  std::vector<float> sum(b * s * d);
  for (int64_t r = 0; r < b * s; ++r) {
    for (int64_t i = 0; i < d; ++i) {
      sum[r * d + i] = word[ids[r] * d + i] + pos[(r % s) * d + i] + segw[seg[r] * d + i];
    }
  }
  KernelTester t("EmbedLayerNormalization", 1, kMs);
  t.Attr("epsilon", 1e-5f)
      .Input<int32_t>({b, s}, ids)
      .Input<int32_t>({b, s}, seg)
      .Input<float>({vocab, d}, word)
      .Input<float>({npos, d}, pos)
      .Input<float>({2, d}, segw)
      .Input<float>({d}, gamma)
      .Input<float>({d}, beta)
      .Input<int32_t>({b, s}, mask)
      .Outputs(3);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), NormRef(sum, d, gamma, beta, 1e-5f, false), 2e-5f);
  EXPECT_EQ(Values<int32_t>((*out)[1]), (std::vector<int32_t>{3, 2}));
  ExpectNear(Values<float>((*out)[2]), sum, 1e-6f);
  // An id past the vocabulary is an error, not a read out of bounds.
  std::vector<int32_t> bad_ids = ids;
  bad_ids[5] = 10;
  KernelTester bad("EmbedLayerNormalization", 1, kMs);
  bad.Input<int32_t>({b, s}, bad_ids)
      .AbsentInput()
      .Input<float>({vocab, d}, word)
      .Input<float>({npos, d}, pos)
      .AbsentInput()
      .Input<float>({d}, gamma)
      .Input<float>({d}, beta);
  absl::StatusOr<std::vector<engine::Tensor>> r = bad.Run(CpuRegistry());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status();
}

// Naive attention over q [B, S, N*h], k [B, T, N*h], v [B, T, N*hv] (rows of the full key
// sequence, past included), with ORT's additive masks.
struct AttnRef {
  int64_t b, s, t, n, h, hv, past = 0;
  bool causal = false;
  float filter = -10000.0f;
  std::vector<int32_t> mask;     // [B] key lengths, [B, T] or [B, S, T]; empty: none
  std::vector<float> attn_bias;  // [B, N, S, T]; empty: none
  std::vector<float> Run(const std::vector<float>& q, const std::vector<float>& k,
                         const std::vector<float>& v, float scale) const {
    std::vector<float> out(b * s * n * hv, 0.0f);
    for (int64_t bi = 0; bi < b; ++bi) {
      for (int64_t hi = 0; hi < n; ++hi) {
        for (int64_t si = 0; si < s; ++si) {
          std::vector<double> p(t);
          double mx = -1e30;
          for (int64_t j = 0; j < t; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < h; ++e) {
              dot += q[(bi * s + si) * n * h + hi * h + e] * k[(bi * t + j) * n * h + hi * h + e];
            }
            double m = 0;
            if (mask.size() == static_cast<size_t>(b)) m = j >= mask[bi] ? filter : 0;
            if (mask.size() == static_cast<size_t>(b * t)) m = mask[bi * t + j] ? 0 : filter;
            if (mask.size() == static_cast<size_t>(b * s * t)) {
              m = mask[(bi * s + si) * t + j] ? 0 : filter;
            }
            if (causal && j > past + si) m += filter;
            if (!attn_bias.empty()) m += attn_bias[((bi * n + hi) * s + si) * t + j];
            p[j] = dot * scale + m;
            mx = std::max(mx, p[j]);
          }
          double sum = 0;
          for (double& x : p) sum += (x = std::exp(x - mx));
          for (int64_t e = 0; e < hv; ++e) {
            double acc = 0;
            for (int64_t j = 0; j < t; ++j)
              acc += p[j] / sum * v[(bi * t + j) * n * hv + hi * hv + e];
            out[(bi * s + si) * n * hv + hi * hv + e] = static_cast<float>(acc);
          }
        }
      }
    }
    return out;
  }
};

// x [rows, in] x w [in, cols] + bias.
std::vector<float> Project(const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& bias, int64_t rows, int64_t in, int64_t cols) {
  std::vector<float> y(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      double acc = bias.empty() ? 0 : bias[c];
      for (int64_t i = 0; i < in; ++i) acc += x[r * in + i] * w[i * cols + c];
      y[r * cols + c] = static_cast<float>(acc);
    }
  }
  return y;
}

// Columns [c0, c0 + n) of a [rows, cols] matrix.
std::vector<float> Columns(const std::vector<float>& m, int64_t rows, int64_t cols, int64_t c0,
                           int64_t n) {
  std::vector<float> out(rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < n; ++c) out[r * n + c] = m[r * cols + c0 + c];
  }
  return out;
}

TEST(ContribAttentionTest, MaskFormsCausalAndSizes) {
  const int64_t b = 2, s = 5, hidden = 12, n = 3;
  const auto x = RandomFloats(b * s * hidden, 20);
  struct Case {
    std::string name;
    std::vector<int64_t> sizes;  // qkv_hidden_sizes; empty: 3 x hidden
    std::vector<int32_t> mask;
    Shape mask_shape;
    bool causal;
    bool attn_bias;
  };
  const std::vector<Case> cases = {
      {"plain", {}, {}, {}, false, false},
      {"key_lengths", {}, {3, 5}, {2}, false, false},
      {"raw_2d", {}, {1, 1, 0, 1, 0, 1, 1, 1, 1, 1}, {2, 5}, false, false},
      {"raw_3d_causal", {}, std::vector<int32_t>(50, 1), {2, 5, 5}, true, false},
      {"causal_sizes", {12, 12, 6}, {}, {}, true, false},
      {"attention_bias", {}, {4, 2}, {2}, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t dq = c.sizes.empty() ? hidden : c.sizes[0];
    const int64_t dv = c.sizes.empty() ? hidden : c.sizes[2], cols = 2 * dq + dv;
    const auto w = RandomFloats(hidden * cols, 21), bias = RandomFloats(cols, 22);
    const auto qkv = Project(x, w, bias, b * s, hidden, cols);
    AttnRef ref{b, s, s, n, dq / n, dv / n};
    ref.causal = c.causal;
    ref.mask = c.mask;
    const auto ab = RandomFloats(b * n * s * s, 23);
    if (c.attn_bias) ref.attn_bias = ab;
    const auto expected =
        ref.Run(Columns(qkv, b * s, cols, 0, dq), Columns(qkv, b * s, cols, dq, dq),
                Columns(qkv, b * s, cols, 2 * dq, dv), 1.0f / std::sqrt(dq / n));
    KernelTester t("Attention", 1, kMs);
    t.Attr("num_heads", n).Attr("unidirectional", int64_t{c.causal});
    if (!c.sizes.empty()) t.Attr("qkv_hidden_sizes", c.sizes);
    t.Input<float>({b, s, hidden}, x)
        .Input<float>({hidden, cols}, w, true)
        .Input<float>({cols}, bias);
    if (c.mask.empty()) {
      t.AbsentInput();
    } else {
      t.Input<int32_t>(c.mask_shape, c.mask);
    }
    if (c.attn_bias) t.AbsentInput().Input<float>({b, n, s, s}, ab);
    auto out = t.Threads(2).Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{b, s, dv}));
    ExpectNear(Values<float>((*out)[0]), expected, 2e-5f);
    EXPECT_GT(t.workspace_bytes_declared(), 0u);
  }
}

TEST(ContribAttentionTest, PastAndPresent) {
  const int64_t b = 1, s = 2, past = 3, hidden = 8, n = 2, h = 4, t_len = past + s;
  const auto x = RandomFloats(b * s * hidden, 30), w = RandomFloats(hidden * 3 * hidden, 31),
             bias = RandomFloats(3 * hidden, 32), past_kv = RandomFloats(2 * b * n * past * h, 33);
  const auto qkv = Project(x, w, bias, b * s, hidden, 3 * hidden);
  // Full K and V rows [B, T, N*h]: the past (from [2, B, N, P, h]) then the new ones.
  std::vector<float> kfull(b * t_len * hidden), vfull(b * t_len * hidden);
  for (int64_t j = 0; j < t_len; ++j) {
    for (int64_t hi = 0; hi < n; ++hi) {
      for (int64_t e = 0; e < h; ++e) {
        for (int kv = 0; kv < 2; ++kv) {
          const float val = j < past
                                ? past_kv[((kv * n + hi) * past + j) * h + e]
                                : qkv[(j - past) * 3 * hidden + (kv + 1) * hidden + hi * h + e];
          (kv == 0 ? kfull : vfull)[j * hidden + hi * h + e] = val;
        }
      }
    }
  }
  AttnRef ref{b, s, t_len, n, h, h, past, true};
  const auto expected =
      ref.Run(Columns(qkv, s, 3 * hidden, 0, hidden), kfull, vfull, 1.0f / std::sqrt(float(h)));
  KernelTester t("Attention", 1, kMs);
  t.Attr("num_heads", n).Attr("unidirectional", int64_t{1});
  t.Input<float>({b, s, hidden}, x)
      .Input<float>({hidden, 3 * hidden}, w)
      .Input<float>({3 * hidden}, bias);
  t.AbsentInput().Input<float>({2, b, n, past, h}, past_kv).Outputs(2);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), expected, 2e-5f);
  EXPECT_EQ((*out)[1].shape(), (Shape{2, b, n, t_len, h}));
  const auto present = Values<float>((*out)[1]);
  EXPECT_NEAR(present[(1 * n + 1) * t_len * h + 4 * h + 2], vfull[4 * hidden + 1 * h + 2], 1e-5);
  EXPECT_EQ(present[0], past_kv[0]);
}

TEST(ContribAttentionTest, MultiHeadAttention) {
  const int64_t b = 2, s = 3, l = 4, d = 8, dv = 4, n = 2;
  const auto q = RandomFloats(b * s * d, 40), k = RandomFloats(b * l * d, 41),
             v = RandomFloats(b * l * dv, 42), bias = RandomFloats(2 * d + dv, 43);
  for (bool with_bias : {false, true}) {
    for (bool with_mask : {false, true}) {
      SCOPED_TRACE(::testing::Message() << with_bias << with_mask);
      auto qb = q, kb = k, vb = v;
      if (with_bias) {
        for (size_t i = 0; i < qb.size(); ++i) qb[i] += bias[i % d];
        for (size_t i = 0; i < kb.size(); ++i) kb[i] += bias[d + i % d];
        for (size_t i = 0; i < vb.size(); ++i) vb[i] += bias[2 * d + i % dv];
      }
      AttnRef ref{b, s, l, n, d / n, dv / n};
      if (with_mask) ref.mask = {1, 1, 0, 1, 1, 0, 0, 1};
      const auto expected = ref.Run(qb, kb, vb, 0.5f);
      KernelTester t("MultiHeadAttention", 1, kMs);
      t.Attr("num_heads", n).Attr("scale", 0.5f);
      t.Input<float>({b, s, d}, q).Input<float>({b, l, d}, k).Input<float>({b, l, dv}, v);
      if (with_bias) {
        t.Input<float>({2 * d + dv}, bias);
      } else {
        t.AbsentInput();
      }
      if (with_mask) t.Input<int32_t>({b, l}, ref.mask);
      auto out = t.Outputs(3).Threads(2).Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), (Shape{b, s, dv}));
      ExpectNear(Values<float>((*out)[0]), expected, 2e-5f);
      EXPECT_EQ((*out)[1].shape(), (Shape{b, n, l, d / n}));
      // present_key[b=1, head 1, row 2] is key row (1, 2)'s second half (+ bias).
      EXPECT_FLOAT_EQ(Values<float>((*out)[1])[((1 * n + 1) * l + 2) * 4 + 3],
                      kb[(1 * l + 2) * d + 4 + 3]);
    }
  }
}

TEST(ContribAttentionTest, Errors) {
  const auto x = RandomFloats(2 * 3 * 8, 50), w = RandomFloats(8 * 24, 51);
  {  // num_heads is required
    KernelTester t("Attention", 1, kMs);
    EXPECT_FALSE(t.Input<float>({2, 3, 8}, x).Input<float>({8, 24}, w).Run(CpuRegistry()).ok());
  }
  {  // 8 is not a multiple of 3 heads
    KernelTester t("Attention", 1, kMs);
    t.Attr("num_heads", int64_t{3}).Input<float>({2, 3, 8}, x).Input<float>({8, 24}, w);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // a mask of the wrong shape
    KernelTester t("Attention", 1, kMs);
    t.Attr("num_heads", int64_t{2}).Input<float>({2, 3, 8}, x).Input<float>({8, 24}, w);
    t.AbsentInput().Input<int32_t>({2, 4}, std::vector<int32_t>(8, 1));
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // weights whose rows are not the hidden size
    KernelTester t("Attention", 1, kMs);
    t.Attr("num_heads", int64_t{2}).Input<float>({2, 3, 8}, x).Input<float>({6, 32}, w);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // MultiHeadAttention's packed QKV form is refused
    KernelTester t("MultiHeadAttention", 1, kMs);
    t.Attr("num_heads", int64_t{2}).Input<float>({2, 3, 8}, x);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// RotaryEmbedding, SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and
// GroupQueryAttention against naive references written from the operators' definitions
// (ONNX Runtime's own outputs are checked in tests/ort_cases/genaiops), and their refusals.
#include <cmath>
#include <cstdint>
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

// Rotates one head vector at position p with caches [*, half].
void RefRotate(const float* x, const std::vector<float>& cos, const std::vector<float>& sin,
               int64_t p, int64_t half, int64_t head, bool interleaved, float* y) {
  for (int64_t i = 0; i < head; ++i) y[i] = x[i];
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const float c = cos[p * half + i], s = sin[p * half + i];
    y[a] = x[a] * c - x[b] * s;
    y[b] = x[b] * c + x[a] * s;
  }
}

TEST(RotaryEmbeddingTest, LayoutsInterleavedPartialAndOffsets) {
  const int64_t batch = 2, seq = 3, heads = 2, head = 8, max_pos = 16;
  for (bool four_d : {false, true}) {
    for (bool interleaved : {false, true}) {
      for (int64_t rotary : {int64_t{0}, int64_t{4}}) {
        for (bool offset : {false, true}) {
          SCOPED_TRACE(::testing::Message() << four_d << interleaved << rotary << offset);
          const int64_t half = (rotary > 0 ? rotary : head) / 2;
          const auto x = RandomFloats(batch * seq * heads * head, 1);
          const auto cos = RandomFloats(max_pos * half, 2), sin = RandomFloats(max_pos * half, 3);
          std::vector<int64_t> pos =
              offset ? std::vector<int64_t>{5} : std::vector<int64_t>{0, 1, 2, 7, 8, 9};
          std::vector<float> expected(x.size());
          for (int64_t n = 0; n < batch; ++n) {
            for (int64_t t = 0; t < seq; ++t) {
              for (int64_t h = 0; h < heads; ++h) {
                const int64_t off = four_d ? ((n * heads + h) * seq + t) * head
                                           : ((n * seq + t) * heads + h) * head;
                const int64_t p = offset ? pos[0] + t : pos[n * seq + t];
                RefRotate(x.data() + off, cos, sin, p, half, head, interleaved,
                          expected.data() + off);
              }
            }
          }
          KernelTester k("RotaryEmbedding", 1, kMs);
          k.Attr("interleaved", int64_t{interleaved});
          if (rotary > 0) k.Attr("rotary_embedding_dim", rotary).Attr("num_heads", heads);
          const Shape xs =
              four_d ? Shape{batch, heads, seq, head} : Shape{batch, seq, heads * head};
          k.Input<float>(xs, x)
              .Input<int64_t>(offset ? Shape{1} : Shape{batch, seq}, pos)
              .Input<float>({max_pos, half}, cos)
              .Input<float>({max_pos, half}, sin)
              .Outputs(1)
              .Threads(2);
          auto out = k.Run(CpuRegistry());
          ASSERT_TRUE(out.ok()) << out.status();
          EXPECT_EQ((*out)[0].shape(), xs);
          ExpectNear(Values<float>((*out)[0]), expected, 1e-6f);
        }
      }
    }
  }
}

TEST(RotaryEmbeddingTest, Refusals) {
  const auto x = RandomFloats(16, 1);
  KernelTester k("RotaryEmbedding", 1, kMs);
  k.Input<float>({1, 2, 8}, x)
      .Input<int64_t>({1, 2}, {3, 40})
      .Input<float>({16, 4}, RandomFloats(64, 2))
      .Input<float>({16, 4}, RandomFloats(64, 3))
      .Outputs(1);
  auto out = k.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("position 40"), std::string::npos) << out.status();
  KernelTester packed("RotaryEmbedding", 1, kMs);
  packed.Attr("is_packed_batching", int64_t{1})
      .Input<float>({1, 2, 8}, x)
      .Input<int64_t>({1, 2}, {0, 1})
      .Input<float>({16, 4}, RandomFloats(64, 2))
      .Input<float>({16, 4}, RandomFloats(64, 3))
      .Outputs(1);
  EXPECT_FALSE(packed.Run(CpuRegistry()).ok());
}

std::vector<float> RefRms(const std::vector<float>& x, int64_t rows, int64_t d,
                          const std::vector<float>& g, float eps, std::vector<float>* inv) {
  std::vector<float> y(x.size());
  inv->resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += double{x[r * d + i]} * x[r * d + i];
    const double v = 1.0 / std::sqrt(ss / d + eps);
    (*inv)[r] = static_cast<float>(v);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = static_cast<float>(x[r * d + i] * v * g[i]);
  }
  return y;
}

TEST(SimplifiedLayerNormTest, AxesAndStatistics) {
  const Shape s{2, 3, 8};
  const auto x = RandomFloats(s.NumElements(), 4, -3.0f, 3.0f);
  for (int64_t axis : {-1, 1}) {
    const int a = axis < 0 ? 2 : 1;
    const int64_t rows = s.SizeBetween(0, a), d = s.SizeFrom(a);
    const auto g = RandomFloats(d, 5);
    std::vector<float> inv;
    const auto expected = RefRms(x, rows, d, g, 1e-5f, &inv);
    KernelTester t("SimplifiedLayerNormalization", 17);
    t.Attr("axis", axis)
        .Input<float>(s, x)
        .Input<float>(Shape(s.dims().subspan(a)), g)
        .Outputs(2)
        .Threads(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
    Shape stats = s;
    for (int i = a; i < 3; ++i) stats[i] = 1;
    EXPECT_EQ((*out)[1].shape(), stats);
    ExpectNear(Values<float>((*out)[1]), inv, 1e-5f);
  }
  KernelTester bad("SimplifiedLayerNormalization", 17);
  bad.Input<float>(s, x).Input<float>({7}, RandomFloats(7, 1)).Outputs(1);
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
  KernelTester stash("SimplifiedLayerNormalization", 17);
  stash.Attr("stash_type", int64_t{0}).Input<float>(s, x).Input<float>({8}, x).Outputs(1);
  EXPECT_FALSE(stash.Run(CpuRegistry()).ok());
}

TEST(SkipSimplifiedLayerNormTest, SkipShapesBiasAndOutputs) {
  const int64_t b = 2, sq = 3, d = 16;
  const auto x = RandomFloats(b * sq * d, 6), g = RandomFloats(d, 7), bias = RandomFloats(d, 8);
  for (int skip_form = 0; skip_form < 3; ++skip_form) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(::testing::Message() << skip_form << with_bias);
      const Shape ks = skip_form == 0   ? Shape{b, sq, d}
                       : skip_form == 1 ? Shape{1, sq, d}
                                        : Shape{sq, d};
      const auto skip = RandomFloats(ks.NumElements(), 9);
      std::vector<float> sum(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        sum[i] = x[i] + skip[i % skip.size()] + (with_bias ? bias[i % d] : 0.0f);
      }
      std::vector<float> inv;
      const auto expected = RefRms(sum, b * sq, d, g, 1e-6f, &inv);
      KernelTester t("SkipSimplifiedLayerNormalization", 1, kMs);
      t.Attr("epsilon", 1e-6f)
          .Input<float>({b, sq, d}, x)
          .Input<float>(ks, skip)
          .Input<float>({d}, g);
      if (with_bias) t.Input<float>({d}, bias);
      t.Outputs(4).UnwantedOutput(1).Threads(2);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
      EXPECT_EQ((*out)[2].shape(), (Shape{b, sq, 1}));
      ExpectNear(Values<float>((*out)[2]), inv, 1e-5f);
      ExpectNear(Values<float>((*out)[3]), sum, 1e-6f);
    }
  }
  KernelTester bad("SkipSimplifiedLayerNormalization", 1, kMs);
  bad.Input<float>({b, sq, d}, x)
      .Input<float>({2, d}, RandomFloats(2 * d, 1))
      .Input<float>({d}, g)
      .Outputs(1);
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
}

// Naive GQA over one batch of sequences with the cache layout of the op.
struct GqaCase {
  int64_t batch = 2, seq = 1, heads = 4, kv_heads = 2, head = 8, past = 6;
  std::vector<int32_t> seqlens_k;  // total_b - 1
  int32_t total = 0;
  bool rotary = false, interleaved = false, packed = false;
  int64_t window = -1;
  float softcap = 0;
};

TEST(GroupQueryAttentionTest, PrefillDecodeWindowSoftcapRotaryPacked) {
  std::vector<GqaCase> cases;
  {  // first prompt, no past
    GqaCase c;
    c.seq = 5, c.past = 0, c.total = 5, c.seqlens_k = {4, 4};
    cases.push_back(c);
    c.rotary = true;
    cases.push_back(c);
    c.packed = true, c.interleaved = true;
    cases.push_back(c);
  }
  {  // decode into a shared buffer of 8, uneven lengths
    GqaCase c;
    c.seq = 1, c.past = 8, c.total = 6, c.seqlens_k = {5, 3};
    cases.push_back(c);
    c.rotary = true, c.window = 2;
    cases.push_back(c);
    c.softcap = 2.0f, c.rotary = false, c.window = -1;
    cases.push_back(c);
  }
  {  // decode with past shorter than total (present grows)
    GqaCase c;
    c.seq = 1, c.past = 4, c.total = 5, c.seqlens_k = {4, 4};
    cases.push_back(c);
  }
  {  // a second prompt chunk (S > 1 after a past)
    GqaCase c;
    c.seq = 3, c.past = 8, c.total = 7, c.seqlens_k = {6, 6}, c.rotary = true;
    cases.push_back(c);
  }
  uint32_t seed = 20;
  for (const GqaCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "S=" << c.seq << " past=" << c.past << " rotary=" << c.rotary
                 << " packed=" << c.packed << " window=" << c.window << " softcap=" << c.softcap);
    const int64_t b = c.batch, s = c.seq, n = c.heads, kv = c.kv_heads, h = c.head;
    const int64_t present = std::max<int64_t>(c.total, c.past), half = h / 2, max_pos = 16;
    const auto q = RandomFloats(b * s * n * h, seed++), k = RandomFloats(b * s * kv * h, seed++),
               v = RandomFloats(b * s * kv * h, seed++);
    const auto pk = RandomFloats(b * kv * c.past * h, seed++),
               pv = RandomFloats(b * kv * c.past * h, seed++);
    const auto cos = RandomFloats(max_pos * half, seed++),
               sin = RandomFloats(max_pos * half, seed++);
    const bool first = s > 1 && s == c.total;
    // Reference present and output.
    std::vector<float> ek(b * kv * present * h, 0.0f), ev(ek.size(), 0.0f);
    std::vector<float> eo(b * s * n * h, 0.0f);
    for (int64_t i = 0; i < b; ++i) {
      const int64_t tb = c.seqlens_k[i] + 1, past_b = first ? 0 : tb - s;
      for (int64_t g = 0; g < kv; ++g) {
        for (int64_t t = 0; t < present; ++t) {
          for (int64_t e = 0; e < h; ++e) {
            const int64_t dst = ((i * kv + g) * present + t) * h + e;
            if (t < past_b && t < c.past) {
              ek[dst] = pk[((i * kv + g) * c.past + t) * h + e];
              ev[dst] = pv[((i * kv + g) * c.past + t) * h + e];
            } else if (t < c.past && c.past == present) {  // shared buffer keeps the rest
              ek[dst] = pk[((i * kv + g) * c.past + t) * h + e];
              ev[dst] = pv[((i * kv + g) * c.past + t) * h + e];
            }
          }
        }
        for (int64_t t = 0; t < s; ++t) {
          const int64_t pos = past_b + t;
          float* kd = &ek[((i * kv + g) * present + pos) * h];
          const float* ksrc = &k[((i * s + t) * kv + g) * h];
          if (c.rotary) {
            RefRotate(ksrc, cos, sin, pos, half, h, c.interleaved, kd);
          } else {
            std::copy(ksrc, ksrc + h, kd);
          }
          const float* vsrc = &v[((i * s + t) * kv + g) * h];
          std::copy(vsrc, vsrc + h, &ev[((i * kv + g) * present + pos) * h]);
        }
      }
      for (int64_t hd = 0; hd < n; ++hd) {
        for (int64_t t = 0; t < s; ++t) {
          const int64_t pos = past_b + t;
          std::vector<float> qr(h);
          const float* qsrc = &q[((i * s + t) * n + hd) * h];
          if (c.rotary) {
            RefRotate(qsrc, cos, sin, pos, half, h, c.interleaved, qr.data());
          } else {
            qr.assign(qsrc, qsrc + h);
          }
          const int64_t g = hd / (n / kv);
          const int64_t start = c.window > 0 ? std::max<int64_t>(0, pos - c.window) : 0;
          std::vector<double> sc;
          double mx = -1e30;
          for (int64_t j = start; j <= pos; ++j) {
            double d = 0;
            for (int64_t e = 0; e < h; ++e) d += qr[e] * ek[((i * kv + g) * present + j) * h + e];
            d /= std::sqrt(static_cast<double>(h));
            if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
            sc.push_back(d);
            mx = std::max(mx, d);
          }
          double sum = 0;
          for (double& x : sc) sum += (x = std::exp(x - mx));
          for (size_t j = 0; j < sc.size(); ++j) {
            for (int64_t e = 0; e < h; ++e) {
              eo[((i * s + t) * n + hd) * h + e] += static_cast<float>(
                  sc[j] / sum * ev[((i * kv + g) * present + start + j) * h + e]);
            }
          }
        }
      }
    }
    KernelTester t("GroupQueryAttention", 1, kMs);
    t.Attr("num_heads", n).Attr("kv_num_heads", kv);
    if (c.rotary)
      t.Attr("do_rotary", int64_t{1}).Attr("rotary_interleaved", int64_t{c.interleaved});
    if (c.window > 0) t.Attr("local_window_size", c.window);
    if (c.softcap > 0) t.Attr("softcap", c.softcap);
    if (c.packed) {
      std::vector<float> qkv;
      for (int64_t r = 0; r < b * s; ++r) {
        qkv.insert(qkv.end(), q.begin() + r * n * h, q.begin() + (r + 1) * n * h);
        qkv.insert(qkv.end(), k.begin() + r * kv * h, k.begin() + (r + 1) * kv * h);
        qkv.insert(qkv.end(), v.begin() + r * kv * h, v.begin() + (r + 1) * kv * h);
      }
      t.Input<float>({b, s, (n + 2 * kv) * h}, qkv).AbsentInput().AbsentInput();
    } else {
      t.Input<float>({b, s, n * h}, q)
          .Input<float>({b, s, kv * h}, k)
          .Input<float>({b, s, kv * h}, v);
    }
    if (c.past > 0) {
      t.Input<float>({b, kv, c.past, h}, pk).Input<float>({b, kv, c.past, h}, pv);
    } else {
      t.AbsentInput().AbsentInput();
    }
    t.Input<int32_t>({b}, c.seqlens_k).Input<int32_t>({}, {c.total});
    if (c.rotary) t.Input<float>({max_pos, half}, cos).Input<float>({max_pos, half}, sin);
    t.Outputs(3).Threads(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{b, s, n * h}));
    EXPECT_EQ((*out)[1].shape(), (Shape{b, kv, present, h}));
    ExpectNear(Values<float>((*out)[0]), eo, 1e-5f);
    // Only the valid prefix of each sequence's cache is defined when present is a new buffer.
    std::vector<float> gk = Values<float>((*out)[1]), gv = Values<float>((*out)[2]);
    for (int64_t i = 0; i < b; ++i) {
      const int64_t tb = c.seqlens_k[i] + 1;
      for (int64_t g = 0; g < kv; ++g) {
        for (int64_t tt = tb; tt < present; ++tt) {
          for (int64_t e = 0; e < h; ++e) {
            const int64_t idx = ((i * kv + g) * present + tt) * h + e;
            if (c.past != present) gk[idx] = ek[idx], gv[idx] = ev[idx];
          }
        }
      }
    }
    ExpectNear(gk, ek, 1e-6f);
    ExpectNear(gv, ev, 1e-6f);
  }
}

TEST(GroupQueryAttentionTest, Refusals) {
  auto base = [](KernelTester& t, int32_t seqlen, int32_t total) {
    t.Attr("num_heads", int64_t{2}).Attr("kv_num_heads", int64_t{1});
    t.Input<float>({1, 1, 8}, RandomFloats(8, 1))
        .Input<float>({1, 1, 4}, RandomFloats(4, 2))
        .Input<float>({1, 1, 4}, RandomFloats(4, 3))
        .Input<float>({1, 1, 4, 4}, RandomFloats(16, 4))
        .Input<float>({1, 1, 4, 4}, RandomFloats(16, 5))
        .Input<int32_t>({1}, {seqlen})
        .Input<int32_t>({1}, {total})
        .Outputs(3);
  };
  {
    KernelTester t("GroupQueryAttention", 1, kMs);
    base(t, 3, 4);
    EXPECT_TRUE(t.Run(CpuRegistry()).ok());
  }
  {  // seqlens_k past the buffer
    KernelTester t("GroupQueryAttention", 1, kMs);
    base(t, 9, 10);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // heads not a multiple of kv heads
    KernelTester t("GroupQueryAttention", 1, kMs);
    t.Attr("num_heads", int64_t{3}).Attr("kv_num_heads", int64_t{2});
    t.Input<float>({1, 1, 6}, RandomFloats(6, 1)).Outputs(3);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // do_rotary without caches
    KernelTester t("GroupQueryAttention", 1, kMs);
    t.Attr("do_rotary", int64_t{1});
    base(t, 3, 4);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

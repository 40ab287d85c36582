// com.microsoft QGemm, QLinearSoftmax and QLinearAveragePool against naive references (QGemm:
// every transA / transB pair, u8 / s8 operands, constant and fed B, per column parameters, each
// C form, 8-bit and float Y, 1 and 2 threads) and their errors on bad input.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

template <typename T>
std::vector<T> Random(int64_t n, int lo, int hi, std::mt19937& gen) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(d(gen));
  return v;
}

struct GemmCase {
  bool trans_a = false, trans_b = false, b_constant = true, per_column = false;
  Shape c_shape;  // rank 0 with has_c: a scalar
  bool has_c = false, quantized = true;
  float alpha = 1.0f;
  int threads = 1;
};

// A u8 x (TB) QGemm of [M, K] x [K, N] against the int64 reference.
template <typename TB>
void CheckGemm(const GemmCase& c) {
  constexpr int64_t m = 6, k = 37, n = 9;
  std::mt19937 gen(7 + 3 * c.trans_a + 5 * c.trans_b + 11 * c.per_column);
  const std::vector<uint8_t> a = Random<uint8_t>(m * k, 0, 255, gen);
  const int lo = std::numeric_limits<TB>::min() / 2, hi = std::numeric_limits<TB>::max() / 2;
  const std::vector<TB> b = Random<TB>(k * n, lo, hi, gen);
  const uint8_t za = 131;
  const int64_t cols = c.per_column ? n : 1;
  const std::vector<TB> zb = Random<TB>(cols, lo / 4, hi / 4, gen);
  std::vector<float> bs(cols);
  for (int64_t j = 0; j < cols; ++j) bs[j] = 0.001f * static_cast<float>(j + 2);
  const int64_t c_elems = c.has_c ? c.c_shape.NumElements() : 0;
  const std::vector<int32_t> bias = Random<int32_t>(c_elems, -4000, 4000, gen);
  // Operands as stored (transposed where the attribute says so).
  std::vector<uint8_t> a_in(m * k);
  std::vector<TB> b_in(k * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) a_in[c.trans_a ? p * m + i : i * k + p] = a[i * k + p];
  }
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) b_in[c.trans_b ? j * k + p : p * n + j] = b[p * n + j];
  }
  KernelTester t("QGemm", 1, "com.microsoft");
  t.Attr("transA", int64_t{c.trans_a}).Attr("transB", int64_t{c.trans_b}).Threads(c.threads);
  if (c.alpha != 1.0f) t.Attr("alpha", c.alpha);
  t.Input<uint8_t>(c.trans_a ? Shape{k, m} : Shape{m, k}, a_in)
      .Input<float>({}, {0.02f})
      .Input<uint8_t>({}, {za});
  t.Input<TB>(c.trans_b ? Shape{n, k} : Shape{k, n}, b_in, c.b_constant);
  t.Input<float>(c.per_column ? Shape{n} : Shape{}, bs);
  t.Input<TB>(c.per_column ? Shape{n} : Shape{}, zb);
  if (c.has_c) {
    t.Input<int32_t>(c.c_shape, bias, /*constant=*/true);
  } else if (c.quantized) {
    t.AbsentInput();
  }
  const float y_scale = 0.05f;
  const uint8_t y_zp = 100;
  if (c.quantized) t.Input<float>({}, {y_scale}).Input<uint8_t>({}, {y_zp});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (Shape{m, n}));
  const int64_t c_rows = c.c_shape.rank() == 2 ? c.c_shape[0] : 1;
  const int64_t c_cols = c.c_shape.rank() >= 1 ? c.c_shape[c.c_shape.rank() - 1] : 1;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += (int64_t{a[i * k + p]} - za) * (int64_t{b[p * n + j]} - zb[c.per_column ? j : 0]);
      }
      if (c.has_c) acc += bias[(c_rows == 1 ? 0 : i * c_cols) + (c_cols == 1 ? 0 : j)];
      const float mul = c.alpha * 0.02f * bs[c.per_column ? j : 0];
      if (c.quantized) {
        float v = std::nearbyint(static_cast<float>(acc) * (mul / y_scale)) + y_zp;
        v = std::min(255.0f, std::max(0.0f, v));
        EXPECT_EQ(Values<uint8_t>((*out)[0])[i * n + j], static_cast<uint8_t>(v)) << i << "," << j;
      } else {
        EXPECT_FLOAT_EQ(Values<float>((*out)[0])[i * n + j], mul * static_cast<float>(acc))
            << i << "," << j;
      }
    }
  }
}

TEST(QGemmTest, MatchesReferenceForEveryLayout) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool constant : {true, false}) {
        GemmCase c;
        c.trans_a = ta, c.trans_b = tb, c.b_constant = constant;
        c.per_column = tb;
        c.has_c = true;
        c.c_shape = Shape{9};
        SCOPED_TRACE(::testing::Message()
                     << "transA " << ta << " transB " << tb << " constant " << constant);
        CheckGemm<int8_t>(c);
        CheckGemm<uint8_t>(c);
      }
    }
  }
}

TEST(QGemmTest, BiasFormsFloatOutputAlphaAndThreads) {
  for (const Shape& cs : {Shape{}, Shape{1, 9}, Shape{6, 1}, Shape{6, 9}}) {
    GemmCase c;
    c.has_c = true;
    c.c_shape = cs;
    c.threads = 2;
    SCOPED_TRACE(cs.ToString());
    CheckGemm<int8_t>(c);
  }
  GemmCase f;
  f.quantized = false;
  f.per_column = true;
  f.alpha = 0.5f;
  CheckGemm<int8_t>(f);
  f.has_c = true;
  f.c_shape = Shape{9};
  f.trans_b = true;
  CheckGemm<uint8_t>(f);
}

KernelTester& GemmInputs(KernelTester& t, const Shape& a, const Shape& b, const Shape& bs) {
  return t.Input<uint8_t>(a, std::vector<uint8_t>(a.NumElements(), 1))
      .Input<float>({}, {0.1f})
      .Input<uint8_t>({}, {0})
      .Input<int8_t>(b, std::vector<int8_t>(b.NumElements(), 1))
      .Input<float>(bs, std::vector<float>(bs.NumElements(), 0.1f))
      .Input<int8_t>({}, {0});
}

TEST(QGemmTest, RejectsBadInput) {
  struct Bad {
    Shape a, b, bs;
    Shape c;
    bool with_c;
    const char* message;
  };
  const Bad cases[] = {
      {{2, 3, 4}, {4, 5}, {}, {}, false, "must be 2-D"},
      {{2, 3}, {4, 5}, {}, {}, false, "has K = 3"},
      {{2, 4}, {4, 5}, {3}, {}, false, "b_scale"},
      {{2, 4}, {4, 5}, {}, {3}, true, "does not broadcast"},
      {{2, 4}, {4, 5}, {}, {2, 5, 1}, true, "does not broadcast"},
  };
  for (const Bad& bad : cases) {
    KernelTester t("QGemm", 1, "com.microsoft");
    GemmInputs(t, bad.a, bad.b, bad.bs);
    if (bad.with_c) {
      t.Input<int32_t>(bad.c, std::vector<int32_t>(bad.c.NumElements(), 0));
    }
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok()) << bad.message;
    EXPECT_NE(out.status().message().find(bad.message), std::string::npos) << out.status();
  }
  // A float C.
  KernelTester t("QGemm", 1, "com.microsoft");
  GemmInputs(t, {2, 4}, {4, 5}, {}).Input<float>({5}, std::vector<float>(5, 0.0f));
  EXPECT_FALSE(t.Run(CpuRegistry()).ok());
}

TEST(QLinearSoftmaxTest, MatchesReferenceAlongAnAxisAndAsRows) {
  const Shape s{2, 3, 4};
  std::mt19937 gen(3);
  const std::vector<int8_t> x = Random<int8_t>(s.NumElements(), -128, 127, gen);
  const float xs = 0.07f, ys = 1.0f / 256;
  for (int64_t opset : {12, 13}) {
    KernelTester t("QLinearSoftmax", 1, "com.microsoft");
    t.Attr("axis", int64_t{1}).Attr("opset", opset);
    t.Input<int8_t>(s, x).Input<float>({}, {xs}).Input<int8_t>({}, {5}).Input<float>({}, {ys});
    t.Input<int8_t>({}, {-128});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<int8_t> y = Values<int8_t>((*out)[0]);
    // opset 12: rows of 12 (dims 1 and 2 together); 13: along dim 1 (3 elements, stride 4).
    const int64_t length = opset < 13 ? 12 : 3, inner = opset < 13 ? 1 : 4;
    for (int64_t row = 0; row < 2 * inner; ++row) {
      const int64_t base = (row / inner) * length * inner + row % inner;
      double sum = 0;
      for (int64_t i = 0; i < length; ++i) sum += std::exp(xs * x[base + i * inner]);
      for (int64_t i = 0; i < length; ++i) {
        const double want = std::exp(xs * x[base + i * inner]) / sum / ys - 128;
        EXPECT_NEAR(y[base + i * inner], std::min(127.0, std::round(want)), 1.0)
            << "opset " << opset << " at " << base + i * inner;
      }
    }
  }
  KernelTester missing("QLinearSoftmax", 1, "com.microsoft");
  missing.Input<int8_t>(s, x).Input<float>({}, {xs}).Input<int8_t>({}, {5});
  missing.Input<float>({}, {ys}).Input<int8_t>({}, {-128});
  EXPECT_FALSE(missing.Run(CpuRegistry()).ok());  // no opset attribute
}

TEST(QLinearAveragePoolTest, PadsCountIncludePadAndChannelsLast) {
  // X [1, 1, 3, 3] = 1..9 (zero point 0, scale 1), kernel 2x2, stride 2, pads 1: windows
  // {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}.
  const std::vector<uint8_t> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int64_t include : {0, 1}) {
    for (int64_t last : {0, 1}) {
      KernelTester t("QLinearAveragePool", 1, "com.microsoft");
      t.Attr("kernel_shape", std::vector<int64_t>{2, 2})
          .Attr("strides", std::vector<int64_t>{2, 2})
          .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
          .Attr("count_include_pad", include)
          .Attr("channels_last", last);
      t.Input<uint8_t>(last ? Shape{1, 3, 3, 1} : Shape{1, 1, 3, 3}, x)
          .Input<float>({}, {1.0f})
          .Input<uint8_t>({}, {0})
          .Input<float>({}, {0.5f})
          .Input<uint8_t>({}, {10});
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), last ? (Shape{1, 2, 2, 1}) : (Shape{1, 1, 2, 2}));
      // Means (exclude pad): 1, 2.5, 5.5, 7; include pad (4 each): 0.25, 1.25, 2.75, 7.
      const std::vector<uint8_t> want =
          include ? std::vector<uint8_t>{10, 12, 16, 24} : std::vector<uint8_t>{12, 15, 21, 24};
      EXPECT_EQ(Values<uint8_t>((*out)[0]), want) << include << last;
    }
  }
  KernelTester bad("QLinearAveragePool", 1, "com.microsoft");
  bad.Attr("kernel_shape", std::vector<int64_t>{2, 2});
  bad.Input<uint8_t>({1, 9}, x).Input<float>({}, {1.0f}).Input<uint8_t>({}, {0});
  bad.Input<float>({}, {1.0f}).Input<uint8_t>({}, {0});
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

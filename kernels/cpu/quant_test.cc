// The quantization kernels against naive references: QuantizeLinear / DequantizeLinear per
// tensor, per axis and blocked, round half to even and saturation, int8 / uint8 / int16 / int32;
// DynamicQuantizeLinear's parameters; MatMulInteger (zero points scalar, per row, per column,
// batch broadcasting, 1-D operands) and ConvInteger (pads, strides, dilations, groups, per
// channel weight zero points), 1 and 2 threads; errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
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

TEST(QuantizeLinearTest, RoundsHalfToEvenAndSaturates) {
  KernelTester t("QuantizeLinear", 13);
  t.Input<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 300.f, -300.f, 127.49f})
      .Input<float>({}, {1.0f})
      .Input<uint8_t>({}, {10});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{10, 12, 12, 10, 8, 255, 0, 137}));

  KernelTester s("QuantizeLinear", 10);
  s.Input<float>({6}, {0.5f, 1.5f, -2.5f, 1000.f, -1000.f, 3.f})
      .Input<float>({}, {0.5f})
      .Input<int8_t>({}, {-1});
  out = s.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int8_t>((*out)[0]), (std::vector<int8_t>{0, 2, -6, 127, -128, 5}));
}

TEST(QuantizeLinearTest, DefaultsToUint8WithoutZeroPoint) {
  KernelTester t("QuantizeLinear", 19);
  t.Input<float>({3}, {-1.f, 2.f, 3.4f}).Input<float>({}, {2.0f});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DataType::kUint8);
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 1, 2}));
}

std::vector<float> Ramp(int64_t n, float step, float start) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(QuantizeLinearTest, PerAxisMatchesReference) {
  const Shape s{2, 3, 5};
  const std::vector<float> x = Ramp(30, 0.37f, -5.0f);
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    const int a = axis < 0 ? axis + 3 : static_cast<int>(axis);
    const int64_t d = s[a];
    std::vector<float> scale(d);
    std::vector<int8_t> zp(d);
    for (int64_t i = 0; i < d; ++i) {
      scale[i] = 0.05f * static_cast<float>(i + 1);
      zp[i] = static_cast<int8_t>(i * 3 - 4);
    }
    for (int threads : {1, 2}) {
      KernelTester t("QuantizeLinear", 13);
      t.Attr("axis", axis).Threads(threads);
      t.Input<float>(s, x).Input<float>({d}, scale).Input<int8_t>({d}, zp);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      const auto y = Values<int8_t>((*out)[0]);
      const int64_t inner = s.SizeFrom(a + 1);
      for (int64_t i = 0; i < 30; ++i) {
        const int64_t c = (i / inner) % d;
        const float v = std::min(127.f, std::max(-128.f, std::nearbyint(x[i] / scale[c]) + zp[c]));
        ASSERT_EQ(y[i], static_cast<int8_t>(v)) << i;
      }
    }
  }
}

TEST(QuantizeLinearTest, BlockedMatchesReference) {
  // x [4, 5], axis 1, block_size 2: scale [4, 3].
  const std::vector<float> x = Ramp(20, 0.9f, -9.0f);
  const std::vector<float> scale = Ramp(12, 0.1f, 0.2f);
  std::vector<uint16_t> zp(12);
  for (int i = 0; i < 12; ++i) zp[i] = static_cast<uint16_t>(1000 * i);
  KernelTester t("QuantizeLinear", 21);
  t.Attr("axis", int64_t{1}).Attr("block_size", int64_t{2});
  t.Input<float>({4, 5}, x).Input<float>({4, 3}, scale).Input<uint16_t>({4, 3}, zp);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const auto y = Values<uint16_t>((*out)[0]);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 5; ++c) {
      const int p = r * 3 + c / 2;
      const float v =
          std::min(65535.f, std::max(0.f, std::nearbyint(x[r * 5 + c] / scale[p]) + zp[p]));
      EXPECT_EQ(y[r * 5 + c], static_cast<uint16_t>(v)) << r << "," << c;
    }
  }
}

TEST(QuantizeLinearTest, RefusesBadInput) {
  {  // per-axis scale of the wrong size
    KernelTester t("QuantizeLinear", 13);
    t.Input<float>({2, 3}, Ramp(6, 1, 0)).Input<float>({2}, {1, 1});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("1-D scale of 3"), std::string::npos) << out.status();
  }
  {  // per-axis before opset 13
    KernelTester t("QuantizeLinear", 10);
    t.Input<float>({2, 3}, Ramp(6, 1, 0)).Input<float>({3}, {1, 1, 1});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // zero point shape differs from the scale's
    KernelTester t("QuantizeLinear", 13);
    t.Input<float>({2, 3}, Ramp(6, 1, 0)).Input<float>({3}, {1, 1, 1}).Input<uint8_t>({}, {0});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // float8 output (e4m3fn: 1 is 0x38, 2 is 0x40; 1000 saturates to 448, 0x7E); at opset 13
     // refused
    KernelTester t("QuantizeLinear", 21);
    t.Attr("output_dtype", int64_t{17});
    t.Input<float>({3}, {1, 2, 1000}).Input<float>({}, {1});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype(), DataType::kFloat8E4M3FN);
    EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0x38, 0x40, 0x7E}));
    KernelTester old("QuantizeLinear", 13);
    old.Input<float>({2}, {1, 2})
        .Input<float>({}, {1})
        .RawInput(DataType::kFloat8E4M3FN, {}, "\0", 1);
    EXPECT_FALSE(old.Run(CpuRegistry()).ok());
  }
  {  // blocked with a wrong scale shape
    KernelTester t("QuantizeLinear", 21);
    t.Attr("axis", int64_t{0}).Attr("block_size", int64_t{2});
    t.Input<float>({5}, Ramp(5, 1, 0)).Input<float>({2}, {1, 1});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
}

TEST(DequantizeLinearTest, PerTensorPerAxisAndInt32) {
  {
    KernelTester t("DequantizeLinear", 10);
    t.Input<uint8_t>({4}, {0, 3, 128, 255}).Input<float>({}, {0.5f}).Input<uint8_t>({}, {128});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{-64.f, -62.5f, 0.f, 63.5f}));
  }
  {
    KernelTester t("DequantizeLinear", 13);
    t.Attr("axis", int64_t{0});
    t.Input<int8_t>({2, 2}, {-128, 127, 5, -5})
        .Input<float>({2}, {1.0f, 0.25f})
        .Input<int8_t>({2}, {0, 1});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{-128.f, 127.f, 1.f, -1.5f}));
  }
  {
    KernelTester t("DequantizeLinear", 13);
    t.Input<int32_t>({3}, {-100000, 0, 123456}).Input<float>({}, {0.001f});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]),
              (std::vector<float>{-100000 * 0.001f, 0.f, 123456 * 0.001f}));
  }
  {  // int32 with a non-zero zero point
    KernelTester t("DequantizeLinear", 13);
    t.Input<int32_t>({1}, {5}).Input<float>({}, {1.f}).Input<int32_t>({}, {3});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {  // blocked, opset 21, int16
    KernelTester t("DequantizeLinear", 21);
    t.Attr("axis", int64_t{0}).Attr("block_size", int64_t{2});
    t.Input<int16_t>({3, 1}, {100, -200, 300})
        .Input<float>({2, 1}, {0.5f, 2.f})
        .Input<int16_t>({2, 1}, {0, 100});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{50.f, -100.f, 400.f}));
  }
}

TEST(DynamicQuantizeLinearTest, ParametersAndValues) {
  const std::vector<float> x = {-1.0f, 0.0f, 2.0f, 3.0f, 0.5f};
  KernelTester t("DynamicQuantizeLinear", 11);
  t.Input<float>({5}, x).Outputs(3);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const float scale = 4.0f / 255.0f;
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{scale}));
  const float zp = std::nearbyint(1.0f / scale);
  EXPECT_EQ(Values<uint8_t>((*out)[2]), (std::vector<uint8_t>{static_cast<uint8_t>(zp)}));
  const auto y = Values<uint8_t>((*out)[0]);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], static_cast<uint8_t>(
                        std::min(255.f, std::max(0.f, std::nearbyint(x[i] / scale) + zp))));
  }
  // All zeros: scale 1, zero point 0 (ONNX Runtime's convention).
  KernelTester z("DynamicQuantizeLinear", 11);
  z.Input<float>({3}, {0, 0, 0}).Outputs(3);
  out = z.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1.0f}));
  EXPECT_EQ(Values<uint8_t>((*out)[2]), (std::vector<uint8_t>{0}));
}

template <typename T>
std::vector<T> Pattern(int64_t n, int mul, int mod, int offset) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>((i * mul) % mod + offset);
  return v;
}

TEST(MatMulIntegerTest, ZeroPointsAndBroadcast) {
  // A [2, 1, 3, 4] uint8, B [3, 4, 5] int8 -> Y [2, 3, 3, 5]; a_zp scalar, b_zp per column.
  const Shape as{2, 1, 3, 4}, bs{3, 4, 5};
  const auto a = Pattern<uint8_t>(24, 37, 256, 0);
  const auto b = Pattern<int8_t>(60, 53, 256, -128);
  const std::vector<int8_t> bzp = {-3, 0, 7, 100, -128};
  for (int threads : {1, 2}) {
    KernelTester t("MatMulInteger", 10);
    t.Threads(threads);
    t.Input<uint8_t>(as, a).Input<int8_t>(bs, b).Input<uint8_t>({}, {131}).Input<int8_t>({5}, bzp);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 3, 5}));
    const auto y = Values<int32_t>((*out)[0]);
    for (int i0 = 0; i0 < 2; ++i0)
      for (int i1 = 0; i1 < 3; ++i1)
        for (int m = 0; m < 3; ++m)
          for (int n = 0; n < 5; ++n) {
            int32_t acc = 0;
            for (int k = 0; k < 4; ++k) {
              acc += (a[(i0 * 3 + m) * 4 + k] - 131) * (b[(i1 * 4 + k) * 5 + n] - bzp[n]);
            }
            ASSERT_EQ(y[((i0 * 3 + i1) * 3 + m) * 5 + n], acc);
          }
  }
}

TEST(MatMulIntegerTest, PerRowAndOneDimensional) {
  // A [3, 2] int8 with a per-row zero point, B [2] uint8 (1-D): Y [3].
  KernelTester t("MatMulInteger", 10);
  t.Input<int8_t>({3, 2}, {1, 2, 3, 4, -5, 6})
      .Input<uint8_t>({2}, {10, 20})
      .Input<int8_t>({3}, {1, 0, -1})
      .Input<uint8_t>({}, {5});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{3}));
  EXPECT_EQ(Values<int32_t>((*out)[0]),
            (std::vector<int32_t>{0 * 5 + 1 * 15, 3 * 5 + 4 * 15, -4 * 5 + 7 * 15}));
  // Mismatched K.
  KernelTester bad("MatMulInteger", 10);
  bad.Input<uint8_t>({2, 3}, Pattern<uint8_t>(6, 1, 9, 0)).Input<uint8_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
  // A zero point of the wrong type.
  KernelTester badzp("MatMulInteger", 10);
  badzp.Input<uint8_t>({1, 1}, {1}).Input<uint8_t>({1, 1}, {1}).Input<int8_t>({}, {0});
  EXPECT_FALSE(badzp.Run(CpuRegistry()).ok());
}

TEST(ConvIntegerTest, MatchesReference) {
  // x [2, 4, 5, 6] uint8, w [6, 2, 3, 2] uint8 (group 2), pads, strides, dilations.
  const int64_t n = 2, c = 4, h = 5, wd = 6, m = 6, g = 2, kh = 3, kw = 2;
  const auto x = Pattern<uint8_t>(n * c * h * wd, 29, 256, 0);
  const auto w = Pattern<uint8_t>(m * (c / g) * kh * kw, 41, 256, 0);
  const std::vector<uint8_t> wzp = {0, 1, 128, 255, 7, 100};
  const int64_t sh = 2, sw = 1, dh = 1, dw = 2, ph0 = 1, pw0 = 0, ph1 = 1, pw1 = 2;
  const int64_t oh = (h + ph0 + ph1 - ((kh - 1) * dh + 1)) / sh + 1;
  const int64_t ow = (wd + pw0 + pw1 - ((kw - 1) * dw + 1)) / sw + 1;
  // Constant w and w_zero_point: the direct oneDNN path (where the CPU has VNNI), whose uint8
  // weights over the whole range need the zero-point correction.
  for (const auto& [threads, constant] : {std::pair{1, false}, {2, false}, {1, true}, {2, true}}) {
    KernelTester t("ConvInteger", 10);
    t.Attr("group", g)
        .Attr("strides", std::vector<int64_t>{sh, sw})
        .Attr("dilations", std::vector<int64_t>{dh, dw})
        .Attr("pads", std::vector<int64_t>{ph0, pw0, ph1, pw1})
        .Threads(threads);
    t.Input<uint8_t>({n, c, h, wd}, x)
        .Input<uint8_t>({m, c / g, kh, kw}, w, constant)
        .Input<uint8_t>({}, {17})
        .Input<uint8_t>({m}, wzp, constant);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), (Shape{n, m, oh, ow}));
    const auto y = Values<int32_t>((*out)[0]);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t yy = 0; yy < oh; ++yy)
          for (int64_t xx = 0; xx < ow; ++xx) {
            int32_t acc = 0;
            const int64_t grp = o / (m / g);
            for (int64_t ci = 0; ci < c / g; ++ci)
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t iy = yy * sh - ph0 + a * dh, ix = xx * sw - pw0 + b * dw;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                  const int32_t xv = x[((i * c + grp * (c / g) + ci) * h + iy) * wd + ix] - 17;
                  const int32_t wv = w[((o * (c / g) + ci) * kh + a) * kw + b] - wzp[o];
                  acc += xv * wv;
                }
            ASSERT_EQ(y[((i * m + o) * oh + yy) * ow + xx], acc);
          }
  }
}

// The exact sum of a 2-D ConvInteger with square kernel k, stride st, pad p on every side.
std::vector<int32_t> ConvSums(const std::vector<uint8_t>& x, int64_t c, int64_t h, int64_t wd,
                              int32_t zx, const std::vector<int32_t>& w, int64_t m, int64_t g,
                              int64_t k, int64_t st, int64_t p, int64_t oh, int64_t ow) {
  std::vector<int32_t> y(m * oh * ow);
  const int64_t cg = c / g, mg = m / g;
  for (int64_t o = 0; o < m; ++o)
    for (int64_t yy = 0; yy < oh; ++yy)
      for (int64_t xx = 0; xx < ow; ++xx) {
        int32_t acc = 0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t a = 0; a < k; ++a)
            for (int64_t b = 0; b < k; ++b) {
              const int64_t iy = yy * st - p + a, ix = xx * st - p + b;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              acc += (x[((o / mg * cg + ci) * h + iy) * wd + ix] - zx) *
                     w[((o * cg + ci) * k + a) * k + b];
            }
        y[(o * oh + yy) * ow + xx] = acc;
      }
  return y;
}

TEST(ConvIntegerTest, ConstantWeightsSplitOverThreads) {
  // One image, large enough that 2 threads cut it into parts (by output channels, by groups
  // for the depthwise one) on the direct oneDNN path; the same results as 1 thread and as the
  // reference. ConvInteger: uint8 w over its whole range, zero point 77 (the correction);
  // QLinearConv: int8 w, zero point 0, requantized by oneDNN (within one step).
  struct Case {
    int64_t c, m, g, hw, k, st, p;
  };
  for (const Case& cs : {Case{32, 64, 1, 20, 3, 1, 1}, Case{64, 64, 64, 112, 3, 2, 1}}) {
    const int64_t oh = (cs.hw + 2 * cs.p - cs.k) / cs.st + 1;
    const int64_t wn = cs.m * (cs.c / cs.g) * cs.k * cs.k;
    const auto x = Pattern<uint8_t>(cs.c * cs.hw * cs.hw, 29, 256, 0);
    const auto wu = Pattern<uint8_t>(wn, 41, 256, 0);
    const auto ws = Pattern<int8_t>(wn, 43, 256, -128);
    std::vector<int32_t> wu_z(wn), ws_z(wn);
    for (int64_t i = 0; i < wn; ++i) wu_z[i] = wu[i] - 77, ws_z[i] = ws[i];
    const std::vector<int32_t> want_int =
        ConvSums(x, cs.c, cs.hw, cs.hw, 5, wu_z, cs.m, cs.g, cs.k, cs.st, cs.p, oh, oh);
    const std::vector<int32_t> want_q =
        ConvSums(x, cs.c, cs.hw, cs.hw, 128, ws_z, cs.m, cs.g, cs.k, cs.st, cs.p, oh, oh);
    const std::vector<int64_t> pads(4, cs.p), strides(2, cs.st);
    for (int threads : {1, 2}) {
      KernelTester t("ConvInteger", 10);
      t.Attr("group", cs.g).Attr("pads", pads).Attr("strides", strides).Threads(threads);
      t.Input<uint8_t>({1, cs.c, cs.hw, cs.hw}, x)
          .Input<uint8_t>({cs.m, cs.c / cs.g, cs.k, cs.k}, wu, true)
          .Input<uint8_t>({}, {5})
          .Input<uint8_t>({}, {77}, true);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Values<int32_t>((*out)[0]), want_int) << "threads " << threads;

      KernelTester q("QLinearConv", 10);
      q.Attr("group", cs.g).Attr("pads", pads).Attr("strides", strides).Threads(threads);
      q.Input<uint8_t>({1, cs.c, cs.hw, cs.hw}, x)
          .Input<float>({}, {0.02f}, true)
          .Input<uint8_t>({}, {128}, true)
          .Input<int8_t>({cs.m, cs.c / cs.g, cs.k, cs.k}, ws, true)
          .Input<float>({}, {0.01f}, true)
          .Input<int8_t>({}, {0}, true)
          .Input<float>({}, {0.5f}, true)
          .Input<uint8_t>({}, {3}, true);
      out = q.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      const auto y = Values<uint8_t>((*out)[0]);
      ASSERT_EQ(y.size(), want_q.size());
      const float scale = 0.02f * 0.01f / 0.5f;
      for (size_t i = 0; i < y.size(); ++i) {
        const float v = std::min(
            255.f, std::max(0.f, std::nearbyint(static_cast<float>(want_q[i]) * scale) + 3.f));
        ASSERT_LE(std::abs(static_cast<int>(y[i]) - static_cast<int>(v)), 1)
            << "threads " << threads << " at " << i;
      }
    }
  }
}

TEST(ConvIntegerTest, RefusesMismatchedChannels) {
  KernelTester t("ConvInteger", 10);
  t.Input<uint8_t>({1, 3, 4, 4}, Pattern<uint8_t>(48, 1, 7, 0))
      .Input<uint8_t>({2, 2, 3, 3}, Pattern<uint8_t>(36, 1, 7, 0));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("group"), std::string::npos) << out.status();
}

TEST(QLinearMatMulTest, RequantizesPerColumn) {
  // a [2, 3] uint8, b [3, 2] int8 with per-column scales; y uint8.
  const std::vector<uint8_t> a = {130, 120, 255, 0, 128, 129};
  const std::vector<int8_t> b = {1, -2, 3, 4, -5, 6};
  const std::vector<float> b_scale = {0.5f, 0.25f};
  KernelTester t("QLinearMatMul", 10);
  t.Input<uint8_t>({2, 3}, a)
      .Input<float>({}, {0.1f})
      .Input<uint8_t>({}, {128})
      .Input<int8_t>({3, 2}, b)
      .Input<float>({2}, b_scale)
      .Input<int8_t>({2}, {0, 1})
      .Input<float>({}, {0.2f})
      .Input<uint8_t>({}, {100});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DataType::kUint8);
  const auto y = Values<uint8_t>((*out)[0]);
  const int bzp[2] = {0, 1};
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 2; ++n) {
      int32_t acc = 0;
      for (int k = 0; k < 3; ++k) acc += (a[m * 3 + k] - 128) * (b[k * 2 + n] - bzp[n]);
      const float s = 0.1f * b_scale[n] / 0.2f;
      const float v =
          std::min(255.f, std::max(0.f, std::nearbyint(static_cast<float>(acc) * s) + 100.f));
      EXPECT_EQ(y[m * 2 + n], static_cast<uint8_t>(v)) << m << "," << n;
    }
  }
}

TEST(QLinearConvTest, BiasAndPerChannelScale) {
  // x [1, 1, 3, 3] uint8, w [2, 1, 2, 2] int8, bias, per-channel w_scale; y int8.
  const std::vector<uint8_t> x = {10, 20, 30, 40, 50, 60, 70, 80, 90};
  const std::vector<int8_t> w = {1, 0, 0, -1, 2, 2, 2, 2};
  // Constant parameters: requantized by oneDNN's int8 convolution where the CPU has VNNI (the
  // zero point -10 is even, so its rounding of acc * scale + zp matches here).
  for (bool c : {false, true}) {
    KernelTester t("QLinearConv", 10);
    t.Input<uint8_t>({1, 1, 3, 3}, x)
        .Input<float>({}, {1.0f}, c)
        .Input<uint8_t>({}, {50}, c)
        .Input<int8_t>({2, 1, 2, 2}, w, c)
        .Input<float>({2}, {1.0f, 0.5f}, c)
        .Input<int8_t>({2}, {0, 0}, c)
        .Input<float>({}, {2.0f}, c)
        .Input<int8_t>({}, {-10}, c)
        .Input<int32_t>({2}, {3, -100}, c);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), (Shape{1, 2, 2, 2}));
    const auto y = Values<int8_t>((*out)[0]);
    std::vector<int8_t> want;
    const float scale[2] = {0.5f, 0.25f};
    const int32_t bias[2] = {3, -100};
    for (int oc = 0; oc < 2; ++oc)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          int32_t acc = bias[oc];
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
              acc += (x[(i + a) * 3 + j + b] - 50) * w[oc * 4 + a * 2 + b];
          const float v = std::min(
              127.f, std::max(-128.f, std::nearbyint(static_cast<float>(acc) * scale[oc]) - 10.f));
          want.push_back(static_cast<int8_t>(v));
        }
    EXPECT_EQ(y, want) << "constant " << c;
  }
}

TEST(QLinearContribTest, AddBroadcastsAndRequantizes) {
  KernelTester t("QLinearAdd", 1, "com.microsoft");
  t.Input<uint8_t>({2, 2}, {10, 20, 30, 250})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({2}, {4, 0})
      .Input<float>({}, {1.0f})
      .Input<uint8_t>({}, {2})
      .Input<float>({}, {2.0f})
      .Input<uint8_t>({}, {1});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  // (a - 10) * 0.5 + (b - 2) * 1, / 2, round half even, + 1.
  // [0 + 2, 5 - 2, 10 + 2, 120 - 2] / 2 = [1, 1.5, 6, 59] -> [1, 2, 6, 59] + 1.
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{2, 3, 7, 60}));
}

TEST(QLinearContribTest, LeakyReluSigmoidAndGlobalPool) {
  KernelTester t("QLinearLeakyRelu", 1, "com.microsoft");
  t.Attr("alpha", 0.5f)
      .Input<int8_t>({4}, {-10, -1, 0, 7})
      .Input<float>({}, {1.0f})
      .Input<int8_t>({}, {0})
      .Input<float>({}, {1.0f})
      .Input<int8_t>({}, {0});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int8_t>((*out)[0]), (std::vector<int8_t>{-5, 0, 0, 7}));  // -0.5 -> -0

  KernelTester s("QLinearSigmoid", 1, "com.microsoft");
  s.Input<uint8_t>({2}, {128, 255})
      .Input<float>({}, {0.1f})
      .Input<uint8_t>({}, {128})
      .Input<float>({}, {1.0f / 256})
      .Input<uint8_t>({}, {0});
  out = s.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const float sig = 1.0f / (1.0f + std::exp(-12.7f));
  EXPECT_EQ(Values<uint8_t>((*out)[0]),
            (std::vector<uint8_t>{
                128, static_cast<uint8_t>(std::min(255.f, std::nearbyint(sig * 256)))}));

  KernelTester p("QLinearGlobalAveragePool", 1, "com.microsoft");
  p.Input<uint8_t>({1, 2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 11})
      .Input<float>({}, {1.0f})
      .Input<uint8_t>({}, {0})
      .Input<float>({}, {1.0f})
      .Input<uint8_t>({}, {0});
  out = p.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{2, 10}));  // 2.5 -> 2, 10.25
}

TEST(MatMulToFloatTest, IntegerToFloatAndDynamic) {
  // A [2, 2] uint8 (zp 1, scale 0.5), B [2, 2] int8 per-column scale, bias.
  KernelTester t("MatMulIntegerToFloat", 1, "com.microsoft");
  t.Input<uint8_t>({2, 2}, {1, 3, 5, 7})
      .Input<int8_t>({2, 2}, {1, -1, 2, 4})
      .Input<float>({}, {0.5f})
      .Input<float>({2}, {1.0f, 0.25f})
      .Input<uint8_t>({}, {1})
      .Input<int8_t>({}, {0})
      .Input<float>({2}, {10.0f, -1.0f});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  // A - 1 = [[0, 2], [4, 6]]; acc = [[4, 8], [16, 20]].
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{12.f, 0.f, 18.f, 1.5f}));

  // DynamicQuantizeMatMul: A float quantized as DynamicQuantizeLinear does.
  const std::vector<float> a = {-1.0f, 0.5f, 2.0f, 3.0f};
  KernelTester d("DynamicQuantizeMatMul", 1, "com.microsoft");
  d.Input<float>({2, 2}, a)
      .Input<uint8_t>({2, 1}, {130, 126})
      .Input<float>({}, {0.1f})
      .Input<uint8_t>({}, {128});
  out = d.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const float scale = 4.0f / 255.0f, zp = std::nearbyint(1.0f / scale);
  std::vector<float> want;
  for (int m = 0; m < 2; ++m) {
    int32_t acc = 0;
    const int b[2] = {2, -2};
    for (int k = 0; k < 2; ++k) {
      const float q = std::min(255.f, std::max(0.f, std::nearbyint(a[m * 2 + k] / scale) + zp));
      acc += (static_cast<int32_t>(q) - static_cast<int32_t>(zp)) * b[k];
    }
    want.push_back(scale * 0.1f * static_cast<float>(acc));
  }
  const auto y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), 2u);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(y[i], want[i], 1e-6f);
}

// QLinearConcat: an input with Y's scale and zero point is copied, another requantized; bad
// shapes and input counts are refused with a message.
TEST(QLinearContribTest, ConcatRequantizesAndRefusesBadInputs) {
  KernelTester t("QLinearConcat", 1, "com.microsoft");
  t.OutputType(0, DataType::kUint8)
      .Attr("axis", int64_t{1})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({2, 1}, {12, 200})  // Y's parameters: copied
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({2, 2}, {0, 4, 8, 255})  // (v - 0) * 0.25 / 0.5 + 10
      .Input<float>({}, {0.25f})
      .Input<uint8_t>({}, {0});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), Shape({2, 3}));
  // 4 * 0.5 = 2 + 10; 8 * 0.5 = 4 + 10; 255 * 0.5 = 127.5 -> 128 (half to even) + 10.
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{12, 10, 12, 200, 14, 138}));

  KernelTester bad("QLinearConcat", 1, "com.microsoft");
  bad.OutputType(0, DataType::kUint8)
      .Attr("axis", int64_t{1})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({2, 1}, {1, 2})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({3, 1}, {1, 2, 3})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10});
  auto refused = bad.Run(CpuRegistry());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("has shape [3,1]; it must match [2,1] except along "
                                            "axis 1"),
            std::string::npos)
      << refused.status();

  KernelTester count("QLinearConcat", 1, "com.microsoft");
  count.OutputType(0, DataType::kUint8)
      .Attr("axis", int64_t{0})
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({1}, {1})
      .Input<float>({}, {0.5f});
  auto wrong = count.Run(CpuRegistry());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("2 + 3n inputs, got 4"), std::string::npos)
      << wrong.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

// The :ops2_kernels' error paths (bad ranks, sizes, attributes and indices give a Status naming
// the problem) and what the node tests do not pin: DFT and STFT against a naive O(n^2) sum for
// power-of-two and other lengths (Bluestein), at 1 and 2 threads, with the scratch declared or
// temporary; GridSample's identity grid; MaxUnpool, ReverseSequence and MVN on small cases.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

void ExpectError(KernelTester& k, const std::string& part) {
  auto out = k.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find(part), std::string::npos) << out.status();
}

// Naive DFT of x (complex, length len) at length n (truncated / zero-padded).
std::vector<std::complex<double>> NaiveDft(const std::vector<std::complex<double>>& x, int64_t n,
                                           bool inverse) {
  std::vector<std::complex<double>> y(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    std::complex<double> s = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      s += x[j] * std::polar(1.0, sign * 2 * M_PI * static_cast<double>(j * k % n) / n);
    }
    y[k] = inverse ? s / static_cast<double>(n) : s;
  }
  return y;
}

TEST(DftTest, MatchesNaiveSumForEveryLength) {
  for (int64_t len : {1, 2, 3, 5, 8, 12, 16, 17, 31, 64, 100}) {
    for (bool inverse : {false, true}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::to_string(len) + (inverse ? " inverse" : "") + " threads " +
                     std::to_string(threads));
        const int64_t batch = 3;
        std::vector<float> x(batch * len * 2);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(1.3 * i + 0.2));
        KernelTester k("DFT", 17);
        k.Attr("axis", int64_t{1}).Attr("inverse", int64_t{inverse ? 1 : 0});
        k.Input<float>({batch, len, 2}, x).Threads(threads);
        auto out = k.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ((*out)[0].shape(), Shape({batch, len, 2}));
        const std::vector<float> got = Values<float>((*out)[0]);
        for (int64_t b = 0; b < batch; ++b) {
          std::vector<std::complex<double>> in(len);
          for (int64_t j = 0; j < len; ++j) {
            in[j] = {x[(b * len + j) * 2], x[(b * len + j) * 2 + 1]};
          }
          const auto ref = NaiveDft(in, len, inverse);
          for (int64_t j = 0; j < len; ++j) {
            EXPECT_NEAR(got[(b * len + j) * 2], ref[j].real(), 1e-4) << b << " " << j;
            EXPECT_NEAR(got[(b * len + j) * 2 + 1], ref[j].imag(), 1e-4) << b << " " << j;
          }
        }
      }
    }
  }
}

TEST(DftTest, LengthInputPadsTruncatesAndOnesided) {
  const std::vector<double> x = {1, -2, 3, 0.5, 4, -1, 2};  // real, length 7
  for (int64_t n : {4, 7, 10}) {
    for (bool constant : {false, true}) {
      SCOPED_TRACE(std::to_string(n) + (constant ? " constant" : " runtime"));
      KernelTester k("DFT", 20);
      k.Attr("onesided", int64_t{1});
      k.Input<double>({1, 7, 1}, x).Input<int64_t>({}, {n}, constant).Input<int64_t>({}, {1});
      auto out = k.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].shape(), Shape({1, n / 2 + 1, 2}));
      std::vector<std::complex<double>> in(x.begin(), x.end());
      const auto ref = NaiveDft(in, n, false);
      const std::vector<double> got = Values<double>((*out)[0]);
      for (int64_t j = 0; j <= n / 2; ++j) {
        EXPECT_NEAR(got[2 * j], ref[j].real(), 1e-9);
        EXPECT_NEAR(got[2 * j + 1], ref[j].imag(), 1e-9);
      }
    }
  }
}

TEST(DftTest, Errors) {
  KernelTester last("DFT", 17);
  last.Attr("axis", int64_t{2}).Input<float>({1, 4, 1}, {1, 2, 3, 4});
  ExpectError(last, "axis 2");
  KernelTester comps("DFT", 17);
  comps.Input<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(comps, "[..., 1] (real)");
  KernelTester zero("DFT", 20);
  zero.Input<float>({1, 4, 1}, {1, 2, 3, 4}).Input<int64_t>({}, {0});
  ExpectError(zero, "dft_length must be > 0");
  KernelTester both("DFT", 17);
  both.Attr("inverse", int64_t{1}).Attr("onesided", int64_t{1}).Input<float>({1, 2, 1}, {1, 2});
  ExpectError(both, "onesided with inverse");
}

TEST(StftTest, FramesMatchNaiveDft) {
  const int64_t len = 40, step = 6, fl = 10;  // 10: Bluestein
  std::vector<float> x(len), w(fl);
  for (int64_t i = 0; i < len; ++i) x[i] = static_cast<float>(std::cos(0.37 * i));
  for (int64_t i = 0; i < fl; ++i) w[i] = 0.5f + 0.05f * i;
  KernelTester k("STFT", 17);
  k.Input<float>({1, len, 1}, x).Input<int64_t>({}, {step}).Input<float>({fl}, w).Threads(2);
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const int64_t frames = (len - fl) / step + 1;
  ASSERT_EQ((*out)[0].shape(), Shape({1, frames, fl / 2 + 1, 2}));
  const std::vector<float> got = Values<float>((*out)[0]);
  for (int64_t f = 0; f < frames; ++f) {
    std::vector<std::complex<double>> in(fl);
    for (int64_t j = 0; j < fl; ++j) in[j] = x[f * step + j] * w[j];
    const auto ref = NaiveDft(in, fl, false);
    for (int64_t b = 0; b <= fl / 2; ++b) {
      EXPECT_NEAR(got[(f * (fl / 2 + 1) + b) * 2], ref[b].real(), 1e-4);
      EXPECT_NEAR(got[(f * (fl / 2 + 1) + b) * 2 + 1], ref[b].imag(), 1e-4);
    }
  }
}

TEST(StftTest, Errors) {
  KernelTester step("STFT", 17);
  step.Input<float>({1, 8, 1}, std::vector<float>(8, 1)).Input<int64_t>({}, {0});
  ExpectError(step, "frame_step must be > 0");
  KernelTester longer("STFT", 17);
  longer.Input<float>({1, 8, 1}, std::vector<float>(8, 1)).Input<int64_t>({}, {2});
  longer.AbsentInput().Input<int64_t>({}, {9});
  ExpectError(longer, "frame_length 9");
  KernelTester mismatch("STFT", 17);
  mismatch.Input<float>({1, 8, 1}, std::vector<float>(8, 1)).Input<int64_t>({}, {2});
  mismatch.Input<float>({4}, {1, 1, 1, 1}).Input<int64_t>({}, {5});
  ExpectError(mismatch, "differs from the window");
  KernelTester rank("STFT", 17);
  rank.Input<float>({8}, std::vector<float>(8, 1)).Input<int64_t>({}, {2});
  ExpectError(rank, "signal must be");
}

TEST(GridSampleTest, IdentityGridReproducesInput) {
  // align_corners = 1: the grid's corners are the pixel centres; every mode gives X back.
  const int64_t h = 3, w = 4;
  std::vector<float> x(2 * h * w), grid;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 2;
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      grid.push_back(-1.0f + 2.0f * j / (w - 1));
      grid.push_back(-1.0f + 2.0f * i / (h - 1));
    }
  }
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    SCOPED_TRACE(mode);
    KernelTester k("GridSample", 16);
    k.Attr("mode", std::string(mode)).Attr("align_corners", int64_t{1});
    k.Input<float>({1, 2, h, w}, x).Input<float>({1, h, w, 2}, grid);
    auto out = k.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> got = Values<float>((*out)[0]);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(got[i], x[i], 1e-5) << i;
  }
}

TEST(GridSampleTest, Errors) {
  KernelTester mode("GridSample", 16);
  mode.Attr("mode", std::string("linear")).Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  mode.Input<float>({1, 1, 1, 2}, {0, 0});
  ExpectError(mode, "mode 'linear'");
  KernelTester pad("GridSample", 20);
  pad.Attr("padding_mode", std::string("wrap")).Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  pad.Input<float>({1, 1, 1, 2}, {0, 0});
  ExpectError(pad, "padding_mode 'wrap'");
  KernelTester grid("GridSample", 16);
  grid.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({1, 1, 1, 3}, {0, 0, 0});
  ExpectError(grid, "grid must be");
  KernelTester rank("GridSample", 16);
  rank.Input<float>({1, 1, 2}, {1, 2}).Input<float>({1, 1, 1}, {0});
  ExpectError(rank, "X must be");
  // Opset 20 takes 3-D images; NaN and far-away coordinates read zero padding.
  KernelTester nd("GridSample", 20);
  nd.Input<float>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  nd.Input<float>({1, 1, 1, 2, 3}, {NAN, 0, 0, 1e30f, 0, 0});
  auto out = nd.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 0}));
}

TEST(RoiAlignTest, Errors) {
  auto make = [](KernelTester& k, std::vector<int64_t> idx) {
    k.Input<float>({1, 1, 4, 4}, std::vector<float>(16, 1))
        .Input<float>({1, 4}, {0, 0, 2, 2})
        .Input<int64_t>({static_cast<int64_t>(idx.size())}, idx);
  };
  KernelTester batch("RoiAlign", 16);
  make(batch, {1});
  ExpectError(batch, "batch_indices[0] = 1");
  KernelTester count("RoiAlign", 16);
  make(count, {0, 0});
  ExpectError(count, "batch_indices must be [1]");
  KernelTester mode("RoiAlign", 16);
  mode.Attr("mode", std::string("min"));
  make(mode, {0});
  ExpectError(mode, "mode 'min'");
  KernelTester size("RoiAlign", 16);
  size.Attr("output_height", int64_t{0});
  make(size, {0});
  ExpectError(size, "output_height");
  KernelTester ok("RoiAlign", 16);
  ok.Attr("mode", std::string("avg"));
  make(ok, {0});
  auto out = ok.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1.0f}));  // a constant image
}

TEST(MaxUnpoolTest, ScattersAndChecksIndices) {
  KernelTester k("MaxUnpool", 11);
  k.Attr("kernel_shape", std::vector<int64_t>{2}).Attr("strides", std::vector<int64_t>{2});
  k.Input<int32_t>({1, 2, 2}, {5, 6, 7, 8}).Input<int64_t>({1, 2, 2}, {1, 2, 4, 7});
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), Shape({1, 2, 4}));
  EXPECT_EQ(Values<int32_t>((*out)[0]), std::vector<int32_t>({0, 5, 6, 0, 7, 0, 0, 8}));
  KernelTester bad("MaxUnpool", 11);
  bad.Attr("kernel_shape", std::vector<int64_t>{2}).Attr("strides", std::vector<int64_t>{2});
  bad.Input<float>({1, 1, 2}, {1, 2}).Input<int64_t>({1, 1, 2}, {0, 4});
  ExpectError(bad, "I[1] = 4");
  // output_shape larger than the unpooled shape: the indices keep their coordinates.
  KernelTester pad("MaxUnpool", 11);
  pad.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("strides", std::vector<int64_t>{2, 2});
  pad.Input<float>({1, 1, 1, 1}, {9}).Input<int64_t>({1, 1, 1, 1}, {3});
  pad.Input<int64_t>({4}, {1, 1, 3, 3});
  auto padded = pad.Run(CpuRegistry());
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(Values<float>((*padded)[0]), std::vector<float>({0, 0, 0, 0, 9, 0, 0, 0, 0}));
  KernelTester small("MaxUnpool", 11);
  small.Attr("kernel_shape", std::vector<int64_t>{2});
  small.Input<float>({1, 1, 2}, {1, 2}).Input<int64_t>({1, 1, 2}, {0, 1});
  small.Input<int64_t>({3}, {1, 1, 2});
  ExpectError(small, "smaller than the unpooled shape");
  KernelTester shape("MaxUnpool", 11);
  shape.Attr("kernel_shape", std::vector<int64_t>{2});
  shape.Input<float>({1, 1, 2}, {1, 2}).Input<int64_t>({1, 1, 2}, {0, 1});
  shape.Input<int64_t>({3}, {1, 2, 5});
  ExpectError(shape, "keep X's N and C");
  KernelTester attr("MaxUnpool", 11);
  attr.Attr("kernel_shape", std::vector<int64_t>{2}).Attr("pads", std::vector<int64_t>{1});
  attr.Input<float>({1, 1, 2}, {1, 2}).Input<int64_t>({1, 1, 2}, {0, 1});
  ExpectError(attr, "pads must hold 2");
}

TEST(ReverseSequenceTest, ReversesPrefixes) {
  KernelTester k("ReverseSequence", 10);
  k.Attr("time_axis", int64_t{1}).Attr("batch_axis", int64_t{0});
  k.Input<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}).Input<int64_t>({2}, {3, 2});
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), std::vector<int64_t>({3, 2, 1, 5, 4, 6}));
  KernelTester len("ReverseSequence", 10);
  len.Input<float>({2, 2}, {1, 2, 3, 4}).Input<int64_t>({2}, {3, 1});
  ExpectError(len, "sequence_lens[0] = 3");
  KernelTester axes("ReverseSequence", 10);
  axes.Attr("time_axis", int64_t{1}).Input<float>({2, 2}, {1, 2, 3, 4});
  axes.Input<int64_t>({2}, {1, 1});
  ExpectError(axes, "time_axis and batch_axis");
}

TEST(MvnLrnTest, NormalizesAndChecks) {
  KernelTester k("MeanVarianceNormalization", 13);
  k.Attr("axes", std::vector<int64_t>{1});
  k.Input<double>({2, 2}, {1, 3, 10, 20});
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> got = Values<double>((*out)[0]);
  EXPECT_NEAR(got[0], -1.0, 1e-8);
  EXPECT_NEAR(got[1], 1.0, 1e-8);
  EXPECT_NEAR(got[2], -1.0, 1e-8);
  KernelTester axes("MeanVarianceNormalization", 13);
  axes.Attr("axes", std::vector<int64_t>{0, 0}).Input<float>({2, 2}, {1, 2, 3, 4});
  ExpectError(axes, "repeats axis 0");
  KernelTester lrn("LRN", 13);
  lrn.Attr("size", int64_t{0}).Input<float>({1, 1, 1}, {1});
  ExpectError(lrn, "size must be > 0");
  KernelTester lrn_rank("LRN", 13);
  lrn_rank.Attr("size", int64_t{3}).Input<float>({1, 2}, {1, 2});
  ExpectError(lrn_rank, "rank >= 3");
}

TEST(MvnLrnTest, LrnEvenSizeMatchesNaive) {
  // Even sizes (which ONNX Runtime refuses) reach one channel further up than down.
  const int64_t n = 2, c = 5, hw = 3, size = 2;
  std::vector<float> x(n * c * hw);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::cos(0.9 * i)) * 2;
  KernelTester k("LRN", 13);
  k.Attr("size", size).Attr("alpha", 0.5f).Attr("beta", 0.75f).Attr("bias", 1.5f);
  k.Input<float>({n, c, hw}, x);
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0]);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < hw; ++i) {
        double sum = 0;
        for (int64_t j = std::max<int64_t>(0, ch); j <= std::min<int64_t>(c - 1, ch + 1); ++j) {
          sum += x[(b * c + j) * hw + i] * x[(b * c + j) * hw + i];
        }
        const double v = x[(b * c + ch) * hw + i];
        EXPECT_NEAR(got[(b * c + ch) * hw + i], v / std::pow(1.5 + 0.5 / size * sum, 0.75), 1e-5);
      }
    }
  }
}

TEST(MelWeightMatrixTest, Errors) {
  KernelTester k("MelWeightMatrix", 17);
  k.Input<int64_t>({}, {0}).Input<int64_t>({}, {16}).Input<int64_t>({}, {8000});
  k.Input<float>({}, {0}).Input<float>({}, {4000});
  ExpectError(k, "num_mel_bins must be > 0");
  KernelTester edges("MelWeightMatrix", 17);
  edges.Input<int64_t>({}, {4}).Input<int64_t>({}, {16}).Input<int64_t>({}, {8000});
  edges.Input<float>({}, {500}).Input<float>({}, {100});
  ExpectError(edges, "lower_edge_hertz");
}

}  // namespace
}  // namespace inferd::kernels::cpu

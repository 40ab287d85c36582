// AveragePool, GlobalAveragePool and GlobalMaxPool against naive references: 1-D, 2-D, 3-D,
// strides, pads, every auto_pad, count_include_pad with and without ceil_mode (windows that hang
// over the padding), shapes unknown at load, threads, workspace declared == estimated, errors.
#include <algorithm>
#include <limits>

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

struct AvgCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads;
  std::string auto_pad;
  bool ceil_mode = false;
  bool count_include_pad = false;
  int threads = 1;
};

// ONNX AveragePool (as PyTorch and ONNX Runtime compute it): the window clipped to input + pads
// is the divisor with count_include_pad, the window clipped to the input without.
std::vector<float> RefAvgPool(const std::vector<float>& x, const AvgCase& c, Shape* out_shape) {
  const size_t sp = c.x.rank() - 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, pb[3] = {}, pe[3] = {},
          out[3] = {1, 1, 1};
  *out_shape = Shape{c.x[0], c.x[1]};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = c.x[2 + i];
    k[j] = c.kernel[i];
    s[j] = c.strides.empty() ? 1 : c.strides[i];
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[j] = (in[j] + s[j] - 1) / s[j];
      const int64_t total = std::max<int64_t>(0, (out[j] - 1) * s[j] + k[j] - in[j]);
      pb[j] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe[j] = total - pb[j];
    } else {
      if (c.auto_pad.empty() && !c.pads.empty()) pb[j] = c.pads[i], pe[j] = c.pads[sp + i];
      const int64_t span = in[j] + pb[j] + pe[j] - k[j];
      out[j] = (c.ceil_mode ? (span + s[j] - 1) / s[j] : span / s[j]) + 1;
      if (c.ceil_mode && (out[j] - 1) * s[j] >= in[j] + pb[j]) --out[j];
    }
    out_shape->push_back(out[j]);
  }
  std::vector<float> y;
  for (int64_t nc = 0; nc < c.x[0] * c.x[1]; ++nc)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          int64_t lo[3], hi[3], count = 1;
          for (int j = 0; j < 3; ++j) {
            const int64_t start = o[j] * s[j] - pb[j];
            const int64_t end = std::min(start + k[j], in[j] + pe[j]);
            lo[j] = std::max<int64_t>(start, 0);
            hi[j] = std::min(end, in[j]);
            count *= c.count_include_pad ? end - start : hi[j] - lo[j];
          }
          double sum = 0;
          for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
            for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
              for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2)
                sum += x[((nc * in[0] + i0) * in[1] + i1) * in[2] + i2];
          y.push_back(static_cast<float>(sum / count));
        }
  return y;
}

void CheckAvg(const AvgCase& c) {
  SCOPED_TRACE(absl::StrCat("x ", c.x.ToString(), " kernel ", absl::StrJoin(c.kernel, ","),
                            " pads ", absl::StrJoin(c.pads, ","), " auto_pad '", c.auto_pad,
                            "' ceil ", c.ceil_mode, " include_pad ", c.count_include_pad));
  const std::vector<float> x = RandomFloats(c.x.NumElements(), 61);
  Shape expected_shape;
  const std::vector<float> expected = RefAvgPool(x, c, &expected_shape);
  KernelTester t("AveragePool", 11);
  KernelTester spec("AveragePool", 11);
  t.Attr("kernel_shape", c.kernel), spec.Attr("kernel_shape", c.kernel);
  if (!c.strides.empty()) t.Attr("strides", c.strides), spec.Attr("strides", c.strides);
  if (!c.pads.empty()) t.Attr("pads", c.pads), spec.Attr("pads", c.pads);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad), spec.Attr("auto_pad", c.auto_pad);
  if (c.ceil_mode) t.Attr("ceil_mode", int64_t{1}), spec.Attr("ceil_mode", int64_t{1});
  if (c.count_include_pad) {
    t.Attr("count_include_pad", int64_t{1}), spec.Attr("count_include_pad", int64_t{1});
  }
  t.Input<float>(c.x, x).Threads(c.threads);
  spec.Input(TestTensor::Of<float>(c.x, x)).Threads(c.threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(AveragePoolTest, PadsStridesAndCountIncludePad) {
  for (bool include : {false, true}) {
    CheckAvg(
        {.x = {1, 3, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}, .count_include_pad = include});
    CheckAvg({.x = {2, 2, 7, 9},
              .kernel = {3, 2},
              .strides = {2, 1},
              .pads = {1, 0, 2, 1},
              .count_include_pad = include});
    CheckAvg(
        {.x = {1, 1, 5, 5}, .kernel = {5, 5}, .pads = {2, 2, 2, 2}, .count_include_pad = include});
  }
}

TEST(AveragePoolTest, CeilModeWindowsHangingOverThePadding) {
  for (bool include : {false, true}) {
    CheckAvg({.x = {1, 1, 4, 4},
              .kernel = {3, 3},
              .strides = {2, 2},
              .ceil_mode = true,
              .count_include_pad = include});
    CheckAvg({.x = {1, 2, 7, 6},
              .kernel = {3, 2},
              .strides = {2, 3},
              .pads = {1, 1, 1, 0},
              .ceil_mode = true,
              .count_include_pad = include});
    CheckAvg({.x = {1, 2, 5, 6, 7},
              .kernel = {2, 3, 2},
              .strides = {2, 2, 3},
              .pads = {1, 0, 1, 0, 1, 1},
              .ceil_mode = true,
              .count_include_pad = include});
    CheckAvg({.x = {2, 3, 10},
              .kernel = {4},
              .strides = {3},
              .pads = {1, 1},
              .ceil_mode = true,
              .count_include_pad = include});
  }
}

TEST(AveragePoolTest, AutoPadAndThreads) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"}) {
    for (int64_t stride : {1, 2, 3}) {
      for (bool include : {false, true}) {
        CheckAvg({.x = {1, 2, 7, 8},
                  .kernel = {3, 2},
                  .strides = {stride, stride},
                  .auto_pad = mode,
                  .count_include_pad = include});
      }
    }
  }
  CheckAvg({.x = {4, 32, 28, 28},
            .kernel = {3, 3},
            .strides = {2, 2},
            .pads = {1, 1, 1, 1},
            .ceil_mode = true,
            .count_include_pad = true,
            .threads = 2});
}

TEST(AveragePoolTest, ShapesUnknownAtLoadAndErrors) {
  KernelTester spec("AveragePool", 11);
  spec.Attr("kernel_shape", std::vector<int64_t>{3, 3})
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("ceil_mode", int64_t{1})
      .Attr("count_include_pad", int64_t{1})
      .Input(TestTensor::Of<float>({1, 1, 4, 4}, std::vector<float>(16)), /*shape_known=*/false);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (const Shape& xs : {Shape{1, 2, 8, 8}, Shape{2, 3, 6, 11}, Shape{1, 2, 8, 8}}) {
    const AvgCase c{.x = xs,
                    .kernel = {3, 3},
                    .strides = {2, 2},
                    .pads = {1, 1, 1, 1},
                    .ceil_mode = true,
                    .count_include_pad = true};
    const std::vector<float> x = RandomFloats(xs.NumElements(), 62);
    Shape expected_shape;
    const std::vector<float> expected = RefAvgPool(x, c, &expected_shape);
    const TestTensor xt = TestTensor::Of<float>(xs, x);
    auto out = engine::testing::RunKernel(**kernel, {&xt}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, expected_shape);
    ExpectNear((*out)[0].values<float>(), expected, 1e-5f);
  }
  const TestTensor flat = TestTensor::Of<float>({4, 4}, std::vector<float>(16));
  auto bad = engine::testing::RunKernel(**kernel, {&flat}, 1, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("(AveragePool)"), std::string::npos) << bad.status();

  KernelTester missing("AveragePool", 11);
  missing.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  auto out = missing.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'kernel_shape' is missing"), std::string::npos);
}

TEST(GlobalPoolTest, AverageAndMaxOverEverySpatialDim) {
  for (const Shape& xs : {Shape{2, 3, 5}, Shape{1, 4, 7, 7}, Shape{2, 2, 3, 4, 5}}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(absl::StrCat(xs.ToString(), " threads ", threads));
      const std::vector<float> x = RandomFloats(xs.NumElements(), 63);
      const int64_t planes = xs[0] * xs[1], inner = xs.SizeFrom(2);
      std::vector<float> mean, max;
      for (int64_t p = 0; p < planes; ++p) {
        double sum = 0;
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < inner; ++i) {
          sum += x[p * inner + i];
          best = std::max(best, x[p * inner + i]);
        }
        mean.push_back(static_cast<float>(sum / inner));
        max.push_back(best);
      }
      Shape out_shape{xs[0], xs[1]};
      out_shape.resize(xs.rank(), 1);
      for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        KernelTester t(op, 1);
        t.Input<float>(xs, x).Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ((*out)[0].shape(), out_shape);
        ExpectNear(Values<float>((*out)[0]), std::string(op) == "GlobalMaxPool" ? max : mean,
                   1e-5f);
      }
    }
  }
  KernelTester bad("GlobalAveragePool", 1);
  bad.Input<float>({2, 3}, std::vector<float>(6));
  auto out = bad.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("(GlobalAveragePool)"), std::string::npos);
}

}  // namespace
}  // namespace inferd::kernels::cpu

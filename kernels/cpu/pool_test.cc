// MaxPool against a naive reference: 1-D, 2-D, 3-D, strides, pads, dilations, ceil_mode, every
// auto_pad; the Indices output (both storage orders); int8 and uint8; errors; workspace declared
// == estimated; threads.
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
using testing::RefWindow;

struct PoolCase {
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
  bool ceil_mode = false;
  int threads = 1;
};

RefWindow ReferenceWindow(const PoolCase& c) {
  const size_t sp = c.x.rank() - 2;
  RefWindow w;
  w.kernel = c.kernel;
  w.strides = c.strides.empty() ? std::vector<int64_t>(sp, 1) : c.strides;
  w.dilations = c.dilations.empty() ? std::vector<int64_t>(sp, 1) : c.dilations;
  w.pad_begin.assign(sp, 0);
  w.pad_end.assign(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = c.x[2 + i], ext = (c.kernel[i] - 1) * w.dilations[i] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + ext - in);
      w.pad_begin[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else if (c.auto_pad.empty() && !c.pads.empty()) {
      w.pad_begin[i] = c.pads[i];
      w.pad_end[i] = c.pads[sp + i];
    }
  }
  return w;
}

void CheckPool(const PoolCase& c) {
  SCOPED_TRACE(absl::StrCat("x ", c.x.ToString(), " kernel ", absl::StrJoin(c.kernel, ","),
                            " auto_pad '", c.auto_pad, "' ceil ", c.ceil_mode));
  const std::vector<float> x = RandomFloats(c.x.NumElements(), 51, -5.0f, -1.0f);
  Shape expected_shape;
  const std::vector<float> expected =
      testing::RefMaxPool(x, c.x, ReferenceWindow(c), c.ceil_mode, &expected_shape);
  KernelTester t("MaxPool", 12);
  KernelTester spec("MaxPool", 12);
  t.Attr("kernel_shape", c.kernel);
  spec.Attr("kernel_shape", c.kernel);
  if (!c.strides.empty()) t.Attr("strides", c.strides), spec.Attr("strides", c.strides);
  if (!c.dilations.empty()) t.Attr("dilations", c.dilations), spec.Attr("dilations", c.dilations);
  if (!c.pads.empty()) t.Attr("pads", c.pads), spec.Attr("pads", c.pads);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad), spec.Attr("auto_pad", c.auto_pad);
  if (c.ceil_mode) t.Attr("ceil_mode", int64_t{1}), spec.Attr("ceil_mode", int64_t{1});
  t.Input<float>(c.x, x).Threads(c.threads);
  spec.Input(TestTensor::Of<float>(c.x, x)).Threads(c.threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 0.0f);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(MaxPoolTest, TwoD) {
  CheckPool({.x = {1, 3, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}});
  CheckPool({.x = {2, 2, 7, 9}, .kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}});
  CheckPool({.x = {1, 2, 10, 10}, .kernel = {3, 3}, .dilations = {2, 2}, .pads = {2, 2, 2, 2}});
  // Negative inputs: padding must never win the max.
  CheckPool({.x = {1, 1, 4, 4}, .kernel = {3, 3}, .pads = {2, 2, 2, 2}});
}

TEST(MaxPoolTest, CeilMode) {
  CheckPool({.x = {1, 1, 4, 4}, .kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = true});
  CheckPool({.x = {1, 2, 7, 6}, .kernel = {2, 2}, .strides = {2, 2}, .ceil_mode = true});
  CheckPool({.x = {1, 2, 5, 5},
             .kernel = {2, 2},
             .strides = {3, 3},
             .pads = {1, 1, 1, 1},
             .ceil_mode = true});
  CheckPool({.x = {1, 1, 9, 9},
             .kernel = {3, 3},
             .strides = {2, 2},
             .dilations = {2, 2},
             .ceil_mode = true});
  // The window that would start in the right padding is dropped: [1,1,2,2] -> 1 output.
  CheckPool({.x = {1, 1, 2, 2},
             .kernel = {1, 1},
             .strides = {2, 2},
             .pads = {0, 0, 1, 1},
             .ceil_mode = true});
}

TEST(MaxPoolTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckPool(
          {.x = {1, 2, 7, 8}, .kernel = {3, 2}, .strides = {stride, stride}, .auto_pad = mode});
    }
  }
}

TEST(MaxPoolTest, OneAndThreeDAndThreads) {
  CheckPool({.x = {2, 3, 15}, .kernel = {3}, .strides = {2}, .pads = {1, 1}});
  CheckPool({.x = {1, 2, 6, 7, 8}, .kernel = {2, 3, 2}, .strides = {2, 2, 2}, .ceil_mode = true});
  CheckPool({.x = {4, 32, 56, 56},
             .kernel = {3, 3},
             .strides = {2, 2},
             .pads = {1, 1, 1, 1},
             .threads = 2});
}

// Naive MaxPool-8+ Indices: the first maximum's flat position, spatial dims row-major
// (storage_order 0) or column-major (1).
std::vector<int64_t> RefIndices(const std::vector<float>& x, const Shape& xs, const RefWindow& w,
                                const Shape& out, int64_t storage_order) {
  const int64_t h = xs[2], wd = xs[3];
  std::vector<int64_t> idx;
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (int64_t oh = 0; oh < out[2]; ++oh)
      for (int64_t ow = 0; ow < out[3]; ++ow) {
        float best = 0;
        int64_t at = -1;
        for (int64_t kh = 0; kh < w.kernel[0]; ++kh)
          for (int64_t kw = 0; kw < w.kernel[1]; ++kw) {
            const int64_t ih = oh * w.strides[0] - w.pad_begin[0] + kh * w.dilations[0];
            const int64_t iw = ow * w.strides[1] - w.pad_begin[1] + kw * w.dilations[1];
            if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
            const float v = x[(p * h + ih) * wd + iw];
            if (at < 0 || v > best) {
              best = v;
              at = p * h * wd + (storage_order == 0 ? ih * wd + iw : iw * h + ih);
            }
          }
        idx.push_back(at);
      }
  return idx;
}

TEST(MaxPoolTest, IndicesOutput) {
  for (int64_t order : {0, 1}) {
    for (const PoolCase& c :
         {PoolCase{.x = {2, 3, 7, 9}, .kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}},
          PoolCase{.x = {1, 2, 6, 6}, .kernel = {2, 2}, .strides = {2, 2}, .ceil_mode = true},
          PoolCase{.x = {1, 1, 9, 9}, .kernel = {3, 3}, .dilations = {2, 2}, .threads = 2}}) {
      SCOPED_TRACE(absl::StrCat("storage_order ", order, " x ", c.x.ToString()));
      const std::vector<float> x = RandomFloats(c.x.NumElements(), 53, -5.0f, -1.0f);
      Shape out_shape;
      const RefWindow w = ReferenceWindow(c);
      const std::vector<float> expected = testing::RefMaxPool(x, c.x, w, c.ceil_mode, &out_shape);
      KernelTester t("MaxPool", 12);
      t.Attr("kernel_shape", c.kernel).Attr("storage_order", order);
      if (!c.strides.empty()) t.Attr("strides", c.strides);
      if (!c.dilations.empty()) t.Attr("dilations", c.dilations);
      if (!c.pads.empty()) t.Attr("pads", c.pads);
      if (c.ceil_mode) t.Attr("ceil_mode", int64_t{1});
      t.Input<float>(c.x, x).Outputs(2).Threads(c.threads);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), out_shape);
      ExpectNear(Values<float>((*out)[0]), expected, 0.0f);
      EXPECT_EQ(Values<int64_t>((*out)[1]), RefIndices(x, c.x, w, out_shape, order));
    }
  }

  // The graph does not use Indices: the oneDNN path, same values.
  KernelTester unused("MaxPool", 12);
  unused.Attr("kernel_shape", std::vector<int64_t>{2, 2})
      .Input<float>({1, 1, 2, 2}, {1, 2, 3, 4})
      .Outputs(2)
      .UnwantedOutput(1);
  auto ok = unused.Run(CpuRegistry());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(Values<float>((*ok)[0]), std::vector<float>{4});
}

TEST(MaxPoolTest, Int8AndUint8) {
  const std::vector<uint8_t> xu = {1, 200, 3, 4, 255, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0};
  KernelTester t("MaxPool", 12);
  t.Attr("kernel_shape", std::vector<int64_t>{2, 2})
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Input<uint8_t>({1, 1, 4, 4}, xu);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{255, 8, 14, 15}));

  const std::vector<int8_t> xs = {-1, -2, -3, -4, -128, -6, -7, -8, -9};
  KernelTester s("MaxPool", 12);
  s.Attr("kernel_shape", std::vector<int64_t>{2, 2})
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Input<int8_t>({1, 1, 3, 3}, xs)
      .Outputs(2);
  auto with_indices = s.Run(CpuRegistry());
  ASSERT_TRUE(with_indices.ok()) << with_indices.status();
  // Padding never wins, even against -128.
  EXPECT_EQ(Values<int8_t>((*with_indices)[0]), (std::vector<int8_t>{-1, -2, -4, -6}));
  EXPECT_EQ(Values<int64_t>((*with_indices)[1]), (std::vector<int64_t>{0, 1, 3, 5}));
}

TEST(MaxPoolTest, Errors) {
  {
    KernelTester t("MaxPool", 12);
    t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("'kernel_shape' is missing"), std::string::npos);
  }
  {
    KernelTester t("MaxPool", 12);
    t.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Input<float>({4, 4}, std::vector<float>(16));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("node 'test_MaxPool' (MaxPool)"), std::string::npos);
  }
  {
    KernelTester t("MaxPool", 12);
    t.Attr("kernel_shape", std::vector<int64_t>{3})
        .Input<float>({1, 1, 4, 4}, std::vector<float>(16));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("window has 1 dimensions"), std::string::npos)
        << out.status();
  }
}

TEST(MaxPoolTest, ShapesUnknownAtLoad) {
  KernelTester spec("MaxPool", 12);
  spec.Attr("kernel_shape", std::vector<int64_t>{3, 3})
      .Attr("strides", std::vector<int64_t>{2, 2})
      .Attr("auto_pad", std::string("SAME_UPPER"))
      .Input(TestTensor::Of<float>({1, 1, 4, 4}, std::vector<float>(16)), /*shape_known=*/false);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (const Shape& xs : {Shape{1, 2, 9, 9}, Shape{2, 3, 6, 11}, Shape{1, 2, 9, 9}}) {
    const auto x = RandomFloats(xs.NumElements(), 52);
    PoolCase c{.x = xs, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = "SAME_UPPER"};
    Shape expected_shape;
    const auto expected = testing::RefMaxPool(x, xs, ReferenceWindow(c), false, &expected_shape);
    const auto xt = TestTensor::Of<float>(xs, x);
    auto out = engine::testing::RunKernel(**kernel, {&xt}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, expected_shape);
    ExpectNear((*out)[0].values<float>(), expected, 0.0f);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// ConvTranspose against a naive reference (scatter form, written from the ONNX specification):
// 1-D, 2-D, 3-D, groups, strides, dilations, pads, output_padding, output_shape (including one
// larger than the natural size), auto_pad, no bias, constant and runtime weights, threads, shapes
// unknown at load, workspace declared == estimated, errors naming the node.
#include <algorithm>

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

struct TCase {
  Shape x, w;  // w: [C, M / group, k...]
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias = true;
  bool constant_w = false;
  int threads = 1;
};

// Output size and head padding per spatial dim, as the ONNX specification gives them.
void RefGeometry(const TCase& c, std::vector<int64_t>* out, std::vector<int64_t>* head) {
  const size_t sp = c.x.rank() - 2;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[i];
    const int64_t natural = s * (c.x[2 + i] - 1) + op + (c.w[2 + i] - 1) * d + 1;
    if (!c.output_shape.empty() || c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      const int64_t o = c.output_shape.empty() ? c.x[2 + i] * s : c.output_shape[i];
      const int64_t total = std::max<int64_t>(0, natural - o);
      out->push_back(o);
      head->push_back(c.auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2);
    } else {
      const int64_t pb = c.pads.empty() ? 0 : c.pads[i], pe = c.pads.empty() ? 0 : c.pads[sp + i];
      out->push_back(natural - pb - pe);
      head->push_back(pb);
    }
  }
}

std::vector<float> RefConvTranspose(const std::vector<float>& x, const std::vector<float>& w,
                                    const std::vector<float>& b, const TCase& c, Shape* out_shape) {
  std::vector<int64_t> out_sp, head;
  RefGeometry(c, &out_sp, &head);
  const size_t sp = c.x.rank() - 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {},
          out[3] = {1, 1, 1};
  for (size_t i = 0; i < sp; ++i) {
    const size_t j = 3 - sp + i;
    in[j] = c.x[2 + i], k[j] = c.w[2 + i], out[j] = out_sp[i], pb[j] = head[i];
    s[j] = c.strides.empty() ? 1 : c.strides[i];
    d[j] = c.dilations.empty() ? 1 : c.dilations[i];
  }
  const int64_t n = c.x[0], channels = c.x[1], og = c.w[1], g = c.group, ig = channels / g;
  const int64_t m = og * g, osize = out[0] * out[1] * out[2];
  *out_shape = Shape{n, m};
  for (int64_t o : out_sp) out_shape->push_back(o);
  std::vector<double> acc(n * m * osize, 0.0);
  for (int64_t bi = 0; bi < n; ++bi)
    for (int64_t gi = 0; gi < g; ++gi)
      for (int64_t ic = 0; ic < ig; ++ic)
        for (int64_t oc = 0; oc < og; ++oc)
          for (int64_t i0 = 0; i0 < in[0]; ++i0)
            for (int64_t i1 = 0; i1 < in[1]; ++i1)
              for (int64_t i2 = 0; i2 < in[2]; ++i2)
                for (int64_t k0 = 0; k0 < k[0]; ++k0)
                  for (int64_t k1 = 0; k1 < k[1]; ++k1)
                    for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                      const int64_t o0 = i0 * s[0] + k0 * d[0] - pb[0];
                      const int64_t o1 = i1 * s[1] + k1 * d[1] - pb[1];
                      const int64_t o2 = i2 * s[2] + k2 * d[2] - pb[2];
                      if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 ||
                          o2 >= out[2])
                        continue;
                      const int64_t c_in = gi * ig + ic, c_out = gi * og + oc;
                      const float xv =
                          x[(((bi * channels + c_in) * in[0] + i0) * in[1] + i1) * in[2] + i2];
                      const float wv =
                          w[((c_in * og + oc) * k[0] + k0) * k[1] * k[2] + k1 * k[2] + k2];
                      acc[(bi * m + c_out) * osize + (o0 * out[1] + o1) * out[2] + o2] +=
                          double(xv) * wv;
                    }
  std::vector<float> y(acc.size());
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = static_cast<float>(acc[i] + (b.empty() ? 0.0 : b[(i / osize) % m]));
  }
  return y;
}

void Check(const TCase& c) {
  SCOPED_TRACE(absl::StrCat("x ", c.x.ToString(), " w ", c.w.ToString(), " group ", c.group,
                            " strides ", absl::StrJoin(c.strides, ","), " pads ",
                            absl::StrJoin(c.pads, ","), " output_padding ",
                            absl::StrJoin(c.output_padding, ","), " output_shape ",
                            absl::StrJoin(c.output_shape, ","), " auto_pad '", c.auto_pad, "'"));
  const std::vector<float> x = RandomFloats(c.x.NumElements(), 71);
  const std::vector<float> w = RandomFloats(c.w.NumElements(), 72);
  const std::vector<float> b = c.bias ? RandomFloats(c.w[1] * c.group, 73) : std::vector<float>{};
  Shape expected_shape;
  const std::vector<float> expected = RefConvTranspose(x, w, b, c, &expected_shape);
  KernelTester t("ConvTranspose", 11);
  KernelTester spec("ConvTranspose", 11);
  auto attr = [&](const char* name, const std::vector<int64_t>& v) {
    if (!v.empty()) t.Attr(name, v), spec.Attr(name, v);
  };
  attr("strides", c.strides);
  attr("dilations", c.dilations);
  attr("pads", c.pads);
  attr("output_padding", c.output_padding);
  attr("output_shape", c.output_shape);
  if (c.group != 1) t.Attr("group", c.group), spec.Attr("group", c.group);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad), spec.Attr("auto_pad", c.auto_pad);
  t.Input<float>(c.x, x).Input<float>(c.w, w, c.constant_w).Threads(c.threads);
  spec.Input(TestTensor::Of<float>(c.x, x))
      .Input(TestTensor::Of<float>(c.w, w), true, c.constant_w)
      .Threads(c.threads);
  if (c.bias) {
    t.Input<float>({c.w[1] * c.group}, b, c.constant_w);
    spec.Input(TestTensor::Of<float>({c.w[1] * c.group}, b), true, c.constant_w);
  }
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 1e-4f);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(ConvTransposeTest, StridesPadsDilations) {
  Check({.x = {1, 1, 3, 3}, .w = {1, 2, 3, 3}});
  Check({.x = {2, 3, 5, 4}, .w = {3, 4, 3, 2}, .strides = {2, 3}, .pads = {1, 0, 2, 1}});
  Check({.x = {1, 4, 6, 6}, .w = {4, 2, 3, 3}, .dilations = {2, 2}, .pads = {1, 1, 1, 1}});
  Check({.x = {1, 2, 4, 5},
         .w = {2, 3, 2, 3},
         .strides = {2, 2},
         .dilations = {2, 1},
         .bias = false,
         .constant_w = true});
}

TEST(ConvTransposeTest, GroupsOneAndThreeD) {
  Check({.x = {1, 4, 5, 5}, .w = {4, 3, 3, 3}, .group = 2, .strides = {2, 2}});
  Check(
      {.x = {2, 6, 4, 4}, .w = {6, 1, 3, 3}, .group = 6, .pads = {1, 1, 1, 1}, .constant_w = true});
  Check({.x = {2, 3, 7}, .w = {3, 2, 4}, .strides = {3}, .pads = {1, 2}});
  Check({.x = {1, 2, 3, 4, 3}, .w = {2, 2, 2, 3, 2}, .strides = {2, 1, 2}, .constant_w = true});
  // A trailing unit axis runs as the lower-rank deconvolution (its weights' strides permuted).
  Check({.x = {1, 6, 9, 1}, .w = {6, 2, 3, 1}, .group = 3, .strides = {2, 1}, .constant_w = true});
  Check({.x = {2, 4, 7, 1}, .w = {4, 5, 4, 1}, .strides = {2, 2}, .pads = {1, 0, 1, 0}});
  Check({.x = {2, 32, 14, 14},
         .w = {32, 16, 4, 4},
         .strides = {2, 2},
         .pads = {1, 1, 1, 1},
         .constant_w = true,
         .threads = 2});
}

TEST(ConvTransposeTest, OutputPaddingOutputShapeAndAutoPad) {
  Check({.x = {1, 1, 3, 3}, .w = {1, 2, 3, 3}, .strides = {3, 2}, .output_padding = {1, 1}});
  // Natural size 9x7: a larger output_shape pads nothing; the extra tail is the bias alone.
  Check({.x = {1, 1, 3, 3}, .w = {1, 2, 3, 3}, .strides = {3, 2}, .output_shape = {10, 8}});
  Check({.x = {1, 1, 3, 3},
         .w = {1, 2, 3, 3},
         .strides = {3, 2},
         .output_padding = {1, 1},
         .output_shape = {10, 8}});
  // Smaller than natural: the padding is split, the larger half at the tail.
  Check({.x = {1, 2, 4, 4}, .w = {2, 2, 3, 3}, .strides = {2, 2}, .output_shape = {6, 7}});
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2, 3}) {
      Check({.x = {1, 2, 3, 4}, .w = {2, 3, 3, 2}, .strides = {stride, stride}, .auto_pad = mode});
    }
  }
}

TEST(ConvTransposeTest, ShapesUnknownAtLoad) {
  const Shape ws{3, 2, 3, 3};
  const std::vector<float> w = RandomFloats(ws.NumElements(), 74);
  KernelTester spec("ConvTranspose", 11);
  spec.Attr("strides", std::vector<int64_t>{2, 2})
      .Input(TestTensor::Of<float>({1, 3, 4, 4}, std::vector<float>(48)), /*shape_known=*/false)
      .Input(TestTensor::Of<float>(ws, w), /*shape_known=*/true, /*constant=*/true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const TestTensor wt = TestTensor::Of<float>(ws, w);
  for (const Shape& xs : {Shape{1, 3, 4, 4}, Shape{2, 3, 5, 7}, Shape{1, 3, 4, 4}}) {
    const std::vector<float> x = RandomFloats(xs.NumElements(), 75);
    Shape expected_shape;
    const std::vector<float> expected =
        RefConvTranspose(x, w, {}, {.x = xs, .w = ws, .strides = {2, 2}}, &expected_shape);
    const TestTensor xt = TestTensor::Of<float>(xs, x);
    for (int threads : {1, 2}) {
      auto out = engine::testing::RunKernel(**kernel, {&xt, &wt}, 1, threads);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape, expected_shape);
      ExpectNear((*out)[0].values<float>(), expected, 1e-4f);
    }
  }
}

TEST(ConvTransposeTest, Errors) {
  auto run = [](KernelTester& t) { return t.Run(CpuRegistry()).status(); };
  {
    KernelTester t("ConvTranspose", 11);
    t.Input<float>({1, 3, 4, 4}, std::vector<float>(48))
        .Input<float>({2, 2, 3, 3}, std::vector<float>(36));
    const absl::Status s = run(t);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("(ConvTranspose)"), std::string::npos) << s;
    EXPECT_NE(s.message().find("W[0] = C"), std::string::npos) << s;
  }
  {
    KernelTester t("ConvTranspose", 11);
    t.Attr("group", int64_t{2})
        .Input<float>({1, 3, 4, 4}, std::vector<float>(48))
        .Input<float>({3, 2, 3, 3}, std::vector<float>(54));
    EXPECT_EQ(run(t).code(), absl::StatusCode::kInvalidArgument);
  }
  {
    KernelTester t("ConvTranspose", 11);
    t.Input<float>({1, 1, 4, 4}, std::vector<float>(16))
        .Input<float>({1, 1, 3, 3}, std::vector<float>(9))
        .Input<float>({2}, {0, 0});
    const absl::Status s = run(t);
    EXPECT_NE(s.message().find("bias has shape"), std::string::npos) << s;
  }
  {
    KernelTester t("ConvTranspose", 11);
    t.Attr("pads", std::vector<int64_t>{3, 3, 3, 3})
        .Input<float>({1, 1, 2, 2}, std::vector<float>(4))
        .Input<float>({1, 1, 2, 2}, std::vector<float>(4));
    const absl::Status s = run(t);
    EXPECT_NE(s.message().find("is negative"), std::string::npos) << s;
  }
  {
    KernelTester t("ConvTranspose", 11);
    t.Attr("output_padding", std::vector<int64_t>{-1, 0})
        .Input<float>({1, 1, 2, 2}, std::vector<float>(4))
        .Input<float>({1, 1, 2, 2}, std::vector<float>(4));
    EXPECT_EQ(run(t).code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

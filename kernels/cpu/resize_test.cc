// Resize against a naive N-D reference written after the ONNX reference implementation
// (onnx/backend/test/case/node/resize.py: recursive 1-D interpolation, neighbours chosen by
// distance from an edge-padded line): nearest (4 rounding modes), linear and cubic, every
// coordinate transformation mode, scales and sizes, several resized dims at once, roi with
// extrapolation, exclude_outside; Upsample 7/9 and Resize 10; uint8 nearest; threads; errors.
#include <algorithm>
#include <cmath>
#include <numeric>

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

struct Opts {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude = false;
  double extrap = 0;
};

std::vector<double> RefCoeffs(double ratio, const Opts& o) {
  if (o.mode == "linear") return {1 - ratio, ratio};
  if (o.mode == "cubic") {
    const double a = o.a, r = ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a};
  }
  if (ratio == 1.0) return {0, 1};
  if (o.nearest == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  if (o.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
  if (o.nearest == "floor") return {1, 0};
  return {0, 1};  // ceil
}

double Interp1D(const std::vector<double>& data, double scale, int64_t x, double roi0, double roi1,
                const Opts& o) {
  const int64_t w = static_cast<int64_t>(data.size());
  const double out_w = scale * w;
  double xo;
  if (o.coord == "align_corners") {
    xo = out_w == 1 ? 0 : x * (w - 1) / (out_w - 1);
  } else if (o.coord == "asymmetric") {
    xo = x / scale;
  } else if (o.coord == "tf_crop_and_resize") {
    xo = out_w == 1 ? (roi1 - roi0) * (w - 1) / 2 : x * (roi1 - roi0) * (w - 1) / (out_w - 1);
    xo += roi0 * (w - 1);
    if (xo < 0 || xo > w - 1) return o.extrap;
  } else if (o.coord == "pytorch_half_pixel") {
    xo = out_w == 1 ? 0 : (x + 0.5) / scale - 0.5;  // the spec's 0 (the reference has -0.5)
  } else {
    xo = (x + 0.5) / scale - 0.5;
  }
  const double ratio = xo == std::floor(xo) ? 1.0 : xo - std::floor(xo);
  std::vector<double> c = RefCoeffs(ratio, o);
  const int64_t n = static_cast<int64_t>(c.size()), pad = (n + 1) / 2;
  // Neighbours: the n indexes of the edge-padded line nearest to xo, smaller ones first on ties.
  std::vector<int64_t> idx(w + 2 * pad);
  std::iota(idx.begin(), idx.end(), 0);
  const double xp = xo + pad;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t p, int64_t q) { return std::abs(xp - p) < std::abs(xp - q); });
  idx.resize(n);
  std::sort(idx.begin(), idx.end());
  double sum = 0, acc = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = idx[k] - pad;
    if (o.exclude && (i < 0 || i >= w)) c[k] = 0;
    sum += c[k];
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = std::clamp<int64_t>(idx[k] - pad, 0, w - 1);
    acc += (o.exclude ? c[k] / sum : c[k]) * data[i];
  }
  return acc;
}

// data is a dense tensor of `shape`; recursion over the first dim, as the reference does.
double InterpND(const std::vector<double>& data, const Shape& shape, size_t dim,
                const std::vector<double>& scales, const std::vector<int64_t>& x,
                const std::vector<double>& roi, const Opts& o) {
  const size_t rank = scales.size();
  const int64_t inner = shape.SizeFrom(dim + 1);
  std::vector<double> line(shape[dim]);
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (dim + 1 == rank) {
      line[i] = data[i];
    } else {
      std::vector<double> sub(data.begin() + i * inner, data.begin() + (i + 1) * inner);
      line[i] = InterpND(sub, shape, dim + 1, scales, x, roi, o);
    }
  }
  return Interp1D(line, scales[dim], x[dim], roi[dim], roi[rank + dim], o);
}

std::vector<float> RefResize(const std::vector<float>& in, const Shape& s, const Shape& out,
                             const std::vector<double>& scales, std::vector<double> roi,
                             const Opts& o) {
  const std::vector<double> data(in.begin(), in.end());
  if (roi.empty()) {
    roi.assign(2 * s.rank(), 0.0);
    for (size_t d = 0; d < s.rank(); ++d) roi[s.rank() + d] = 1.0;
  }
  std::vector<float> y(out.NumElements());
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    y[i] = static_cast<float>(InterpND(data, s, 0, scales, testing::Unflatten(i, out), roi, o));
  }
  return y;
}

// Resize-13 with `scales` (sizes empty) or `sizes`, against the reference.
void CheckResize(const Shape& s, const Opts& o, std::vector<float> scales,
                 std::vector<int64_t> sizes, std::vector<float> roi = {}, int threads = 1) {
  SCOPED_TRACE(s.ToString() + " " + o.mode + " " + o.coord + " " + o.nearest);
  std::vector<float> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 23) - 5.0f;
  Shape out;
  std::vector<double> ref_scales;
  for (size_t d = 0; d < s.rank(); ++d) {
    if (!sizes.empty()) {
      out.push_back(sizes[d]);
      ref_scales.push_back(static_cast<double>(sizes[d]) / s[d]);
    } else {
      out.push_back(static_cast<int64_t>(std::floor(double(scales[d]) * s[d])));
      ref_scales.push_back(scales[d]);
    }
  }
  KernelTester t("Resize", 13);
  t.Attr("mode", o.mode).Attr("coordinate_transformation_mode", o.coord);
  t.Attr("nearest_mode", o.nearest).Attr("cubic_coeff_a", static_cast<float>(o.a));
  t.Attr("exclude_outside", int64_t{o.exclude}).Attr("extrapolation_value", float(o.extrap));
  t.Input<float>(s, x).Threads(threads);
  if (roi.empty()) {
    t.AbsentInput();
  } else {
    t.Input<float>({static_cast<int64_t>(roi.size())}, roi);
  }
  if (sizes.empty()) {
    t.Input<float>({static_cast<int64_t>(scales.size())}, scales);
  } else {
    t.AbsentInput().Input<int64_t>({static_cast<int64_t>(sizes.size())}, sizes);
  }
  auto y = t.Run(CpuRegistry());
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0].shape(), out);
  ExpectNear(Values<float>((*y)[0]),
             RefResize(x, s, out, ref_scales, std::vector<double>(roi.begin(), roi.end()), o),
             1e-4f);
}

TEST(ResizeTest, NearestModes) {
  for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      Opts o;
      o.coord = coord;
      o.nearest = nearest;
      CheckResize({1, 2, 4, 5}, o, {1, 1, 2, 3}, {});
      CheckResize({1, 2, 4, 5}, o, {1, 1, 0.6f, 0.5f}, {});
      CheckResize({1, 2, 4, 5}, o, {}, {1, 2, 7, 8});
      CheckResize({1, 2, 4, 5}, o, {}, {1, 2, 3, 1});
    }
  }
}

TEST(ResizeTest, LinearAndCubic) {
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
      Opts o;
      o.mode = mode;
      o.coord = coord;
      CheckResize({1, 2, 4, 4}, o, {1, 1, 2, 2}, {});
      CheckResize({1, 1, 4, 4}, o, {1, 1, 0.6f, 0.8f}, {});
      CheckResize({1, 1, 4, 4}, o, {}, {1, 1, 9, 10});
      CheckResize({1, 1, 4, 4}, o, {}, {1, 1, 3, 1});
      CheckResize({3, 4, 5}, o, {2, 0.5f, 1.5f}, {});  // three resized dims
      CheckResize({6}, o, {}, {13});
    }
  }
  Opts c;
  c.mode = "cubic";
  c.a = -0.5;
  c.exclude = true;
  CheckResize({1, 1, 4, 4}, c, {1, 1, 2, 2}, {});
  CheckResize({1, 1, 4, 4}, c, {1, 1, 0.8f, 0.8f}, {});
}

TEST(ResizeTest, CropAndResize) {
  for (const char* mode : {"nearest", "linear"}) {
    Opts o;
    o.mode = mode;
    o.coord = "tf_crop_and_resize";
    CheckResize({1, 1, 4, 4}, o, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f});
    o.extrap = 10;
    CheckResize({1, 1, 4, 4}, o, {}, {1, 1, 3, 3}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
    CheckResize({1, 1, 4, 4}, o, {}, {1, 1, 1, 5}, {0, 0, -0.5f, 0.2f, 1, 1, 0.5f, 0.9f});
  }
}

// Large tensors split across threads give the same bytes as one thread (the reference is too
// slow at this size; the small cases above pin the values).
TEST(ResizeTest, ThreadsAgree) {
  const Shape s{2, 8, 33, 40};
  std::vector<float> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 23) - 5.0f;
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    std::vector<float> results[2];
    for (int threads : {1, 2}) {
      KernelTester t("Resize", 13);
      t.Attr("mode", std::string(mode))
          .Input<float>(s, x)
          .AbsentInput()
          .AbsentInput()
          .Input<int64_t>({4}, {2, 8, 66, 29})
          .Threads(threads);
      auto y = t.Run(CpuRegistry());
      ASSERT_TRUE(y.ok()) << y.status();
      results[threads - 1] = Values<float>((*y)[0]);
    }
    EXPECT_EQ(results[0], results[1]) << mode;
  }
}

TEST(ResizeTest, UpsampleAndOpset10) {
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<float> nearest = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                      3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  {
    KernelTester t("Upsample", 7);
    t.Attr("mode", std::string("nearest"))
        .Attr("scales", std::vector<float>{1, 1, 2, 3})
        .Input<float>({1, 1, 2, 2}, x);
    auto y = t.Run(CpuRegistry());
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0].shape(), (Shape{1, 1, 4, 6}));
    EXPECT_EQ(Values<float>((*y)[0]), nearest);
  }
  for (const char* op : {"Upsample", "Resize"}) {
    KernelTester t(op, std::string(op) == "Upsample" ? 9 : 10);
    t.Input<float>({1, 1, 2, 2}, x).Input<float>({4}, {1, 1, 2, 3});
    auto y = t.Run(CpuRegistry());
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values<float>((*y)[0]), nearest);
  }
  {
    // Linear, asymmetric: x_original = x / 2, clamped at the end.
    KernelTester t("Upsample", 9);
    t.Attr("mode", std::string("linear"))
        .Input<float>({1, 1, 1, 2}, {1, 3})
        .Input<float>({4}, {1, 1, 1, 2});
    auto y = t.Run(CpuRegistry());
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values<float>((*y)[0]), (std::vector<float>{1, 2, 3, 3}));
  }
  {
    const std::vector<uint8_t> u = {10, 20, 30, 40};
    KernelTester t("Resize", 13);
    t.Attr("mode", std::string("nearest"))
        .Input<uint8_t>({1, 1, 2, 2}, u)
        .AbsentInput()
        .AbsentInput()
        .Input<int64_t>({4}, {1, 1, 3, 3});
    auto y = t.Run(CpuRegistry());
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values<uint8_t>((*y)[0]), (std::vector<uint8_t>{10, 10, 20, 10, 10, 20, 30, 30, 40}));
  }
}

TEST(ResizeTest, Errors) {
  {
    KernelTester t("Resize", 13);
    t.Input<float>({1, 2}, {1, 2}).AbsentInput().Input<float>({3}, {1, 1, 2});
    auto y = t.Run(CpuRegistry());
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().message(),
              "node 'test_Resize' (Resize): scales has 3 entries for 2 resized axes of input "
              "[1,2] (and sizes are not given)");
  }
  {
    KernelTester t("Resize", 13);
    t.Input<float>({1, 2}, {1, 2}).AbsentInput().Input<float>({2}, {1, -1});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {
    KernelTester t("Resize", 13);
    t.Attr("mode", std::string("linear"))
        .Input<int32_t>({1, 2}, {1, 2})
        .AbsentInput()
        .Input<float>({2}, {1, 2});
    auto y = t.Run(CpuRegistry());
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kUnimplemented);
  }
  {
    KernelTester t("Resize", 13);
    t.Attr("coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"))
        .Input<float>({1, 2}, {1, 2})
        .AbsentInput()
        .Input<float>({2}, {1, 2});
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());  // removed in opset 13
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

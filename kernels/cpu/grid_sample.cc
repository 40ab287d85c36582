// GridSample (opsets 16 and 20), own code, float32 and float64: Y[n, c, p] is X[n, c] sampled at
// the normalized point grid[n, p] (coordinates innermost dim first: x = width, y = height, ...).
// Opset 16 takes 4-D X and modes bilinear / nearest / bicubic; opset 20 names them linear /
// nearest / cubic and takes 1 to 4 spatial dims (the kernel's limit). Per output point the taps
// (input offset, weight) are worked out once, then reused for every channel:
//   pass 1: each grid coordinate is unnormalized (align_corners maps -1..1 to the first and last
//           pixel centres, otherwise to the outer pixel edges), rounded half to even for nearest,
//           and, when outside the image, clamped (border) or reflected (reflection);
//   pass 2: each tap index is resolved by the padding mode (zeros drops it, border clamps it,
//           reflection reflects it), weights are 1 / linear / cubic (Keys, a = -0.75) per dim;
//   pass 3: per channel, Y = sum over taps of weight * X.
// Immutable after creation: thread-safe.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxSpatial = 4;
constexpr int kMaxTapsPerDim = 4;
constexpr int kMaxTaps = 256;  // 4^kMaxSpatial

// x reflected by the bounds [lo, hi] until it lies inside them.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double r = dx - flips * range;
  const bool even = std::fmod(flips, 2.0) == 0;
  if (x < lo) return even ? lo + r : hi - r;
  return even ? hi - r : lo + r;
}

// Keys' cubic convolution weights for the taps at -1, 0, 1, 2 around a point t in [0, 1).
void CubicWeights(double t, double w[4]) {
  constexpr double a = -0.75;
  const double t1 = t + 1, t2 = 1 - t, t3 = 2 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = ((a * t3 - 5 * a) * t3 + 8 * a) * t3 - 4 * a;
}

class GridSampleKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GridSampleKernel>> Create(const KernelInfo& info) {
    const bool v20 = info.opset() >= 20;
    const std::string mode = info.GetString("mode", v20 ? "linear" : "bilinear");
    Mode m;
    if (mode == "nearest") {
      m = Mode::kNearest;
    } else if (mode == (v20 ? "linear" : "bilinear")) {
      m = Mode::kLinear;
    } else if (mode == (v20 ? "cubic" : "bicubic")) {
      m = Mode::kCubic;
    } else {
      return info.Error(absl::StrCat("mode '", mode, "' is not one of ",
                                     v20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic",
                                     " (opset ", info.opset(), ")"));
    }
    const std::string padding = info.GetString("padding_mode", "zeros");
    Padding p;
    if (padding == "zeros") {
      p = Padding::kZeros;
    } else if (padding == "border") {
      p = Padding::kBorder;
    } else if (padding == "reflection") {
      p = Padding::kReflection;
    } else {
      return info.Error(
          absl::StrCat("padding_mode '", padding, "' is not one of zeros, border, reflection"));
    }
    return std::unique_ptr<GridSampleKernel>(
        new GridSampleKernel(info, m, p, info.GetInt("align_corners", 0) != 0, v20));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* grid, RequiredInput(ctx, 1, node_));
    const Shape& xs = x->shape();
    const Shape& gs = grid->shape();
    const int64_t rank = static_cast<int64_t>(xs.rank());
    if (v20_ ? (rank < 3 || rank > kMaxSpatial + 2) : rank != 4) {
      return node_.InvalidArgument(absl::StrCat(
          "X must be ", v20_ ? "[N, C, D1, ...] with 1 to 4 spatial dims" : "[N, C, H, W]",
          ", got ", xs.ToString()));
    }
    const int64_t spatial = rank - 2;
    if (static_cast<int64_t>(gs.rank()) != rank || gs[0] != xs[0] || gs[rank - 1] != spatial) {
      return node_.InvalidArgument(
          absl::StrCat("grid must be [N, ", spatial == 2 ? "H_out, W_out" : "out dims...", ", ",
                       spatial, "] with N = ", xs[0], ", got ", gs.ToString()));
    }
    if (grid->dtype() != x->dtype()) {
      return node_.InvalidArgument("grid must have X's element type");
    }
    std::vector<int64_t> out_dims = {xs[0], xs[1]};
    for (int64_t i = 1; i < rank - 1; ++i) out_dims.push_back(gs[i]);
    if (!inferd::CheckedProduct(out_dims)) return node_.InvalidArgument("Y's size overflows");
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(out_dims)));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run<T>(*x, *grid, *y, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  GridSampleKernel(const KernelInfo& info, Mode m, Padding p, bool align_corners, bool v20)
      : node_(info), mode_(m), padding_(p), align_corners_(align_corners), v20_(v20) {}

  // An integer index along a dim of `len`, resolved by the padding mode; -1 when it reads zero.
  int64_t ResolveIndex(int64_t i, int64_t len, double lo, double hi) const {
    if (i >= 0 && i < len) return i;
    switch (padding_) {
      case Padding::kZeros:
        return -1;
      case Padding::kBorder:
        return std::clamp<int64_t>(i, 0, len - 1);
      default:
        return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0,
                                   len - 1);
    }
  }

  // The taps along one dim for normalized coordinate g: up to 4 (index, weight) pairs; returns
  // how many (0 when every tap reads zero padding).
  int DimTaps(double g, int64_t len, int64_t idx[kMaxTapsPerDim], double w[kMaxTapsPerDim]) const {
    const double lo = align_corners_ ? 0.0 : -0.5;
    const double hi = align_corners_ ? static_cast<double>(len - 1) : len - 0.5;
    // pass 1: unnormalize, round, pad the coordinate.
    double c = align_corners_ ? (g + 1) / 2 * static_cast<double>(len - 1)
                              : ((g + 1) * static_cast<double>(len) - 1) / 2;
    if (mode_ == Mode::kNearest) c = std::nearbyint(c);
    if (std::isnan(c)) return 0;
    if (c < lo || c > hi) {
      if (padding_ == Padding::kBorder) c = std::clamp(c, 0.0, static_cast<double>(len - 1));
      if (padding_ == Padding::kReflection) c = Reflect(c, lo, hi);
    }
    // Far outside (zeros padding only): every tap reads zero; also keeps the casts defined.
    if (!(c > -4.0 && c < static_cast<double>(len) + 4.0)) return 0;
    // pass 2: taps and weights.
    int n = 0;
    auto add = [&](int64_t i, double weight) {
      const int64_t r = ResolveIndex(i, len, lo, hi);
      if (r >= 0) {
        idx[n] = r;
        w[n] = weight;
        ++n;
      }
    };
    if (mode_ == Mode::kNearest) {
      add(static_cast<int64_t>(c), 1.0);
    } else {
      const double f = std::floor(c);
      const double t = c - f;
      const int64_t i0 = static_cast<int64_t>(f);
      if (mode_ == Mode::kLinear) {
        add(i0, 1 - t);
        add(i0 + 1, t);
      } else {
        double cw[4];
        CubicWeights(t, cw);
        for (int k = 0; k < 4; ++k) add(i0 - 1 + k, cw[k]);
      }
    }
    return n;
  }

  template <typename T>
  void Run(const Tensor& x, const Tensor& grid, Tensor& y, engine::ThreadPool& pool) const {
    const Shape& xs = x.shape();
    const int spatial = static_cast<int>(xs.rank()) - 2;
    const int64_t batch = xs[0], channels = xs[1];
    const int64_t in_points = xs.SizeFrom(2);
    const int64_t out_points = grid.shape().SizeBetween(1, grid.shape().rank() - 1);
    int64_t stride[kMaxSpatial];
    int64_t s = 1;
    for (int d = spatial - 1; d >= 0; --d) {
      stride[d] = s;
      s *= xs[2 + d];
    }
    const T* xd = x.data<T>();
    const T* gd = grid.data<T>();
    T* yd = y.mutable_data<T>();
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, channels));
    pool.ParallelFor(batch * out_points, grain, [&](int64_t begin, int64_t end) {
      int64_t idx[kMaxSpatial][kMaxTapsPerDim];
      double w[kMaxSpatial][kMaxTapsPerDim];
      int count[kMaxSpatial];
      int64_t tap_offset[kMaxTaps];
      double tap_weight[kMaxTaps];
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / out_points, p = i % out_points;
        const T* g = gd + i * spatial;
        int taps = 1;
        for (int d = 0; d < spatial; ++d) {
          // The grid's coordinates run innermost dim first.
          count[d] = DimTaps(static_cast<double>(g[spatial - 1 - d]), xs[2 + d], idx[d], w[d]);
          taps *= count[d];
        }
        // The product of the dims' taps, as an odometer over their counts.
        int digit[kMaxSpatial] = {};
        for (int t = 0; t < taps; ++t) {
          int64_t off = 0;
          double weight = 1;
          for (int d = 0; d < spatial; ++d) {
            off += idx[d][digit[d]] * stride[d];
            weight *= w[d][digit[d]];
          }
          tap_offset[t] = off;
          tap_weight[t] = weight;
          for (int d = spatial - 1; d >= 0; --d) {
            if (++digit[d] < count[d]) break;
            digit[d] = 0;
          }
        }
        // pass 3: every channel through the same taps.
        for (int64_t c = 0; c < channels; ++c) {
          const T* src = xd + (n * channels + c) * in_points;
          double v = 0;
          for (int t = 0; t < taps; ++t) {
            v += tap_weight[t] * static_cast<double>(src[tap_offset[t]]);
          }
          yd[(n * channels + c) * out_points + p] = static_cast<T>(v);
        }
      }
    });
  }

  const NodeLabel node_;
  const Mode mode_;
  const Padding padding_;
  const bool align_corners_;
  const bool v20_;
};

}  // namespace

std::vector<engine::KernelDef> GridSampleKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "GridSample", 16, 19, TypesOf(FloatTypes{}),
                 FactoryOf<GridSampleKernel>()),
          CpuDef(engine::kOnnxDomain, "GridSample", 20, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<GridSampleKernel>())};
}

}  // namespace inferd::kernels::cpu

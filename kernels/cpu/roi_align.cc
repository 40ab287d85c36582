// RoiAlign (opsets 10 and 16), own code, float32 and float64: Y[r, c] is the output_height x
// output_width pooling of X[batch_indices[r], c] over the region rois[r] = (x1, y1, x2, y2),
// scaled by spatial_scale. Each bin averages (avg) or takes the max of (max) a grid of bilinear
// samples, sampling_ratio per side or, when 0, ceil(region side / bins) per side.
// coordinate_transformation_mode (opset 16; default half_pixel there) half_pixel shifts the
// region by -0.5 pixel; output_half_pixel (opset 10's only behaviour) does not, and makes each
// region at least 1 x 1. Samples past the image by more than one pixel read 0; the rest are
// clamped to the edge. Max mode takes, for each sample, the largest of its four weighted corner
// terms, which is what ONNX Runtime and the ONNX reference compute (not the max of the
// interpolated values). The work is split over (roi, bin); nothing is allocated. Immutable after
// creation: thread-safe.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

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

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Samples per bin beyond this are refused (an adaptive grid on a huge region).
constexpr int64_t kMaxSamplesPerBin = int64_t{1} << 20;

class RoiAlignKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RoiAlignKernel>> Create(const KernelInfo& info) {
    const std::string mode = info.GetString("mode", "avg");
    if (mode != "avg" && mode != "max") {
      return info.Error(absl::StrCat("mode '", mode, "' is not one of avg, max"));
    }
    const std::string ctm = info.GetString("coordinate_transformation_mode",
                                           info.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (ctm != "half_pixel" && ctm != "output_half_pixel") {
      return info.Error(absl::StrCat("coordinate_transformation_mode '", ctm,
                                     "' is not one of half_pixel, output_half_pixel"));
    }
    const int64_t oh = info.GetInt("output_height", 1), ow = info.GetInt("output_width", 1);
    const int64_t ratio = info.GetInt("sampling_ratio", 0);
    if (oh <= 0 || ow <= 0) {
      return info.Error(
          absl::StrCat("output_height and output_width must be > 0, got ", oh, " and ", ow));
    }
    if (ratio < 0 || ratio * ratio > kMaxSamplesPerBin) {
      return info.Error(absl::StrCat("sampling_ratio must be in [0, 1024], got ", ratio));
    }
    return std::unique_ptr<RoiAlignKernel>(
        new RoiAlignKernel(info, mode == "max", ctm == "half_pixel", oh, ow, ratio,
                           info.GetFloat("spatial_scale", 1.0f)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* rois, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* idx, RequiredInput(ctx, 2, node_));
    const Shape& xs = x->shape();
    if (xs.rank() != 4) {
      return node_.InvalidArgument(absl::StrCat("X must be [N, C, H, W], got ", xs.ToString()));
    }
    if (rois->shape().rank() != 2 || rois->shape()[1] != 4) {
      return node_.InvalidArgument(
          absl::StrCat("rois must be [num_rois, 4], got ", rois->shape().ToString()));
    }
    const int64_t num_rois = rois->shape()[0];
    if (idx->shape().rank() != 1 || idx->shape()[0] != num_rois) {
      return node_.InvalidArgument(
          absl::StrCat("batch_indices must be [", num_rois, "], got ", idx->shape().ToString()));
    }
    if (rois->dtype() != x->dtype()) return node_.InvalidArgument("rois must have X's type");
    INFERD_RETURN_IF_ERROR(CheckType(*idx, DataType::kInt64, 2, node_));
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t b = idx->data<int64_t>()[r];
      if (b < 0 || b >= xs[0]) {
        return node_.InvalidArgument(
            absl::StrCat("batch_indices[", r, "] = ", b, " is outside [0, ", xs[0], ")"));
      }
    }
    const std::vector<int64_t> out = {num_rois, xs[1], oh_, ow_};
    if (!inferd::CheckedProduct(out)) return node_.InvalidArgument("Y's size overflows");
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(out)));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return Run<T>(*x, *rois, idx->data<int64_t>(), *y, ctx.threads());
    });
  }

 private:
  RoiAlignKernel(const KernelInfo& info, bool max, bool half_pixel, int64_t oh, int64_t ow,
                 int64_t ratio, float scale)
      : node_(info),
        max_(max),
        half_pixel_(half_pixel),
        oh_(oh),
        ow_(ow),
        ratio_(ratio),
        scale_(scale) {}

  // One region in pixels and its sampling grid.
  struct Region {
    double y0, x0, bin_h, bin_w;
    int64_t grid_h, grid_w;
  };

  template <typename T>
  absl::StatusOr<Region> RegionOf(const T* roi) const {
    const double offset = half_pixel_ ? 0.5 : 0.0;
    const double x1 = static_cast<double>(roi[0]) * scale_ - offset;
    const double y1 = static_cast<double>(roi[1]) * scale_ - offset;
    const double x2 = static_cast<double>(roi[2]) * scale_ - offset;
    const double y2 = static_cast<double>(roi[3]) * scale_ - offset;
    if (!std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(x2) || !std::isfinite(y2)) {
      return node_.InvalidArgument("rois holds a non-finite coordinate");
    }
    double h = y2 - y1, w = x2 - x1;
    if (!half_pixel_) {
      h = std::max(h, 1.0);
      w = std::max(w, 1.0);
    }
    Region r{y1, x1, h / static_cast<double>(oh_), w / static_cast<double>(ow_), ratio_, ratio_};
    if (ratio_ == 0) {
      const double gh = std::ceil(h / static_cast<double>(oh_));
      const double gw = std::ceil(w / static_cast<double>(ow_));
      if (gh * std::max(gw, 1.0) > static_cast<double>(kMaxSamplesPerBin) ||
          gw > static_cast<double>(kMaxSamplesPerBin)) {
        return node_.InvalidArgument("a region needs more than 2^20 samples per bin");
      }
      // A negative size (x2 < x1 under half_pixel) samples nothing.
      r.grid_h = std::max<int64_t>(0, static_cast<int64_t>(gh));
      r.grid_w = std::max<int64_t>(0, static_cast<int64_t>(gw));
    }
    return r;
  }

  template <typename T>
  absl::Status Run(const Tensor& x, const Tensor& rois, const int64_t* batch_index, Tensor& y,
                   engine::ThreadPool& pool) const {
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const int64_t num_rois = rois.shape()[0], bins = oh_ * ow_;
    const T* xd = x.data<T>();
    const T* rd = rois.data<T>();
    T* yd = y.mutable_data<T>();
    // Regions are checked up front so that the parallel part cannot fail.
    for (int64_t r = 0; r < num_rois; ++r) {
      INFERD_RETURN_IF_ERROR(RegionOf(rd + r * 4).status());
    }
    pool.ParallelFor(num_rois * bins, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t r = i / bins, bin = i % bins, ph = bin / ow_, pw = bin % ow_;
        const Region g = *RegionOf(rd + r * 4);
        const T* image = xd + batch_index[r] * channels * height * width;
        T* out = yd + r * channels * bins + bin;
        const double count = static_cast<double>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
        for (int64_t c = 0; c < channels; ++c) out[c * bins] = 0;
        bool first = true;
        for (int64_t iy = 0; iy < g.grid_h; ++iy) {
          double sy = g.y0 + static_cast<double>(ph) * g.bin_h +
                      (static_cast<double>(iy) + 0.5) * g.bin_h / static_cast<double>(g.grid_h);
          for (int64_t ix = 0; ix < g.grid_w; ++ix) {
            double sx = g.x0 + static_cast<double>(pw) * g.bin_w +
                        (static_cast<double>(ix) + 0.5) * g.bin_w / static_cast<double>(g.grid_w);
            int64_t pos[4] = {0, 0, 0, 0};
            double w[4] = {0, 0, 0, 0};
            if (!(sy < -1.0 || sy > static_cast<double>(height) || sx < -1.0 ||
                  sx > static_cast<double>(width))) {
              double yy = std::max(sy, 0.0), xx = std::max(sx, 0.0);
              int64_t ylo = static_cast<int64_t>(yy), xlo = static_cast<int64_t>(xx), yhi, xhi;
              if (ylo >= height - 1) {
                yhi = ylo = height - 1;
                yy = static_cast<double>(ylo);
              } else {
                yhi = ylo + 1;
              }
              if (xlo >= width - 1) {
                xhi = xlo = width - 1;
                xx = static_cast<double>(xlo);
              } else {
                xhi = xlo + 1;
              }
              const double ly = yy - static_cast<double>(ylo), lx = xx - static_cast<double>(xlo);
              const double hy = 1 - ly, hx = 1 - lx;
              pos[0] = ylo * width + xlo;
              pos[1] = ylo * width + xhi;
              pos[2] = yhi * width + xlo;
              pos[3] = yhi * width + xhi;
              w[0] = hy * hx;
              w[1] = hy * lx;
              w[2] = ly * hx;
              w[3] = ly * lx;
            }
            for (int64_t c = 0; c < channels; ++c) {
              const T* src = image + c * height * width;
              T& o = out[c * bins];
              if (!max_) {
                double v = 0;
                for (int k = 0; k < 4; ++k) v += w[k] * static_cast<double>(src[pos[k]]);
                o = static_cast<T>(static_cast<double>(o) + v);
              } else {
                double v = w[0] * static_cast<double>(src[pos[0]]);
                for (int k = 1; k < 4; ++k)
                  v = std::max(v, w[k] * static_cast<double>(src[pos[k]]));
                o = first ? static_cast<T>(v) : std::max(o, static_cast<T>(v));
              }
            }
            first = false;
          }
        }
        if (!max_) {
          for (int64_t c = 0; c < channels; ++c) {
            out[c * bins] = static_cast<T>(static_cast<double>(out[c * bins]) / count);
          }
        }
      }
    });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const bool max_;
  const bool half_pixel_;
  const int64_t oh_, ow_, ratio_;
  const double scale_;
};

}  // namespace

std::vector<engine::KernelDef> RoiAlignKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "RoiAlign", 10, 15, TypesOf(FloatTypes{}),
                 FactoryOf<RoiAlignKernel>()),
          CpuDef(engine::kOnnxDomain, "RoiAlign", 16, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<RoiAlignKernel>())};
}

}  // namespace inferd::kernels::cpu

// AffineGrid (opset 20), float32 and float64: the sampling grid GridSample reads for affine
// transforms `theta`. 2-D: theta [N, 2, 3], size [N, C, H, W] -> grid [N, H, W, 2] with
// grid[n, h, w] = theta[n] * (x_w, y_h, 1); 3-D: theta [N, 3, 4], size [N, C, D, H, W] ->
// [N, D, H, W, 3]. The base coordinates span [-1, 1]: pixel centres ((2i + 1) / L - 1) by
// default, or the corner pixels exactly with align_corners (-1 + 2i / (L - 1)).
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using AffineGridTypes = TypeList<float, double>;

class AffineGridKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<AffineGridKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<AffineGridKernel>(new AffineGridKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* theta, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* size_t_, RequiredInput(ctx, 1, node_));
    Dims size;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*size_t_, "size", node_, &size));
    if (size.size() != 4 && size.size() != 5) {
      return node_.InvalidArgument("size must be [N, C, H, W] or [N, C, D, H, W]");
    }
    const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
    const Shape& t = theta->shape();
    if (t.rank() != 3 || t[0] != size[0] || t[1] != spatial || t[2] != spatial + 1) {
      return node_.InvalidArgument(absl::StrCat("theta ", t.ToString(), " must be [", size[0], ", ",
                                                spatial, ", ", spatial + 1, "] for size of ",
                                                size.size(), " values"));
    }
    Shape out{size[0]};
    for (int64_t d = 2; d < static_cast<int64_t>(size.size()); ++d) {
      if (size[d] < 0) return node_.InvalidArgument("size values must be >= 0");
      out.push_back(size[d]);
    }
    out.push_back(spatial);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, theta->dtype(), out));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(AffineGridTypes{}, theta->dtype(), node_, [&](auto tag) {
      Run<typename decltype(tag)::type>(*theta, size, *y, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  explicit AffineGridKernel(const KernelInfo& info)
      : node_(info), align_corners_(info.GetInt("align_corners", 0) != 0) {}

  // The base coordinate of index i along a dim of length len.
  double Base(int64_t i, int64_t len) const {
    if (align_corners_) return len > 1 ? -1.0 + 2.0 * i / static_cast<double>(len - 1) : 0.0;
    return (2.0 * i + 1.0) / static_cast<double>(len) - 1.0;
  }

  template <typename T>
  void Run(const Tensor& theta, const Dims& size, Tensor& y, engine::ThreadPool& pool) const {
    const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
    // Points in (D,) H, W order; coordinates are (x, y[, z]) = (w, h[, d]).
    const int64_t depth = spatial == 3 ? size[2] : 1, height = size[size.size() - 2],
                  width = size[size.size() - 1];
    const int64_t points = depth * height * width;
    const T* th = theta.data<T>();
    T* out = y.mutable_data<T>();
    const int64_t k = spatial + 1;  // theta's row length
    pool.ParallelFor(size[0] * points, 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / points, p = i % points;
        const int64_t w = p % width, h = (p / width) % height, d = p / (width * height);
        const double base[3] = {Base(w, width), Base(h, height), spatial == 3 ? Base(d, depth) : 0};
        const T* m = th + n * spatial * k;
        for (int64_t r = 0; r < spatial; ++r) {
          double v = static_cast<double>(m[r * k + spatial]);  // translation
          for (int64_t c = 0; c < spatial; ++c) v += static_cast<double>(m[r * k + c]) * base[c];
          out[i * spatial + r] = static_cast<T>(v);
        }
      }
    });
  }

  const NodeLabel node_;
  const bool align_corners_;
};

}  // namespace

std::vector<engine::KernelDef> AffineGridKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "AffineGrid", 20, kMaxOpset, TypesOf(AffineGridTypes{}),
                 FactoryOf<AffineGridKernel>())};
}

}  // namespace inferd::kernels::cpu

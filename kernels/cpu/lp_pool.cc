// LpPool (opsets 1, 2, 11, 18) and GlobalLpPool (1, 2): y = (sum over the window of |x|^p)^(1/p),
// padding contributing zero; float32 and float64, any number of spatial dims. Window geometry
// (kernel_shape, strides, pads / auto_pad, and from opset 18 dilations and ceil_mode) is the
// shared one of Conv and MaxPool (window.h). Opset 1 has a float `p` (default 2.0), later opsets
// an int. p = 1 and p = 2 take exact paths (no pow per element).
//
// How: each output element sums its window; the windows' offsets inside one plane are listed
// once per shape (the taps, up to the kernel's volume), and each output walks them, skipping
// those outside the input. Parallel over (plane, output) pairs.
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/strided_walk.h"
#include "kernels/cpu/type_dispatch.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using LpTypes = TypeList<float, double>;

template <typename T>
T PowerOf(T v, double p) {
  const T a = std::abs(v);
  if (p == 1.0) return a;
  if (p == 2.0) return a * a;
  return static_cast<T>(std::pow(static_cast<double>(a), p));
}

template <typename T>
T RootOf(T sum, double p) {
  if (p == 1.0) return sum;
  if (p == 2.0) return std::sqrt(sum);
  return static_cast<T>(std::pow(static_cast<double>(sum), 1.0 / p));
}

class LpPoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LpPoolKernel>> Create(const KernelInfo& info) {
    const bool global = info.op_type() == "GlobalLpPool";
    WindowAttributes window;
    if (!global) {
      INFERD_ASSIGN_OR_RETURN(window, WindowAttributes::Read(info));
      if (window.kernel_shape.empty()) return info.Error("attribute 'kernel_shape' is required");
      if (info.opset() < 18 && (window.ceil_mode || !window.dilations.empty())) {
        return info.Error("ceil_mode and dilations are LpPool attributes from opset 18");
      }
    }
    // Opset 1: float p; from opset 2: int p.
    const double p =
        info.opset() < 2 ? info.GetFloat("p", 2.0f) : static_cast<double>(info.GetInt("p", 2));
    if (!(p > 0) || !std::isfinite(p)) {
      return info.Error(absl::StrCat("p must be a positive number, got ", p));
    }
    return std::unique_ptr<LpPoolKernel>(new LpPoolKernel(info, global, window, p));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& in = x->shape();
    if (in.rank() < 3) {
      return node_.InvalidArgument(
          absl::StrCat("input must be [N, C, spatial...], got ", in.ToString()));
    }
    const size_t n = in.rank() - 2;
    const std::vector<int64_t> spatial(in.dims().begin() + 2, in.dims().end());
    WindowGeometry g;
    if (global_) {
      g.kernel = spatial;
      g.strides.assign(n, 1);
      g.dilations.assign(n, 1);
      g.pad_begin.assign(n, 0);
      g.out.assign(n, 1);
    } else {
      INFERD_ASSIGN_OR_RETURN(g, ComputeWindow(window_, spatial, window_.kernel_shape, node_));
    }
    Shape out_shape{in[0], in[1]};
    for (int64_t o : g.out) out_shape.push_back(o);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(LpTypes{}, x->dtype(), node_, [&](auto tag) {
      Run<typename decltype(tag)::type>(*x, g, *y, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  LpPoolKernel(const KernelInfo& info, bool global, WindowAttributes window, double p)
      : node_(info), global_(global), window_(std::move(window)), p_(p) {}

  template <typename T>
  void Run(const Tensor& x, const WindowGeometry& g, Tensor& y, engine::ThreadPool& pool) const {
    const Shape& in = x.shape();
    const size_t n = g.out.size();
    const int64_t planes = in[0] * in[1];
    const int64_t plane_in = in.SizeFrom(2);
    int64_t plane_out = 1, taps = 1;
    for (size_t d = 0; d < n; ++d) {
      plane_out *= g.out[d];
      taps *= g.kernel[d];
    }
    const T* src = x.data<T>();
    T* dst = y.mutable_data<T>();
    pool.ParallelFor(planes * plane_out, std::max<int64_t>(1, 4096 / taps),
                     [&](int64_t begin, int64_t end) {
                       Dims pos(n), start(n), tap(n);
                       for (int64_t i = begin; i < end; ++i) {
                         const int64_t plane = i / plane_out;
                         int64_t rest = i % plane_out;
                         for (size_t d = n; d-- > 0;) {
                           pos[d] = rest % g.out[d];
                           rest /= g.out[d];
                           start[d] = pos[d] * g.strides[d] - g.pad_begin[d];
                           tap[d] = 0;
                         }
                         const T* base = src + plane * plane_in;
                         T sum = T(0);
                         for (int64_t t = 0; t < taps; ++t) {
                           int64_t offset = 0;
                           bool inside = true;
                           for (size_t d = 0; d < n && inside; ++d) {
                             const int64_t c = start[d] + tap[d] * g.dilations[d];
                             inside = c >= 0 && c < in[2 + d];
                             offset = offset * in[2 + d] + c;
                           }
                           if (inside) sum += PowerOf(base[offset], p_);
                           for (size_t d = n; d-- > 0;) {  // odometer over the window
                             if (++tap[d] < g.kernel[d]) break;
                             tap[d] = 0;
                           }
                         }
                         dst[i] = RootOf(sum, p_);
                       }
                     });
  }

  const NodeLabel node_;
  const bool global_;
  const WindowAttributes window_;
  const double p_;
};

}  // namespace

std::vector<engine::KernelDef> LpPoolKernelDefs() {
  const std::vector<DataType> types = TypesOf(LpTypes{});
  return {
      CpuDef(engine::kOnnxDomain, "LpPool", 1, 17, types, FactoryOf<LpPoolKernel>()),
      CpuDef(engine::kOnnxDomain, "LpPool", 18, kMaxOpset, types, FactoryOf<LpPoolKernel>()),
      CpuDef(engine::kOnnxDomain, "GlobalLpPool", 1, kMaxOpset, types, FactoryOf<LpPoolKernel>())};
}

}  // namespace inferd::kernels::cpu

// DeformConv (opset 19), 2-D, float32 and float64: a convolution whose taps are moved by learned
// offsets. For output position (i, j) and kernel tap (kh, kw), input channel c is sampled at
//   (i * stride_h - pad_top + kh * dilation_h + offset_h, j * stride_w - pad_left + kw * dilation_w
//    + offset_w)
// bilinearly (positions outside the input read zero), scaled by the optional mask, and the
// samples are convolved with W as usual. offset [N, offset_group * kH * kW * 2, oH, oW] holds
// (dh, dw) per tap; channels share the offsets of their offset group; mask [N, offset_group * kH
// * kW, oH, oW] is optional (all ones). group splits input and output channels as in Conv.
// The output size is the convolution's, and must equal offset's spatial dims.
//
// How: per (n, group) the sampled columns [C/group * kH * kW, oH * oW] are written into a declared
// workspace (parallel over columns' rows), then one GEMM with W's group rows (float32: oneDNN's
// dnnl_sgemm; float64: plain loops), then the bias.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "dnnl.h"
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

using DeformTypes = TypeList<float, double>;
constexpr int kColumns = 0;  // workspace slot

struct Geometry {
  int64_t n = 0, c = 0, h = 0, w = 0, m = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  int64_t group = 1, offset_group = 1;
  int64_t ColumnRows() const { return c / group * kh * kw; }
  int64_t Positions() const { return oh * ow; }
};

class DeformConvKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DeformConvKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<DeformConvKernel>(new DeformConvKernel(info));
    if (k->group_ < 1 || k->offset_group_ < 1) {
      return info.Error("group and offset_group must be >= 1");
    }
    return k;
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    Geometry g;
    if (shapes.size() < 3 || !Plan(shapes[0], shapes[1], shapes[2], &g).ok()) return {};
    const size_t elem = 8;  // enough for float64; the static plan does not know the type here
    return {{kColumns, static_cast<size_t>(g.ColumnRows() * g.Positions()) * elem}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* offset, RequiredInput(ctx, 2, node_));
    const Tensor* bias = ctx.input(3);
    const Tensor* mask = ctx.num_inputs() > 4 ? ctx.input(4) : nullptr;
    Geometry g;
    INFERD_RETURN_IF_ERROR(Plan(x->shape(), w->shape(), offset->shape(), &g));
    const Tensor* others[] = {w, offset, bias, mask};
    for (int i = 0; i < 4; ++i) {
      if (others[i] != nullptr)
        INFERD_RETURN_IF_ERROR(CheckType(*others[i], x->dtype(), i + 1, node_));
    }
    if (bias != nullptr && bias->NumElements() != g.m) {
      return node_.InvalidArgument(absl::StrCat("B must have ", g.m, " values"));
    }
    if (mask != nullptr && mask->shape() != Shape{g.n, g.offset_group * g.kh * g.kw, g.oh, g.ow}) {
      return node_.InvalidArgument(absl::StrCat("mask ", mask->shape().ToString(), " must be [",
                                                g.n, ", ", g.offset_group * g.kh * g.kw, ", ", g.oh,
                                                ", ", g.ow, "]"));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, x->dtype(), Shape{g.n, g.m, g.oh, g.ow}));
    if (y->NumElements() == 0) return absl::OkStatus();
    INFERD_ASSIGN_OR_RETURN(void* columns, ctx.GetWorkspace(kColumns));
    return Dispatch(DeformTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return Run<T>(g, *x, *w, *offset, bias, mask, static_cast<T*>(columns), *y, ctx);
    });
  }

 private:
  explicit DeformConvKernel(const KernelInfo& info)
      : node_(info),
        kernel_shape_(info.GetInts("kernel_shape")),
        strides_(info.GetInts("strides")),
        dilations_(info.GetInts("dilations")),
        pads_(info.GetInts("pads")),
        group_(info.GetInt("group", 1)),
        offset_group_(info.GetInt("offset_group", 1)) {}

  absl::Status Plan(const Shape& x, const Shape& w, const Shape& offset, Geometry* g) const {
    if (x.rank() != 4 || w.rank() != 4 || offset.rank() != 4) {
      return node_.Unimplemented(absl::StrCat("only 2-D deformable convolution is supported: X ",
                                              x.ToString(), ", W ", w.ToString(), " and offset ",
                                              offset.ToString(), " must be 4-D"));
    }
    auto two = [](const std::vector<int64_t>& v, int64_t fallback, size_t i) {
      return v.size() > i ? v[i] : fallback;
    };
    g->n = x[0], g->c = x[1], g->h = x[2], g->w = x[3], g->m = w[0];
    g->kh = two(kernel_shape_, w[2], 0), g->kw = two(kernel_shape_, w[3], 1);
    g->sh = two(strides_, 1, 0), g->sw = two(strides_, 1, 1);
    g->dh = two(dilations_, 1, 0), g->dw = two(dilations_, 1, 1);
    g->ph = two(pads_, 0, 0), g->pw = two(pads_, 0, 1);
    const int64_t ph_end = two(pads_, 0, 2), pw_end = two(pads_, 0, 3);
    g->group = group_, g->offset_group = offset_group_;
    if (g->kh != w[2] || g->kw != w[3] || g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1) {
      return node_.InvalidArgument("kernel_shape must match W, strides and dilations be >= 1");
    }
    if (g->c != w[1] * g->group || g->m % g->group != 0 || g->c % g->offset_group != 0) {
      return node_.InvalidArgument(absl::StrCat("X ", x.ToString(), " and W ", w.ToString(),
                                                " do not fit group ", g->group,
                                                " and offset_group ", g->offset_group));
    }
    g->oh = (g->h + g->ph + ph_end - ((g->kh - 1) * g->dh + 1)) / g->sh + 1;
    g->ow = (g->w + g->pw + pw_end - ((g->kw - 1) * g->dw + 1)) / g->sw + 1;
    const Shape want{g->n, g->offset_group * g->kh * g->kw * 2, g->oh, g->ow};
    if (g->oh < 1 || g->ow < 1 || offset != want) {
      return node_.InvalidArgument(absl::StrCat("offset ", offset.ToString(), " must be ",
                                                want.ToString(), " for this input and window"));
    }
    return absl::OkStatus();
  }

  // Samples X[n, c] at (y, x), zero outside.
  template <typename T>
  static T Sample(const T* plane, int64_t h, int64_t w, double y, double x) {
    if (!(y > -1 && y < h && x > -1 && x < w)) return T(0);
    const int64_t y0 = static_cast<int64_t>(std::floor(y)),
                  x0 = static_cast<int64_t>(std::floor(x));
    const double fy = y - y0, fx = x - x0;
    auto at = [&](int64_t r, int64_t c) -> double {
      return r >= 0 && r < h && c >= 0 && c < w ? static_cast<double>(plane[r * w + c]) : 0.0;
    };
    return static_cast<T>((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
                          fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1)));
  }

  // columns[(c, kh, kw), (i, j)] for the channels of `group` of image n.
  template <typename T>
  void Gather(const Geometry& g, int64_t n, int64_t group, const T* x, const T* offset,
              const T* mask, T* columns, engine::ThreadPool& pool) const {
    const int64_t cg = g.c / g.group, taps = g.kh * g.kw, positions = g.Positions();
    const int64_t per_offset_group = g.c / g.offset_group;
    pool.ParallelFor(cg * taps, std::max<int64_t>(1, 4096 / positions), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const int64_t c = group * cg + row / taps, tap = row % taps;
        const int64_t ki = tap / g.kw, kj = tap % g.kw, og = c / per_offset_group;
        const T* plane = x + (n * g.c + c) * g.h * g.w;
        const T* off = offset + ((n * g.offset_group + og) * taps + tap) * 2 * positions;
        const T* msk =
            mask == nullptr ? nullptr : mask + ((n * g.offset_group + og) * taps + tap) * positions;
        T* out = columns + row * positions;
        for (int64_t i = 0; i < g.oh; ++i) {
          for (int64_t j = 0; j < g.ow; ++j) {
            const int64_t p = i * g.ow + j;
            const double y = i * g.sh - g.ph + ki * g.dh + static_cast<double>(off[p]);
            const double xx = j * g.sw - g.pw + kj * g.dw + static_cast<double>(off[positions + p]);
            T v = Sample(plane, g.h, g.w, y, xx);
            out[p] = msk == nullptr ? v : v * msk[p];
          }
        }
      }
    });
  }

  template <typename T>
  absl::Status Run(const Geometry& g, const Tensor& x, const Tensor& w, const Tensor& offset,
                   const Tensor* bias, const Tensor* mask, T* columns, Tensor& y,
                   KernelContext& ctx) const {
    const int64_t mg = g.m / g.group, k = g.ColumnRows(), p = g.Positions();
    T* out = y.mutable_data<T>();
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t group = 0; group < g.group; ++group) {
        Gather<T>(g, n, group, x.data<T>(), offset.data<T>(),
                  mask == nullptr ? nullptr : mask->data<T>(), columns, ctx.threads());
        const T* wg = w.data<T>() + group * mg * k;
        T* yg = out + (n * g.m + group * mg) * p;
        INFERD_RETURN_IF_ERROR(Multiply(mg, p, k, wg, columns, yg, ctx));
      }
    }
    if (bias != nullptr) {
      const T* b = bias->data<T>();
      ctx.threads().ParallelFor(g.n * g.m, 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          T* row = out + r * p;
          const T v = b[r % g.m];
          for (int64_t i = 0; i < p; ++i) row[i] += v;
        }
      });
    }
    return absl::OkStatus();
  }

  // c[m, n] = a[m, k] * b[k, n], row-major.
  absl::Status Multiply(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                        KernelContext& ctx) const {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(ctx.threads().num_threads());
    const dnnl_status_t s = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    omp_set_num_threads(saved);
    if (s != dnnl_success) {
      return node_.Internal(absl::StrCat("dnnl_sgemm failed with status ", static_cast<int>(s)));
    }
    return absl::OkStatus();
  }
  absl::Status Multiply(int64_t m, int64_t n, int64_t k, const double* a, const double* b,
                        double* c, KernelContext& ctx) const {
    ctx.threads().ParallelFor(m, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        double* row = c + i * n;
        std::fill(row, row + n, 0.0);
        for (int64_t l = 0; l < k; ++l) {
          const double v = a[i * k + l];
          const double* br = b + l * n;
          for (int64_t j = 0; j < n; ++j) row[j] += v * br[j];
        }
      }
    });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const std::vector<int64_t> kernel_shape_, strides_, dilations_, pads_;
  const int64_t group_, offset_group_;
};

}  // namespace

std::vector<engine::KernelDef> DeformConvKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "DeformConv", 19, kMaxOpset, TypesOf(DeformTypes{}),
                 FactoryOf<DeformConvKernel>())};
}

}  // namespace inferd::kernels::cpu

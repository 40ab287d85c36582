// Two normalizations across elements, own code, float32 and float64, computed in double:
//   LRN (opset 1 / 13): each element divided by (bias + alpha / size * S)^beta, where S sums the
//     squares of the same position in channels c - floor((size - 1) / 2) .. c + ceil((size - 1) /
//     2) (clipped to the tensor). X is [N, C, spatial...] with at least one spatial dim.
//   MeanVarianceNormalization (opset 9 / 13): (X - mean) / (sqrt(variance) + 1e-9), mean and
//     (population) variance over `axes` (default [0, 2, 3]). The variance is taken in two passes
//     (sum of squared deviations), which equals the definition's E[X^2] - E[X]^2 without its
//     cancellation. Per-group sums live in a declared workspace.
// Immutable after creation: thread-safe.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
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

class LrnKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LrnKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(const int64_t size, info.RequireInt("size"));
    if (size <= 0) return info.Error(absl::StrCat("size must be > 0, got ", size));
    return std::unique_ptr<LrnKernel>(new LrnKernel(info, size));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& s = x->shape();
    if (s.rank() < 3) {
      return node_.InvalidArgument(
          absl::StrCat("X must be [N, C, D1, ...] (rank >= 3), got ", s.ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), s));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t channels = s[1], inner = s.SizeFrom(2);
      const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
      const T* xd = x->data<T>();
      T* yd = y->mutable_data<T>();
      const double scale = alpha_ / static_cast<double>(size_);
      ctx.threads().ParallelFor(
          s[0] * channels, std::max<int64_t>(1, 4096 / inner), [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
              const int64_t n = nc / channels, c = nc % channels;
              const int64_t lo = std::max<int64_t>(0, c - before);
              const int64_t hi = std::min<int64_t>(channels - 1, c + after);
              const T* base = xd + n * channels * inner;
              for (int64_t i = 0; i < inner; ++i) {
                double sum = 0;
                for (int64_t k = lo; k <= hi; ++k) {
                  const double v = static_cast<double>(base[k * inner + i]);
                  sum += v * v;
                }
                const double v = static_cast<double>(base[c * inner + i]);
                yd[nc * inner + i] = static_cast<T>(v / std::pow(bias_ + scale * sum, beta_));
              }
            }
          });
      return absl::OkStatus();
    });
  }

 private:
  LrnKernel(const KernelInfo& info, int64_t size)
      : node_(info),
        size_(size),
        alpha_(info.GetFloat("alpha", 1e-4f)),
        beta_(info.GetFloat("beta", 0.75f)),
        bias_(info.GetFloat("bias", 1.0f)) {}

  const NodeLabel node_;
  const int64_t size_;
  const double alpha_, beta_, bias_;
};

class MvnKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MvnKernel>> Create(const KernelInfo& info) {
    std::vector<int64_t> axes =
        info.HasAttribute("axes") ? info.GetInts("axes") : std::vector<int64_t>{0, 2, 3};
    return std::unique_ptr<MvnKernel>(new MvnKernel(info, std::move(axes)));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty()) return {};
    const absl::StatusOr<std::vector<bool>> reduced = Reduced(shapes[0]);
    if (!reduced.ok()) return {};
    const std::optional<int64_t> bytes = GroupBytes(shapes[0], *reduced);
    if (!bytes) return {};
    return {{0, static_cast<size_t>(std::max<int64_t>(*bytes, 8))}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& s = x->shape();
    INFERD_ASSIGN_OR_RETURN(const std::vector<bool> reduced, Reduced(s));
    if (!GroupBytes(s, reduced)) return node_.InvalidArgument("the group count overflows");
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), s));
    if (y->NumElements() == 0) return absl::OkStatus();
    INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(0));
    return Dispatch(FloatTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Run<T>(*x, reduced, static_cast<double*>(ws), *y);
      return absl::OkStatus();
    });
  }

 private:
  MvnKernel(const KernelInfo& info, std::vector<int64_t> axes)
      : node_(info), axes_(std::move(axes)) {}

  // Which dims of `s` the statistics run over.
  absl::StatusOr<std::vector<bool>> Reduced(const Shape& s) const {
    std::vector<bool> reduced(s.rank(), false);
    for (int64_t a : axes_) {
      INFERD_ASSIGN_OR_RETURN(const int axis,
                              NormalizeAxis(a, static_cast<int64_t>(s.rank()), node_, "axes"));
      if (reduced[axis]) return node_.InvalidArgument(absl::StrCat("axes repeats axis ", a));
      reduced[axis] = true;
    }
    return reduced;
  }

  // Bytes of the per-group (sum, sum of squared deviations) pairs.
  static std::optional<int64_t> GroupBytes(const Shape& s, const std::vector<bool>& reduced) {
    int64_t groups = 1;
    for (size_t i = 0; i < s.rank(); ++i) {
      if (reduced[i]) continue;
      const std::optional<int64_t> g = inferd::CheckedMul<int64_t>(groups, s[i]);
      if (!g) return std::nullopt;
      groups = *g;
    }
    return inferd::CheckedMul<int64_t>(groups, 2 * sizeof(double));
  }

  // Calls fn(element, group) for every element in order, the group being the element's index
  // over the kept dims.
  template <typename Fn>
  static void Walk(const Shape& s, const std::vector<bool>& reduced, Fn&& fn) {
    const size_t rank = s.rank();
    std::vector<int64_t> gstride(rank, 0), coord(rank, 0);
    for (int64_t i = static_cast<int64_t>(rank) - 1, g = 1; i >= 0; --i) {
      if (!reduced[i]) {
        gstride[i] = g;
        g *= s[i];
      }
    }
    const int64_t n = s.NumElements();
    int64_t group = 0;
    for (int64_t e = 0; e < n; ++e) {
      fn(e, group);
      for (int64_t i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
        group += gstride[i];
        if (++coord[i] < s[i]) break;
        group -= gstride[i] * coord[i];
        coord[i] = 0;
      }
    }
  }

  template <typename T>
  void Run(const Tensor& x, const std::vector<bool>& reduced, double* ws, Tensor& y) const {
    const Shape& s = x.shape();
    int64_t groups = 1, per_group = 1;
    for (size_t i = 0; i < s.rank(); ++i) (reduced[i] ? per_group : groups) *= s[i];
    double* mean = ws;
    double* dev = ws + groups;
    std::fill(ws, ws + 2 * groups, 0.0);
    const T* xd = x.data<T>();
    T* yd = y.mutable_data<T>();
    // pass 1: means.
    Walk(s, reduced, [&](int64_t e, int64_t g) { mean[g] += static_cast<double>(xd[e]); });
    for (int64_t g = 0; g < groups; ++g) mean[g] /= static_cast<double>(per_group);
    // pass 2: squared deviations.
    Walk(s, reduced, [&](int64_t e, int64_t g) {
      const double d = static_cast<double>(xd[e]) - mean[g];
      dev[g] += d * d;
    });
    for (int64_t g = 0; g < groups; ++g) {
      dev[g] = std::sqrt(dev[g] / static_cast<double>(per_group)) + 1e-9;
    }
    // pass 3: normalize.
    Walk(s, reduced, [&](int64_t e, int64_t g) {
      yd[e] = static_cast<T>((static_cast<double>(xd[e]) - mean[g]) / dev[g]);
    });
  }

  const NodeLabel node_;
  const std::vector<int64_t> axes_;
};

}  // namespace

std::vector<engine::KernelDef> LrnMvnKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "LRN", 1, kMaxOpset, TypesOf(FloatTypes{}),
                 FactoryOf<LrnKernel>()),
          CpuDef(engine::kOnnxDomain, "MeanVarianceNormalization", 9, kMaxOpset,
                 TypesOf(FloatTypes{}), FactoryOf<MvnKernel>())};
}

}  // namespace inferd::kernels::cpu

// Slice, any fixed-size element type. Opsets 1-9: starts / ends / optional axes attributes;
// opset 10+: int32 or int64 inputs starts, ends, optional axes and steps (negative steps walk
// backwards). Negative starts/ends count from the end; out-of-range values are clamped as the
// spec says ([0, dim] for positive steps, [-1, dim-1] for negative ones), so INT64_MAX means "to
// the end". The copy goes through StridedCopy: contiguous runs are one memcpy each, parallel over
// rows.
#include <algorithm>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class SliceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SliceKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<SliceKernel>(new SliceKernel(info));
    if (!k->inputs_ && (!info.HasAttribute("starts") || !info.HasAttribute("ends"))) {
      return info.Error("attributes 'starts' and 'ends' are required");
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    Dims starts, ends, axes, steps;
    if (inputs_) {
      INFERD_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 1, node_));
      INFERD_ASSIGN_OR_RETURN(const Tensor* e, RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(ReadIndexVector(*s, "starts", node_, &starts));
      INFERD_RETURN_IF_ERROR(ReadIndexVector(*e, "ends", node_, &ends));
      if (const Tensor* a = ctx.input(3)) {
        INFERD_RETURN_IF_ERROR(ReadIndexVector(*a, "axes", node_, &axes));
      }
      if (const Tensor* st = ctx.input(4)) {
        INFERD_RETURN_IF_ERROR(ReadIndexVector(*st, "steps", node_, &steps));
      }
    } else {
      starts.assign(starts_.begin(), starts_.end());
      ends.assign(ends_.begin(), ends_.end());
      axes.assign(axes_.begin(), axes_.end());
    }
    const Shape& in = x->shape();
    Dims start(in.rank(), 0), step(in.rank(), 1), len(in.dims().begin(), in.dims().end());
    INFERD_RETURN_IF_ERROR(Resolve(in, starts, ends, axes, steps, &start, &step, &len));

    Shape out_shape(absl::MakeConstSpan(len));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const Dims in_strides = StridesOf(in);
    Dims strides(in.rank());
    int64_t offset = 0;
    for (size_t d = 0; d < in.rank(); ++d) {
      strides[d] = in_strides[d] * step[d];
      offset += start[d] * in_strides[d];
    }
    StridedCopy(x->raw_data(), y->raw_mutable_data(), elem, len, strides, offset, ctx.threads());
    return absl::OkStatus();
  }

 private:
  explicit SliceKernel(const KernelInfo& info)
      : node_(info),
        inputs_(info.opset() >= 10),
        starts_(info.GetInts("starts")),
        ends_(info.GetInts("ends")),
        axes_(info.GetInts("axes")) {}

  // Per-dimension first index, step and output length.
  absl::Status Resolve(const Shape& in, const Dims& starts, const Dims& ends, const Dims& axes,
                       const Dims& steps, Dims* start, Dims* step, Dims* len) const {
    const int64_t rank = static_cast<int64_t>(in.rank());
    const size_t n = starts.size();
    if (ends.size() != n || (!axes.empty() && axes.size() != n) ||
        (!steps.empty() && steps.size() != n)) {
      return node_.InvalidArgument(absl::StrCat("starts (", n, "), ends (", ends.size(),
                                                "), axes (", axes.size(), ") and steps (",
                                                steps.size(), ") must have the same length"));
    }
    absl::InlinedVector<bool, 8> seen(rank, false);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = axes.empty() ? static_cast<int64_t>(i) : axes[i];
      INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank, node_, "axes entry"));
      if (seen[axis]) return node_.InvalidArgument(absl::StrCat("axis ", axis, " is repeated"));
      seen[axis] = true;
      const int64_t dim = in[axis];
      const int64_t st = steps.empty() ? 1 : steps[i];
      if (st == 0) return node_.InvalidArgument(absl::StrCat("step for axis ", axis, " is 0"));
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      int64_t count = 0;
      if (st > 0) {
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        if (e > s) count = (e - s - 1) / st + 1;
      } else if (dim > 0) {
        s = std::clamp<int64_t>(s, 0, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        const int64_t back =
            st == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -st;
        if (s > e) count = (s - e - 1) / back + 1;
      }
      (*start)[axis] = count > 0 ? s : 0;
      (*step)[axis] = count > 1 ? st : 1;  // a single index needs no stride
      (*len)[axis] = count;
    }
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const bool inputs_;
  const std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

std::vector<engine::KernelDef> SliceKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "Slice", 1, 9, types, FactoryOf<SliceKernel>()),
          CpuDef(engine::kOnnxDomain, "Slice", 10, kMaxOpset, types, FactoryOf<SliceKernel>())};
}

}  // namespace inferd::kernels::cpu

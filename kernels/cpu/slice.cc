// Slice, any fixed-size element type. Opsets 1-9: starts / ends / optional axes attributes;
// opset 10+: int32 or int64 inputs starts, ends, optional axes and steps (negative steps walk
// backwards). Negative starts/ends count from the end; out-of-range values are clamped as the
// spec says ([0, dim] for positive steps, [-1, dim-1] for negative ones), so INT64_MAX means "to
// the end". The copy goes through StridedCopy: contiguous runs are one memcpy each, parallel over
// rows.
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
    INFERD_RETURN_IF_ERROR(ResolveSlice(in, starts, ends, axes, steps, node_, &start, &step, &len));

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

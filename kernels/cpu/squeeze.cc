// View kernels: Flatten, Squeeze and Unsqueeze only change the shape, so the output is always an
// alias of the input (no copy when the plan allows it), for any fixed-size element type.
// Flatten: [prod(d[:axis]), prod(d[axis:])], axis in [-rank, rank] (negative from opset 11).
// Squeeze / Unsqueeze: axes as an attribute up to opset 12, as an int64 input from opset 13;
// Squeeze without axes drops every dimension of size 1; Unsqueeze's axes index the output.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_types.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class FlattenKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<FlattenKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<FlattenKernel>(new FlattenKernel(info));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& in = x->shape();
    const int64_t rank = static_cast<int64_t>(in.rank());
    if (axis_ < -rank || axis_ > rank) {
      return node_.InvalidArgument(absl::StrCat("axis ", axis_, " is out of range for rank ", rank,
                                                " (expected ", -rank, "..", rank, ")"));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    return ctx.MakeOutputAlias(0, 0, Shape{in.SizeBetween(0, axis), in.SizeFrom(axis)}).status();
  }

 private:
  explicit FlattenKernel(const KernelInfo& info) : node_(info), axis_(info.GetInt("axis", 1)) {}

  const NodeLabel node_;
  const int64_t axis_;
};

// Squeeze and Unsqueeze: axes from the attribute (opset < 13) or input 1.
class SqueezeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SqueezeKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<SqueezeKernel>(new SqueezeKernel(info));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& in = x->shape();
    Dims axes;
    bool has_axes = !axes_input_ && has_attr_;
    if (axes_input_) {
      if (const Tensor* a = ctx.input(1)) {
        INFERD_RETURN_IF_ERROR(ReadIndexVector(*a, "axes", node_, &axes));
        has_axes = true;
      }
    } else {
      axes.assign(attr_axes_.begin(), attr_axes_.end());
    }
    Shape out;
    if (unsqueeze_) {
      if (!has_axes) return node_.InvalidArgument("axes are required");
      INFERD_RETURN_IF_ERROR(UnsqueezedShape(in, axes, &out));
    } else {
      INFERD_RETURN_IF_ERROR(SqueezedShape(in, axes, has_axes, &out));
    }
    return ctx.MakeOutputAlias(0, 0, out).status();
  }

 private:
  explicit SqueezeKernel(const KernelInfo& info)
      : node_(info),
        unsqueeze_(info.op_type() == "Unsqueeze"),
        axes_input_(info.opset() >= 13),
        has_attr_(info.HasAttribute("axes")),
        attr_axes_(info.GetInts("axes")) {}

  absl::Status SqueezedShape(const Shape& in, const Dims& axes, bool has_axes, Shape* out) const {
    const int64_t rank = static_cast<int64_t>(in.rank());
    absl::InlinedVector<bool, 8> drop(rank, false);
    if (!has_axes) {
      for (int64_t d = 0; d < rank; ++d) drop[d] = in[d] == 1;
    }
    for (int64_t a : axes) {
      INFERD_ASSIGN_OR_RETURN(int d, NormalizeAxis(a, rank, node_, "axes entry"));
      if (in[d] != 1) {
        return node_.InvalidArgument(absl::StrCat("cannot squeeze dimension ", d, " of size ",
                                                  in[d], " (input shape ", in.ToString(), ")"));
      }
      drop[d] = true;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (!drop[d]) out->push_back(in[d]);
    }
    return absl::OkStatus();
  }

  absl::Status UnsqueezedShape(const Shape& in, const Dims& axes, Shape* out) const {
    const int64_t out_rank = static_cast<int64_t>(in.rank() + axes.size());
    absl::InlinedVector<bool, 8> inserted(out_rank, false);
    for (int64_t a : axes) {
      INFERD_ASSIGN_OR_RETURN(int d, NormalizeAxis(a, out_rank, node_, "axes entry"));
      if (inserted[d]) {
        return node_.InvalidArgument(
            absl::StrCat("axes [", absl::StrJoin(axes, ","), "] repeat dimension ", d));
      }
      inserted[d] = true;
    }
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) out->push_back(inserted[d] ? 1 : in[next++]);
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const bool unsqueeze_, axes_input_, has_attr_;
  const std::vector<int64_t> attr_axes_;
};

}  // namespace

std::vector<engine::KernelDef> ViewKernelDefs() {
  const std::vector<engine::DataType> types = MovementTypes();
  // Flatten: negative axes from 11 (accepted throughout); Squeeze/Unsqueeze: axes attribute up to
  // 12 (negative from 11), input from 13.
  return {
      CpuDef(engine::kOnnxDomain, "Flatten", 1, kMaxOpset, types, FactoryOf<FlattenKernel>()),
      CpuDef(engine::kOnnxDomain, "Squeeze", 1, 12, types, FactoryOf<SqueezeKernel>()),
      CpuDef(engine::kOnnxDomain, "Squeeze", 13, kMaxOpset, types, FactoryOf<SqueezeKernel>()),
      CpuDef(engine::kOnnxDomain, "Unsqueeze", 1, 12, types, FactoryOf<SqueezeKernel>()),
      CpuDef(engine::kOnnxDomain, "Unsqueeze", 13, kMaxOpset, types, FactoryOf<SqueezeKernel>())};
}

}  // namespace inferd::kernels::cpu

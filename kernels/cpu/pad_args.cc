#include "kernels/cpu/pad_args.h"

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

absl::StatusOr<PadArgs> PadArgs::FromInfo(const engine::KernelInfo& info) {
  const std::string mode = info.GetString("mode", "constant");
  PadMode m;
  if (mode == "constant") {
    m = PadMode::kConstant;
  } else if (mode == "edge") {
    m = PadMode::kEdge;
  } else if (mode == "reflect") {
    m = PadMode::kReflect;
  } else if (mode == "wrap" && info.opset() >= 19) {
    m = PadMode::kWrap;
  } else {
    return info.Error(absl::StrCat("unknown mode '", mode, "'"));
  }
  if (info.opset() < 11 && !info.HasAttribute("pads")) {
    return info.Error("attribute 'pads' is required");
  }
  return PadArgs(info, m);
}

PadArgs::PadArgs(const engine::KernelInfo& info, PadMode mode)
    : node_(info),
      mode_(mode),
      inputs_(info.opset() >= 11),
      pads_attr_(info.GetInts("pads")),
      value_attr_(info.GetFloat("value", 0.0f)) {}

absl::StatusOr<PadPlan> PadArgs::Resolve(const engine::KernelContext& ctx, const Tensor& x) const {
  PadPlan plan;
  Dims& pads = plan.pads;
  const size_t elem = engine::ElementSize(x.dtype());
  if (inputs_) {
    INFERD_ASSIGN_OR_RETURN(const Tensor* p, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*p, DataType::kInt64, 1, node_));
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*p, "pads", node_, &pads));
    if (const Tensor* v = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr;
        v != nullptr && mode_ == PadMode::kConstant) {
      INFERD_RETURN_IF_ERROR(CheckType(*v, x.dtype(), 2, node_));
      if (v->NumElements() != 1) {
        return node_.InvalidArgument(
            absl::StrCat("constant_value must hold one value, got ", v->shape().ToString()));
      }
      std::memcpy(plan.value, v->raw_data(), elem);
    }
    if (const Tensor* a = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr; a != nullptr) {
      INFERD_RETURN_IF_ERROR(ExpandAxesPads(*a, x.shape().rank(), &pads));
    }
  } else {
    pads.assign(pads_attr_.begin(), pads_attr_.end());
    INFERD_RETURN_IF_ERROR(AttributeValue(x.dtype(), plan.value));
  }
  const Shape& in = x.shape();
  const size_t rank = in.rank();
  if (pads.size() != 2 * rank) {
    return node_.InvalidArgument(absl::StrCat("pads [", absl::StrJoin(pads, ","), "] must have ",
                                              2 * rank, " entries for input ", in.ToString()));
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t o = in[d] + pads[d] + pads[rank + d];
    if (o < 0) {
      return node_.InvalidArgument(absl::StrCat("pads [", absl::StrJoin(pads, ","),
                                                "] crop dimension ", d, " of input ", in.ToString(),
                                                " below 0"));
    }
    if (mode_ != PadMode::kConstant && in[d] == 0 && o > 0) {
      return node_.InvalidArgument(
          absl::StrCat("cannot pad the empty dimension ", d, " in edge or reflect mode"));
    }
    plan.out_shape.push_back(o);
  }
  return plan;
}

// Opset 18: `pads` holds begins and ends for the dims listed in `axes` only; the full pads of
// every dim (0 for dims not listed).
absl::Status PadArgs::ExpandAxesPads(const Tensor& axes_tensor, size_t rank, Dims* pads) const {
  Dims axes;
  INFERD_RETURN_IF_ERROR(ReadIndexVector(axes_tensor, "axes", node_, &axes));
  if (pads->size() != 2 * axes.size()) {
    return node_.InvalidArgument(absl::StrCat("pads [", absl::StrJoin(*pads, ","),
                                              "] must have 2 entries per axis of axes [",
                                              absl::StrJoin(axes, ","), "]"));
  }
  Dims full(2 * rank, 0);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    INFERD_ASSIGN_OR_RETURN(int a, NormalizeAxis(axes[i], rank, node_, "axes value"));
    full[a] = (*pads)[i];
    full[rank + a] = (*pads)[n + i];
  }
  *pads = std::move(full);
  return absl::OkStatus();
}

// The opset 2-10 `value` attribute (a float) in the element type.
absl::Status PadArgs::AttributeValue(DataType type, unsigned char* value) const {
  if (value_attr_ == 0.0f) return absl::OkStatus();  // zero bytes
  const bool ok = Visit(NumericTypes{}, type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = static_cast<T>(value_attr_);
    std::memcpy(value, &v, sizeof(T));
  });
  if (!ok) {
    return node_.Unimplemented(
        absl::StrCat("a non-zero value for element type ", engine::DataTypeName(type)));
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu

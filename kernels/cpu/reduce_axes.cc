#include "kernels/cpu/reduce_axes.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {

absl::StatusOr<ReducedAxes> ReduceAxes(const engine::Shape& shape, absl::Span<const int64_t> axes,
                                       bool keepdims, const NodeLabel& node) {
  const int64_t rank = shape.rank();
  ReducedAxes r;
  r.mask.assign(rank, axes.empty());
  for (int64_t a : axes) {
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank, node, "axes value"));
    r.mask[axis] = true;
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (!r.mask[i]) {
      r.out_shape.push_back(shape[i]);
    } else if (keepdims) {
      r.out_shape.push_back(1);
    }
  }
  return r;
}

ArgReduceAttributes ArgReduceAttributes::Read(const engine::KernelInfo& info) {
  ArgReduceAttributes a;
  a.max = info.op_type() == "ArgMax";
  a.axis = info.GetInt("axis", 0);
  a.keepdims = info.GetInt("keepdims", 1) != 0;
  a.last = info.opset() >= 12 && info.GetInt("select_last_index", 0) != 0;
  return a;
}

absl::StatusOr<ArgReduceGeometry> ArgReduceShape(const engine::Shape& shape,
                                                 const ArgReduceAttributes& attrs,
                                                 const NodeLabel& node) {
  if (shape.rank() == 0) return node.InvalidArgument("input must have rank >= 1, got a scalar");
  ArgReduceGeometry g;
  INFERD_ASSIGN_OR_RETURN(g.axis, NormalizeAxis(attrs.axis, shape.rank(), node));
  const int64_t axes[] = {g.axis};
  INFERD_ASSIGN_OR_RETURN(ReducedAxes reduced, ReduceAxes(shape, axes, attrs.keepdims, node));
  g.out_shape = std::move(reduced.out_shape);
  g.outer = shape.SizeBetween(0, g.axis);
  g.n = shape[g.axis];
  g.inner = shape.SizeFrom(g.axis + 1);
  if (g.n == 0 && g.out_shape.NumElements() != 0) {
    return node.InvalidArgument(absl::StrCat("cannot take the arg of an empty axis ", g.axis,
                                             " of shape ", shape.ToString()));
  }
  return g;
}

}  // namespace inferd::kernels::cpu

#include "kernels/cpu/reduce_axes.h"

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

}  // namespace inferd::kernels::cpu

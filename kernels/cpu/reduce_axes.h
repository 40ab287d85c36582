// Which axes a reduction folds and the shape it makes, shared by the CPU and CUDA reductions so
// that both read `axes` and `keepdims` alike; likewise ArgMax's and ArgMin's attributes and
// geometry.
#ifndef INFERD_KERNELS_CPU_REDUCE_AXES_H_
#define INFERD_KERNELS_CPU_REDUCE_AXES_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/kernel.h"
#include "engine/shape.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

struct ReducedAxes {
  absl::InlinedVector<bool, 8> mask;  // by input axis: folded
  engine::Shape out_shape;            // folded axes kept as 1 with keepdims, else dropped
};

// The reduction of an input of `shape` over `axes` (negative from the end; empty: every axis).
// INVALID_ARGUMENT naming `node` for an axis out of range.
absl::StatusOr<ReducedAxes> ReduceAxes(const engine::Shape& shape, absl::Span<const int64_t> axes,
                                       bool keepdims, const NodeLabel& node);

// ArgMax / ArgMin: the attributes, read at creation.
struct ArgReduceAttributes {
  bool max = true;  // ArgMax, else ArgMin
  int64_t axis = 0;
  bool keepdims = true;
  bool last = false;  // select_last_index (opset 12+)

  static ArgReduceAttributes Read(const engine::KernelInfo& info);
};

// An input of `shape` seen as [outer, n, inner] around the normalized `axis`, and the output
// shape (the axis kept as 1 with keepdims, else dropped). INVALID_ARGUMENT naming `node` for a
// scalar, an axis out of range, or an empty axis where the output is not empty.
struct ArgReduceGeometry {
  int axis = 0;
  int64_t outer = 1, n = 1, inner = 1;
  engine::Shape out_shape;
};
absl::StatusOr<ArgReduceGeometry> ArgReduceShape(const engine::Shape& shape,
                                                 const ArgReduceAttributes& attrs,
                                                 const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_REDUCE_AXES_H_

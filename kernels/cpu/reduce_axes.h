// Which axes a reduction folds and the shape it makes, shared by the CPU and CUDA reductions so
// that both read `axes` and `keepdims` alike.
#ifndef INFERD_KERNELS_CPU_REDUCE_AXES_H_
#define INFERD_KERNELS_CPU_REDUCE_AXES_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
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

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_REDUCE_AXES_H_

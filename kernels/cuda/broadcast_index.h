// MakeBroadcastIndex: the numpy broadcast of two shapes, as the BroadcastIndex the binary kernel
// walks (elementwise.h); MakeWhereIndex: the same for Where's three operands (movement.h): output
// dims and each operand's element strides, 0 along the dimensions it broadcasts, with dimensions of
// size 1 dropped and neighbours that both operands traverse contiguously (or both repeat) merged. A
// pure function of shapes; host code, no CUDA call.
//
// Example:
//   Shape out;
//   MakeBroadcastIndex({2, 3, 4}, {4}, out)  // out = [2,3,4]; index: rank 2, out_dims {6, 4},
//                                            // a_strides {4, 1}, b_strides {0, 1}
#ifndef INFERD_KERNELS_CUDA_BROADCAST_INDEX_H_
#define INFERD_KERNELS_CUDA_BROADCAST_INDEX_H_

#include "absl/status/statusor.h"
#include "engine/shape.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {

// INVALID_ARGUMENT when the shapes do not broadcast; UNIMPLEMENTED when more than
// kMaxBroadcastRank dimensions remain after merging.
absl::StatusOr<BroadcastIndex> MakeBroadcastIndex(const engine::Shape& a, const engine::Shape& b,
                                                  engine::Shape& out);

// The same for condition, x and y (at most kMaxWhereRank dimensions after merging).
absl::StatusOr<WhereIndex> MakeWhereIndex(const engine::Shape& condition, const engine::Shape& x,
                                          const engine::Shape& y, engine::Shape& out);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_BROADCAST_INDEX_H_

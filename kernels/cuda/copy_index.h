// MakeStridedCopy: the StridedCopyIndex (movement.h) of a copy given per dimension as
// (size, source stride, destination stride), with dims of size 1 dropped and neighbours that both
// sides walk contiguously merged, so that Slice, Expand, Concat, Split and Transpose all reach
// strided_copy.cu with few dims (and a contiguous copy becomes one memcpy). A pure function of
// its arguments; host code, no CUDA call. MakePadIndex does the same for Pad (pad.h).
//
// Example (the [:, 1:3] slice of a [4, 5] tensor into a dense [4, 2] one):
//   MakeStridedCopy({4, 2}, /*src=*/{5, 1}, /*dst=*/{2, 1}, /*src_offset=*/1, /*dst_offset=*/0)
#ifndef INFERD_KERNELS_CUDA_COPY_INDEX_H_
#define INFERD_KERNELS_CUDA_COPY_INDEX_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/shape.h"
#include "kernels/cuda/movement.h"
#include "kernels/cuda/pad.h"

namespace inferd::kernels::cuda {

// UNIMPLEMENTED when more than kMaxCopyRank dims remain after merging.
absl::StatusOr<StridedCopyIndex> MakeStridedCopy(absl::Span<const int64_t> dims,
                                                 absl::Span<const int64_t> src_strides,
                                                 absl::Span<const int64_t> dst_strides,
                                                 int64_t src_offset, int64_t dst_offset);

// The dense row-major destination of `shape`: MakeStridedCopy(shape, src_strides, dense strides).
absl::StatusOr<StridedCopyIndex> MakeDenseCopy(const engine::Shape& shape,
                                               absl::Span<const int64_t> src_strides,
                                               int64_t src_offset);

// Pad's index (pad.h) of `in` padded by `pads` (2 * rank: the begins, then the ends; negative
// ones crop) into `out`: neighbouring dims without padding merged into one (their sizes match on
// both sides). UNIMPLEMENTED when more than kMaxPadRank dims remain.
absl::StatusOr<PadIndex> MakePadIndex(const engine::Shape& in, absl::Span<const int64_t> pads,
                                      const engine::Shape& out, PadFill fill);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_COPY_INDEX_H_

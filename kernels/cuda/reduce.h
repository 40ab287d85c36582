// The launchers of the CUDA reductions (reduce.cu, arg_reduce.cu): plain C++ declarations that
// the .cu files define and reduce_kernel.cc calls. Each enqueues on `stream` and returns the
// launch's error; none synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_REDUCE_H_
#define INFERD_KERNELS_CUDA_REDUCE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {

enum class ReduceOp { kSum, kMean, kMax, kMin };

inline constexpr int kMaxReduceRank = 8;

// Which input elements each output folds, after the host dropped dims of size 1 and merged
// neighbouring dims of the same kind (kept or reduced):
//   kRows     [outer, n]: output o folds the n contiguous values of row o (one block per row);
//   kColumns  [outer, n, inner]: output (o, i) folds n values strided by inner (one thread each);
//   kStrided  anything else: output j's coordinates in kept_dims (row-major) dotted with
//             kept_strides give its first element; the reduced elements are the coordinates in
//             reduced_dims dotted with reduced_strides (strides in input elements).
// `reduced` is the number of values each output folds (0 gives the empty fold: 0 for sums, the
// lowest / highest value for Max / Min, NaN for a float Mean).
struct ReducePlan {
  enum Kind { kRows, kColumns, kStrided };
  Kind kind = kRows;
  int64_t outputs = 0;
  int64_t reduced = 0;
  int64_t outer = 1, inner = 1;         // kRows, kColumns
  int kept_rank = 0, reduced_rank = 0;  // kStrided
  int64_t kept_dims[kMaxReduceRank] = {};
  int64_t kept_strides[kMaxReduceRank] = {};
  int64_t reduced_dims[kMaxReduceRank] = {};
  int64_t reduced_strides[kMaxReduceRank] = {};
};

// y[j] = fold of x over output j's elements, accumulated in the element type (as on the CPU:
// integers wrap, an integer Mean truncates, and is 0 for an empty fold).
cudaError_t LaunchReduce(ReduceOp op, ElementType type, const void* x, void* y,
                         const ReducePlan& plan, cudaStream_t stream);

// ArgMax (max) / ArgMin of x seen as [outer, n, inner] along n >= 1: y[o, i] is the index of the
// first (or with `last`, the last) extreme value of x[o, :, i], as kernels/cpu/arg_reduce.cc
// gives it (where a line holds NaN the index is unspecified, as there). inner == 1 and n >= 32:
// one warp per row (lanes stride the row, then shuffle the best (value, index) down); else one
// thread per output, its loads coalesced across neighbouring outputs.
cudaError_t LaunchArgReduce(bool max, bool last, ElementType type, const void* x, int64_t* y,
                            int64_t outer, int64_t n, int64_t inner, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_REDUCE_H_

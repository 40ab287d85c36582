// The launchers of the CUDA data-movement kernels (strided_copy.cu, transpose.cu, gather.cu,
// cast.cu, where.cu): plain C++ declarations that the .cu files define and the OpKernels call.
// Each enqueues its work on `stream` and returns the launch's error; none synchronizes. Pointers
// are device memory. Kernels that only move elements take their size in bytes (1, 2, 4 or 8).
#ifndef INFERD_KERNELS_CUDA_MOVEMENT_H_
#define INFERD_KERNELS_CUDA_MOVEMENT_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {

// ---- strided_copy.cu: Slice, Expand, Concat, Split, Transpose (general) ----

inline constexpr int kMaxCopyRank = 8;

// Element i of the copy has coordinates c in `dims` (row-major); it moves
// src[src_offset + c . src_strides] to dst[dst_offset + c . dst_strides] (strides in elements;
// 0 repeats, negative walks backwards). Built by MakeStridedCopy (copy_index.h), which drops dims
// of size 1 and merges neighbours both sides walk contiguously.
struct StridedCopyIndex {
  int rank = 0;
  int64_t count = 0;  // elements
  int64_t dims[kMaxCopyRank] = {};
  int64_t src_strides[kMaxCopyRank] = {};
  int64_t dst_strides[kMaxCopyRank] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};

// One cudaMemcpyAsync when both sides are contiguous, else one thread per element.
cudaError_t LaunchStridedCopy(int elem_bytes, const void* src, void* dst,
                              const StridedCopyIndex& index, cudaStream_t stream);

// ---- transpose.cu: the swap of the last two dims, tiled ----

// out[b, c, r] = in[b, r, c] for in [batch, rows, cols]: 32x32 tiles through shared memory, so
// that both the reads and the writes coalesce.
cudaError_t LaunchTransposeTiled(int elem_bytes, const void* in, void* out, int64_t batch,
                                 int64_t rows, int64_t cols, cudaStream_t stream);

// ---- gather.cu: Gather ----

// out[o, j, k] = data[o, idx[j], k] for data [outer, dim, inner] and `count` indices (int32 or
// int64; negative ones count from the end). An index out of [-dim, dim) writes zeros: the kernel
// cannot report it without synchronizing.
cudaError_t LaunchGather(int elem_bytes, const void* data, const void* indices, bool indices_int64,
                         void* out, int64_t outer, int64_t dim, int64_t count, int64_t inner,
                         cudaStream_t stream);

// ---- cast.cu: Cast ----

enum class CastType { kFloat32, kFloat16, kInt32, kInt64, kUint8, kBool };

// y[i] = x[i] converted as C++ (and the CPU kernel) does: float -> integer truncates toward
// zero, anything -> bool is != 0 (NaN is true), float16 rounds to nearest even.
cudaError_t LaunchCast(CastType from, CastType to, const void* x, void* y, int64_t count,
                       cudaStream_t stream);

// ---- where.cu: Where ----

inline constexpr int kMaxWhereRank = 8;

// Output element i reads condition, x and y at its coordinates in `out_dims` dotted with each
// operand's strides (0 along the dims it broadcasts). Built by MakeWhereIndex (broadcast_index.h).
struct WhereIndex {
  int rank = 0;
  int64_t count = 0;
  int64_t out_dims[kMaxWhereRank] = {};
  int64_t c_strides[kMaxWhereRank] = {};
  int64_t x_strides[kMaxWhereRank] = {};
  int64_t y_strides[kMaxWhereRank] = {};
};

// out[i] = condition[.] ? x[.] : y[.]; condition is bool (one byte).
cudaError_t LaunchWhere(int elem_bytes, const bool* condition, const void* x, const void* y,
                        void* out, const WhereIndex& index, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_MOVEMENT_H_

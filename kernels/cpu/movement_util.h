// Helpers shared by the CPU data-movement kernels (Slice, Split, Expand, Tile, Pad, GatherND,
// Resize, ...): reading int32/int64 index vectors, dispatching on element size, and a strided
// copy engine that moves contiguous runs with memcpy. Internal to //kernels/cpu. Pure functions;
// thread-compatible (StridedCopy runs on the given pool).
//
// Example (Slice of x[:, 1:3] of a [4, 5] float tensor into `out`):
//   StridedCopy(x, out, sizeof(float), /*dims=*/{4, 2}, /*strides=*/{5, 1}, /*offset=*/1, pool);
#ifndef INFERD_KERNELS_CPU_MOVEMENT_UTIL_H_
#define INFERD_KERNELS_CPU_MOVEMENT_UTIL_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "engine/data_type.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

// Bytes a thread should move at least before ParallelFor splits work further.
inline constexpr int64_t kMoveGrainBytes = 64 * 1024;

using Dims = absl::InlinedVector<int64_t, 8>;

// The values of an int32 or int64 tensor of rank <= 1 as int64 (`what` names the input in
// errors, e.g. "axes").
absl::Status ReadIndexVector(const engine::Tensor& t, absl::string_view what, const NodeLabel& node,
                             Dims* out);

// One scalar of a numeric tensor (first element) as int64 or double; false for other types.
bool ReadScalarAsInt64(const engine::Tensor& t, int64_t* out);
bool ReadScalarAsDouble(const engine::Tensor& t, double* out);

// Unimplemented naming the node and the type, for element sizes the kernels cannot move.
absl::Status UnsupportedType(engine::DataType type, const NodeLabel& node);

// Calls f(T{}) with T the unsigned integer type of `elem` bytes (1, 2, 4 or 8): for kernels that
// only move elements. Returns false (and does not call f) for other sizes.
template <typename F>
bool WithElementSize(size_t elem, F&& f) {
  switch (elem) {
    case 1:
      f(uint8_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 4:
      f(uint32_t{});
      return true;
    case 8:
      f(uint64_t{});
      return true;
    default:
      return false;
  }
}

// Calls f(Index{}) with Index the C++ type of an int32 or int64 `indices` tensor and returns its
// status; INVALID_ARGUMENT naming the type for any other.
template <typename F>
absl::Status WithIndexType(const engine::Tensor& indices, const NodeLabel& node, F&& f) {
  absl::Status status;
  const bool found = Visit(IndexTypes{}, indices.dtype(),
                           [&](auto tag) { status = f(typename decltype(tag)::type{}); });
  if (found) return status;
  return node.InvalidArgument(absl::StrCat("indices have element type ",
                                           engine::DataTypeName(indices.dtype()),
                                           ", expected int32 or int64"));
}

// dst[0..n) = v. (std::fill_n is a scalar loop at -O2; `omp simd` vectorizes this one.)
template <typename T>
inline void FillN(T* dst, int64_t n, T v) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = v;
}

// memcpy split across the pool for large copies.
void ParallelMemcpy(void* dst, const void* src, size_t bytes, engine::ThreadPool& pool);

// dst (dense, row-major over `dims`) = src[offset + sum_d index_d * strides[d]], strides in
// elements (0 repeats: broadcasting; negative: reversed). Dimensions of size 1 are dropped and
// dimensions that stay contiguous are merged first; each output row then is one memcpy (stride
// 1), a fill (stride 0) or a strided gather. Parallel over rows for large copies.
void StridedCopy(const void* src, void* dst, size_t elem, absl::Span<const int64_t> dims,
                 absl::Span<const int64_t> strides, int64_t offset, engine::ThreadPool& pool);

// Row-major element strides of `shape`.
Dims StridesOf(const engine::Shape& shape);

// Slice (opset 10+ semantics, also the attribute form): per dimension of `in`, the first index,
// the step and the output length, from `starts`, `ends` and the optional (empty) `axes` and
// `steps`. Negative values count from the end; out-of-range ones are clamped as the spec says.
// `start`, `step` and `len` come in sized to in.rank() (0, 1 and in's dims: the dims not sliced).
// Shared by the CPU and CUDA Slice kernels.
absl::Status ResolveSlice(const engine::Shape& in, const Dims& starts, const Dims& ends,
                          const Dims& axes, const Dims& steps, const NodeLabel& node, Dims* start,
                          Dims* step, Dims* len);

// Split's part sizes along `axis` (of size `dim`) for `n` outputs: `split` as given (from the
// attribute or input), else equal parts, or with `num_outputs` (opset 18; 0 when absent)
// ceil(dim / n) each and the last one what remains. INVALID_ARGUMENT when they do not cut the
// dimension. Shared by the CPU and CUDA Split kernels.
absl::Status SplitSizes(int axis, int64_t dim, int n, int64_t num_outputs, const NodeLabel& node,
                        Dims* split);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_MOVEMENT_UTIL_H_

// ArgMax and ArgMin (float32, int32, int64 in; int64 out) along one axis of [outer, n, inner]:
// a warp per contiguous row, or a thread per output for strided columns and short rows.
#include <cstdint>

#include "kernels/cuda/reduce.h"

namespace inferd::kernels::cuda {
namespace {

// Whether (v, i) replaces the best (b, j) so far: a strictly more extreme value, or an equal one
// at an earlier index (a later one with `last`). An index < 0 is no candidate.
template <bool kMax, typename T>
__device__ __forceinline__ bool Beats(T v, int64_t i, T b, int64_t j, bool last) {
  if (i < 0) return false;
  if (j < 0) return true;
  if (v == b) return last ? i > j : i < j;
  return kMax ? v > b : v < b;
}

template <bool kMax, typename T>
__global__ void ArgColumns(const T* __restrict__ x, int64_t* __restrict__ y, int64_t outputs,
                           int64_t n, int64_t inner, bool last) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < outputs;
       j += stride) {
    const T* p = x + (j / inner) * n * inner + j % inner;
    T best = p[0];
    int64_t at = 0;
    for (int64_t k = 1; k < n; ++k) {
      const T v = p[k * inner];
      if (Beats<kMax>(v, k, best, at, last)) {
        best = v;
        at = k;
      }
    }
    y[j] = at;
  }
}

template <bool kMax, typename T>
__global__ void ArgRows(const T* __restrict__ x, int64_t* __restrict__ y, int64_t rows, int64_t n,
                        bool last) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  // The row loop is uniform across a warp (every lane has the same r), so the shuffles below
  // always run with all 32 lanes.
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       r < rows; r += warps) {
    const T* row = x + r * n;
    T best = T(0);
    int64_t at = -1;
    for (int64_t k = lane; k < n; k += 32) {
      const T v = row[k];
      if (Beats<kMax>(v, k, best, at, last)) {
        best = v;
        at = k;
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const T other = __shfl_down_sync(0xffffffffu, best, offset);
      const long long other_at = __shfl_down_sync(0xffffffffu, static_cast<long long>(at), offset);
      if (Beats<kMax>(other, static_cast<int64_t>(other_at), best, at, last)) {
        best = other;
        at = static_cast<int64_t>(other_at);
      }
    }
    if (lane == 0) y[r] = at;
  }
}

template <bool kMax, typename T>
void Launch(const void* xv, int64_t* y, int64_t outer, int64_t n, int64_t inner, bool last,
            cudaStream_t stream) {
  const T* x = static_cast<const T*>(xv);
  constexpr int kThreads = 256;
  if (inner == 1 && n >= 32) {
    constexpr int kWarps = kThreads / 32;
    const int64_t blocks = (outer + kWarps - 1) / kWarps;
    ArgRows<kMax, T>
        <<<static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8), kThreads, 0, stream>>>(
            x, y, outer, n, last);
    return;
  }
  const int64_t outputs = outer * inner;
  const int64_t blocks = (outputs + kThreads - 1) / kThreads;
  ArgColumns<kMax, T>
      <<<static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8), kThreads, 0, stream>>>(
          x, y, outputs, n, inner, last);
}

template <bool kMax>
void LaunchTyped(ElementType type, const void* x, int64_t* y, int64_t outer, int64_t n,
                 int64_t inner, bool last, cudaStream_t stream) {
  switch (type) {
    case ElementType::kFloat32:
      return Launch<kMax, float>(x, y, outer, n, inner, last, stream);
    case ElementType::kInt32:
      return Launch<kMax, int32_t>(x, y, outer, n, inner, last, stream);
    case ElementType::kInt64:
      return Launch<kMax, int64_t>(x, y, outer, n, inner, last, stream);
  }
}

}  // namespace

cudaError_t LaunchArgReduce(bool max, bool last, ElementType type, const void* x, int64_t* y,
                            int64_t outer, int64_t n, int64_t inner, cudaStream_t stream) {
  if (outer * inner == 0) return cudaSuccess;
  if (n < 1) return cudaErrorInvalidValue;
  if (max) {
    LaunchTyped<true>(type, x, y, outer, n, inner, last, stream);
  } else {
    LaunchTyped<false>(type, x, y, outer, n, inner, last, stream);
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

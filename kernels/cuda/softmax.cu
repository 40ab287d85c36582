// Softmax and LogSoftmax over float32, numerically stable (the maximum is subtracted first).
// Contiguous rows (inner == 1): one block per row, three passes (max, sum of exp, write) with
// CUB's BlockReduce between them. Strided vectors (a non-last axis, inner > 1): one thread per
// (outer, inner) column, walking its n values; neighbouring threads read neighbouring columns,
// so the loads coalesce.
#include <cub/block/block_reduce.cuh>
#include <cuda/functional>

#include <cstdint>

#include "kernels/cuda/normalize.h"

namespace inferd::kernels::cuda {
namespace {

template <int kThreads, bool kLog>
__global__ void SoftmaxRows(const float* __restrict__ x, float* __restrict__ y, int64_t rows,
                            int64_t n) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ float row_max, row_sum;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {  // uniform across the block
    const float* xr = x + r * n;
    float* yr = y + r * n;
    // pass 1: the maximum.
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
    m = Reduce(temp).Reduce(m, ::cuda::maximum<float>{});
    if (threadIdx.x == 0) row_max = m;
    __syncthreads();
    m = row_max;
    // pass 2: the sum of exp(x - max).
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(xr[i] - m);
    s = Reduce(temp).Sum(s);
    if (threadIdx.x == 0) row_sum = s;
    __syncthreads();
    s = row_sum;
    // pass 3: write.
    if constexpr (kLog) {
      const float shift = m + logf(s);
      for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = xr[i] - shift;
    } else {
      const float scale = 1.0f / s;
      for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - m) * scale;
    }
    __syncthreads();  // row_max, row_sum and temp are reused by the next row
  }
}

template <bool kLog>
__global__ void SoftmaxColumns(const float* __restrict__ x, float* __restrict__ y, int64_t outer,
                               int64_t n, int64_t inner) {
  const int64_t columns = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += stride) {
    const int64_t o = c / inner, i = c - o * inner;
    const float* xc = x + o * n * inner + i;
    float* yc = y + o * n * inner + i;
    float m = -INFINITY;
    for (int64_t k = 0; k < n; ++k) m = fmaxf(m, xc[k * inner]);
    float s = 0.0f;
    for (int64_t k = 0; k < n; ++k) s += expf(xc[k * inner] - m);
    if constexpr (kLog) {
      const float shift = m + logf(s);
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = xc[k * inner] - shift;
    } else {
      const float scale = 1.0f / s;
      for (int64_t k = 0; k < n; ++k) yc[k * inner] = expf(xc[k * inner] - m) * scale;
    }
  }
}

unsigned GridFor(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

template <bool kLog>
void Launch(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
            cudaStream_t stream) {
  if (inner > 1) {
    constexpr int kThreads = 256;
    SoftmaxColumns<kLog>
        <<<GridFor(outer * inner, kThreads), kThreads, 0, stream>>>(x, y, outer, n, inner);
    return;
  }
  const unsigned blocks = static_cast<unsigned>(outer < 65535 * 16 ? outer : 65535 * 16);
  if (n >= 4096) {
    SoftmaxRows<1024, kLog><<<blocks, 1024, 0, stream>>>(x, y, outer, n);
  } else {
    SoftmaxRows<128, kLog><<<blocks, 128, 0, stream>>>(x, y, outer, n);
  }
}

}  // namespace

cudaError_t LaunchSoftmax(bool log, const float* x, float* y, int64_t outer, int64_t n,
                          int64_t inner, cudaStream_t stream) {
  if (outer == 0 || n == 0 || inner == 0) return cudaSuccess;
  if (log) {
    Launch<true>(x, y, outer, n, inner, stream);
  } else {
    Launch<false>(x, y, outer, n, inner, stream);
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

// LayerNormalization, SkipLayerNormalization and their RMS (simplified) forms over float32: one
// block per row of d values, CUB's BlockReduce for the statistics. Each thread visits the same
// indices of its row in every pass, so the row of y serves as the scratch for s = x + skip +
// bias without a barrier. Two passes for LayerNorm's variance (mean first, then the squared
// deviations), exact for rows with a large mean, as the CPU kernels compute it.
#include <cub/block/block_reduce.cuh>

#include <cstdint>

#include "kernels/cuda/normalize.h"

namespace inferd::kernels::cuda {
namespace {

template <int kThreads>
__global__ void LayerNormRows(LayerNormArgs a) {
  using Reduce = cub::BlockReduce<float, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ float row_stat;
  const int64_t d = a.d;
  const float n = static_cast<float>(d);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {  // uniform across the block
    const float* xr = a.x + r * d;
    const float* sr = a.skip != nullptr ? a.skip + (r % a.skip_rows) * d : nullptr;
    float* yr = a.y + r * d;
    float* sum_r = a.sum != nullptr ? a.sum + r * d : nullptr;
    // pass 1: s into y (and the sum output); the sum of s (LayerNorm) or of s^2 (RMS).
    float acc = 0.0f;
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      float s = xr[i];
      if (sr != nullptr) s += sr[i];
      if (a.bias != nullptr) s += a.bias[i];
      if (sr != nullptr || a.bias != nullptr) {
        yr[i] = s;
        if (sum_r != nullptr) sum_r[i] = s;
      }
      acc += a.simplified ? s * s : s;
    }
    const float* s_row = (sr != nullptr || a.bias != nullptr) ? yr : xr;
    acc = Reduce(temp).Sum(acc);
    if (threadIdx.x == 0) row_stat = acc;
    __syncthreads();
    acc = row_stat;
    __syncthreads();  // temp and row_stat are reused below
    float mean = 0.0f, var;
    if (a.simplified) {
      var = acc / n;
    } else {
      // pass 2: the variance around the mean.
      mean = acc / n;
      float sq = 0.0f;
      for (int64_t i = threadIdx.x; i < d; i += kThreads) {
        const float c = s_row[i] - mean;
        sq += c * c;
      }
      sq = Reduce(temp).Sum(sq);
      if (threadIdx.x == 0) row_stat = sq;
      __syncthreads();
      var = row_stat / n;
    }
    const float inv = 1.0f / sqrtf(var + a.epsilon);
    // pass 3: normalize, scale, shift.
    for (int64_t i = threadIdx.x; i < d; i += kThreads) {
      float v = (s_row[i] - mean) * inv * a.gamma[i];
      if (a.beta != nullptr) v += a.beta[i];
      yr[i] = v;
    }
    if (threadIdx.x == 0) {
      if (a.mean != nullptr) a.mean[r] = mean;
      if (a.inv_std_dev != nullptr) a.inv_std_dev[r] = inv;
    }
    __syncthreads();  // row_stat and temp are reused by the next row
  }
}

}  // namespace

cudaError_t LaunchLayerNorm(const LayerNormArgs& args, cudaStream_t stream) {
  if (args.rows == 0 || args.d == 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(args.rows < 65535 * 16 ? args.rows : 65535 * 16);
  if (args.d >= 2048) {
    LayerNormRows<512><<<blocks, 512, 0, stream>>>(args);
  } else {
    LayerNormRows<128><<<blocks, 128, 0, stream>>>(args);
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

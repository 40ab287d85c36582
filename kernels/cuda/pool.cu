// MaxPool and AveragePool over up to three spatial dims, one thread per output element in a
// grid-stride loop (PoolOutput, pool.h), with ONNX's geometry (asymmetric pads, dilations,
// ceil_mode windows that reach past the padding, count_include_pad), which cuDNN's pooling
// descriptor cannot express (symmetric pads, no dilation). Global pools: one block per plane, a
// tree reduction in shared memory.
#include <cfloat>
#include <cstdint>

#include "kernels/cuda/pool.h"

namespace inferd::kernels::cuda {
namespace {

template <PoolMode kMode>
__global__ void PoolKernel(PoolWindow w, const float* __restrict__ x, float* __restrict__ y,
                           int64_t count) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    y[i] = PoolOutput<kMode>(w, x, i);
  }
}

constexpr int kGlobalThreads = 256;

template <bool kMax>
__global__ void GlobalPoolKernel(const float* __restrict__ x, float* __restrict__ y, int64_t planes,
                                 int64_t plane) {
  __shared__ float partial[kGlobalThreads];
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    const float* xp = x + p * plane;
    float acc = kMax ? -FLT_MAX : 0.0f;
    for (int64_t j = threadIdx.x; j < plane; j += blockDim.x) {
      const float v = xp[j];
      if constexpr (kMax) {
        acc = v > acc ? v : acc;
      } else {
        acc += v;
      }
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const float other = partial[threadIdx.x + half];
        if constexpr (kMax) {
          partial[threadIdx.x] = other > partial[threadIdx.x] ? other : partial[threadIdx.x];
        } else {
          partial[threadIdx.x] += other;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[p] = kMax ? partial[0] : partial[0] / static_cast<float>(plane);
    __syncthreads();  // partial[0] is read before the next plane overwrites it
  }
}

unsigned Blocks(int64_t work, int64_t per_block) {
  const int64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

}  // namespace

cudaError_t LaunchPool(PoolMode mode, const PoolWindow& window, const float* x, float* y,
                       cudaStream_t stream) {
  const int64_t count = window.planes * window.out[0] * window.out[1] * window.out[2];
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const unsigned blocks = Blocks(count, kThreads);
  switch (mode) {
    case PoolMode::kMax:
      PoolKernel<PoolMode::kMax><<<blocks, kThreads, 0, stream>>>(window, x, y, count);
      break;
    case PoolMode::kAverageExcludePad:
      PoolKernel<PoolMode::kAverageExcludePad>
          <<<blocks, kThreads, 0, stream>>>(window, x, y, count);
      break;
    case PoolMode::kAverageIncludePad:
      PoolKernel<PoolMode::kAverageIncludePad>
          <<<blocks, kThreads, 0, stream>>>(window, x, y, count);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchGlobalPool(bool max, const float* x, float* y, int64_t planes, int64_t plane,
                             cudaStream_t stream) {
  if (planes == 0) return cudaSuccess;
  const unsigned blocks = Blocks(planes, 1);
  if (max) {
    GlobalPoolKernel<true><<<blocks, kGlobalThreads, 0, stream>>>(x, y, planes, plane);
  } else {
    GlobalPoolKernel<false><<<blocks, kGlobalThreads, 0, stream>>>(x, y, planes, plane);
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

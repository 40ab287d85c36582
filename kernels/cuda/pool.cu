// MaxPool and AveragePool over up to three spatial dims, one thread per output element in a
// grid-stride loop, with ONNX's geometry (asymmetric pads, dilations, ceil_mode windows that
// reach past the padding, count_include_pad), which cuDNN's pooling descriptor cannot express
// (symmetric pads, no dilation). Global pools: one block per plane, a tree reduction in shared
// memory.
#include <cfloat>
#include <cstdint>

#include "kernels/cuda/pool.h"

namespace inferd::kernels::cuda {
namespace {

// Taps k < kernel of one dim whose position start + k * dilation lies in [lo, hi).
__device__ __forceinline__ int64_t TapsIn(int64_t start, int64_t kernel, int64_t dilation,
                                          int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t p = start + k * dilation;
    n += p >= lo && p < hi ? 1 : 0;
  }
  return n;
}

template <PoolMode kMode>
__global__ void PoolKernel(PoolWindow w, const float* __restrict__ x, float* __restrict__ y,
                           int64_t count) {
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    int64_t rest = i;
    const int64_t o2 = rest % w.out[2];
    rest /= w.out[2];
    const int64_t o1 = rest % w.out[1];
    rest /= w.out[1];
    const int64_t o0 = rest % w.out[0];
    const int64_t plane = rest / w.out[0];
    const int64_t s0 = o0 * w.stride[0] - w.pad_begin[0];
    const int64_t s1 = o1 * w.stride[1] - w.pad_begin[1];
    const int64_t s2 = o2 * w.stride[2] - w.pad_begin[2];
    const float* xp = x + plane * in_plane;
    float acc = kMode == PoolMode::kMax ? -FLT_MAX : 0.0f;
    for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
      const int64_t i0 = s0 + k0 * w.dilation[0];
      if (i0 < 0 || i0 >= w.in[0]) continue;
      for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
        const int64_t i1 = s1 + k1 * w.dilation[1];
        if (i1 < 0 || i1 >= w.in[1]) continue;
        const float* row = xp + (i0 * w.in[1] + i1) * w.in[2];
        for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
          const int64_t i2 = s2 + k2 * w.dilation[2];
          if (i2 < 0 || i2 >= w.in[2]) continue;
          const float v = row[i2];
          if constexpr (kMode == PoolMode::kMax) {
            acc = v > acc ? v : acc;
          } else {
            acc += v;
          }
        }
      }
    }
    if constexpr (kMode != PoolMode::kMax) {
      const bool include = kMode == PoolMode::kAverageIncludePad;
      int64_t taps = 1;
      const int64_t starts[kMaxPoolDims] = {s0, s1, s2};
      for (int d = 0; d < kMaxPoolDims; ++d) {
        taps *= TapsIn(starts[d], w.kernel[d], w.dilation[d], include ? -w.pad_begin[d] : 0,
                       include ? w.in[d] + w.pad_end[d] : w.in[d]);
      }
      acc = taps > 0 ? acc / static_cast<float>(taps) : 0.0f;
    }
    y[i] = acc;
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

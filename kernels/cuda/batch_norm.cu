// BatchNormalization, inference form, float32: one thread per element in a grid-stride loop.
// Each thread derives its channel's factor (a sqrt and a division, both correctly rounded as on
// the CPU); the kernel is bound by memory bandwidth, not by that arithmetic.
#include <cstdint>

#include "kernels/cuda/batch_norm.h"

namespace inferd::kernels::cuda {
namespace {

template <bool kPerElement>
__global__ void BatchNormKernel(const float* __restrict__ x, const float* __restrict__ scale,
                                const float* __restrict__ bias, const float* __restrict__ mean,
                                const float* __restrict__ var, float epsilon, int64_t c,
                                int64_t plane, int64_t count, float* y) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    const int64_t ch = (i / plane) % c;
    const int64_t p = kPerElement ? ch * plane + i % plane : ch;
    const float a = scale[p] / sqrtf(var[p] + epsilon);
    if constexpr (kPerElement) {
      y[i] = (x[i] - mean[p]) * a + bias[p];
    } else {
      y[i] = x[i] * a + (bias[p] - mean[p] * a);
    }
  }
}

}  // namespace

cudaError_t LaunchBatchNorm(const float* x, const float* scale, const float* bias,
                            const float* mean, const float* var, float epsilon, bool per_element,
                            int64_t n, int64_t c, int64_t plane, float* y, cudaStream_t stream) {
  const int64_t count = n * c * plane;
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  if (per_element) {
    BatchNormKernel<true>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, mean, var, epsilon, c, plane, count, y);
  } else {
    BatchNormKernel<false>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, mean, var, epsilon, c, plane, count, y);
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

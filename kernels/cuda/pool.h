// The launchers of the pooling kernels (pool.cu): plain C++ declarations that the .cu file
// defines (compiled by nvcc) and pool_kernel.cc calls. Each enqueues its kernel on `stream` and
// returns the launch's error (cudaGetLastError); none synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_POOL_H_
#define INFERD_KERNELS_CUDA_POOL_H_

#include <cuda_runtime_api.h>

#include <cfloat>
#include <cstdint>

namespace inferd::kernels::cuda {

enum class PoolMode {
  kMax,                // padding never wins
  kAverageExcludePad,  // divided by the window's taps inside the input
  kAverageIncludePad,  // divided by its taps inside the input and the explicit pads
};

inline constexpr int kMaxPoolDims = 3;

// A window over `planes` planes (N * C) of up to three spatial dims; fewer dims are leading
// dims of size 1 (in = out = kernel = stride = dilation = 1, no pads). The geometry is ONNX's
// (kernels/cpu/window.h): output o of a dim reads input positions o * stride - pad_begin +
// k * dilation for k < kernel, those outside [0, in) being padding; pad_end bounds the explicit
// padding that kAverageIncludePad counts (a ceil_mode window may reach past it).
struct PoolWindow {
  int64_t planes = 0;
  int64_t in[kMaxPoolDims] = {1, 1, 1}, out[kMaxPoolDims] = {1, 1, 1};
  int64_t kernel[kMaxPoolDims] = {1, 1, 1}, stride[kMaxPoolDims] = {1, 1, 1};
  int64_t dilation[kMaxPoolDims] = {1, 1, 1};
  int64_t pad_begin[kMaxPoolDims] = {0, 0, 0}, pad_end[kMaxPoolDims] = {0, 0, 0};
};

// Output element i of y [planes, out...] (row-major) from x [planes, in...]: what each thread of
// LaunchPool computes, here so that the host tests check the same arithmetic (__host__ and
// __device__ are empty for the host compiler). kMax starts from -FLT_MAX (a window of padding
// only gives it); an average over no tap is 0.
template <PoolMode kMode>
__host__ __device__ inline float PoolOutput(const PoolWindow& w, const float* x, int64_t i) {
  const int64_t o2 = i % w.out[2];
  i /= w.out[2];
  const int64_t o1 = i % w.out[1];
  i /= w.out[1];
  const int64_t o0 = i % w.out[0];
  const int64_t plane = i / w.out[0];
  const int64_t start[kMaxPoolDims] = {o0 * w.stride[0] - w.pad_begin[0],
                                       o1 * w.stride[1] - w.pad_begin[1],
                                       o2 * w.stride[2] - w.pad_begin[2]};
  const float* xp = x + plane * w.in[0] * w.in[1] * w.in[2];
  float acc = kMode == PoolMode::kMax ? -FLT_MAX : 0.0f;
  for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0) {
    const int64_t i0 = start[0] + k0 * w.dilation[0];
    if (i0 < 0 || i0 >= w.in[0]) continue;
    for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1) {
      const int64_t i1 = start[1] + k1 * w.dilation[1];
      if (i1 < 0 || i1 >= w.in[1]) continue;
      const float* row = xp + (i0 * w.in[1] + i1) * w.in[2];
      for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
        const int64_t i2 = start[2] + k2 * w.dilation[2];
        if (i2 < 0 || i2 >= w.in[2]) continue;
        const float v = row[i2];
        if (kMode == PoolMode::kMax) {
          acc = v > acc ? v : acc;
        } else {
          acc += v;
        }
      }
    }
  }
  if (kMode == PoolMode::kMax) return acc;
  // The divisor: per dim, the taps inside the input (and, including pads, inside the explicit
  // padding around it).
  const bool include = kMode == PoolMode::kAverageIncludePad;
  int64_t taps = 1;
  for (int d = 0; d < kMaxPoolDims; ++d) {
    const int64_t lo = include ? -w.pad_begin[d] : 0;
    const int64_t hi = include ? w.in[d] + w.pad_end[d] : w.in[d];
    int64_t n = 0;
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      const int64_t p = start[d] + k * w.dilation[d];
      n += p >= lo && p < hi ? 1 : 0;
    }
    taps *= n;
  }
  return taps > 0 ? acc / static_cast<float>(taps) : 0.0f;
}

// y [planes, out...] from x [planes, in...], float32.
cudaError_t LaunchPool(PoolMode mode, const PoolWindow& window, const float* x, float* y,
                       cudaStream_t stream);

// GlobalMaxPool / GlobalAveragePool: y[p] = the max or the mean of x's plane p of `plane`
// elements (plane >= 1), one thread block per plane.
cudaError_t LaunchGlobalPool(bool max, const float* x, float* y, int64_t planes, int64_t plane,
                             cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_POOL_H_

// The launchers of the pooling kernels (pool.cu): plain C++ declarations that the .cu file
// defines (compiled by nvcc) and pool_kernel.cc calls. Each enqueues its kernel on `stream` and
// returns the launch's error (cudaGetLastError); none synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_POOL_H_
#define INFERD_KERNELS_CUDA_POOL_H_

#include <cuda_runtime_api.h>

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

// y [planes, out...] from x [planes, in...], float32.
cudaError_t LaunchPool(PoolMode mode, const PoolWindow& window, const float* x, float* y,
                       cudaStream_t stream);

// GlobalMaxPool / GlobalAveragePool: y[p] = the max or the mean of x's plane p of `plane`
// elements (plane >= 1), one thread block per plane.
cudaError_t LaunchGlobalPool(bool max, const float* x, float* y, int64_t planes, int64_t plane,
                             cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_POOL_H_

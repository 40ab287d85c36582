// The launcher of BatchNormalization's inference kernel (batch_norm.cu): a plain C++ declaration
// that the .cu file defines and batch_norm_kernel.cc calls. It enqueues the kernel on `stream`
// and returns the launch's error (cudaGetLastError); it never synchronizes. Device pointers.
#ifndef INFERD_KERNELS_CUDA_BATCH_NORM_H_
#define INFERD_KERNELS_CUDA_BATCH_NORM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace inferd::kernels::cuda {

// x and y are [n, c, plane] float32, not overlapping. With a = scale / sqrt(var + epsilon), as the
// CPU kernel computes it:
//   per channel (per_element false; parameters [c]): y = x * a + (bias - mean * a);
//   per element (spatial = 0 of opsets 6-8; parameters [c, plane]): y = (x - mean) * a + bias.
cudaError_t LaunchBatchNorm(const float* x, const float* scale, const float* bias,
                            const float* mean, const float* var, float epsilon, bool per_element,
                            int64_t n, int64_t c, int64_t plane, float* y, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_BATCH_NORM_H_

// The launchers of the row-normalizing CUDA kernels (softmax.cu, layer_norm.cu): plain C++
// declarations that the .cu files define and the OpKernels call. Each enqueues its kernel on
// `stream` and returns the launch's error; none synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_NORMALIZE_H_
#define INFERD_KERNELS_CUDA_NORMALIZE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace inferd::kernels::cuda {

// ---- softmax.cu: Softmax, LogSoftmax ----

// x and y are [outer, n, inner] (row-major); each of the outer * inner vectors of n values
// strided by `inner` is normalized: exp(x - max) / sum, or x - max - log(sum) when `log`.
// inner == 1 takes one block per row (block reductions); inner > 1 one thread per column.
cudaError_t LaunchSoftmax(bool log, const float* x, float* y, int64_t outer, int64_t n,
                          int64_t inner, cudaStream_t stream);

// ---- layer_norm.cu: LayerNormalization and ONNX Runtime's fused forms ----

// One row of d values per block: s = x (+ skip) (+ bias); LayerNorm (s - mean) / sqrt(var +
// epsilon) * gamma (+ beta), or RMS (`simplified`) s / sqrt(mean(s^2) + epsilon) * gamma.
// Optional pointers may be null: skip (rows of d, repeated every skip_rows rows), bias, beta,
// and the outputs mean (0 for RMS), inv_std_dev (one per row) and sum (s, [rows, d]).
struct LayerNormArgs {
  const float* x = nullptr;
  const float* skip = nullptr;
  int64_t skip_rows = 1;
  const float* bias = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float* y = nullptr;
  float* mean = nullptr;
  float* inv_std_dev = nullptr;
  float* sum = nullptr;
  int64_t rows = 0;
  int64_t d = 0;
  float epsilon = 1e-5f;
  bool simplified = false;
};

cudaError_t LaunchLayerNorm(const LayerNormArgs& args, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_NORMALIZE_H_

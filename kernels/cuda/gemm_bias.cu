// Gemm's C term: y = beta * C broadcast to [rows, cols], written before cuBLAS accumulates
// alpha * A * B onto it (beta = 1 there).
#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {
namespace {

__global__ void BroadcastBiasKernel(const float* __restrict__ c, int64_t row_stride,
                                    int64_t col_stride, float beta, float* __restrict__ y,
                                    int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const int64_t r = i / cols, k = i % cols;
    y[i] = beta * c[r * row_stride + k * col_stride];
  }
}

}  // namespace

cudaError_t LaunchBroadcastBias(const float* c, int64_t row_stride, int64_t col_stride, float beta,
                                float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  const int64_t count = rows * cols;
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  BroadcastBiasKernel<<<blocks, kThreads, 0, stream>>>(c, row_stride, col_stride, beta, y, rows,
                                                       cols);
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

// The swap of the last two dims ([batch, rows, cols] -> [batch, cols, rows]) through 32x32 tiles
// in shared memory (one column of padding against bank conflicts): a block of 32x8 threads reads
// a tile row-wise from the input and writes it row-wise to the output, both coalesced. Grid
// dimensions past the hardware's limits loop.
#include <cstdint>

#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;

template <typename T>
__global__ void TransposeTiledKernel(const T* __restrict__ in, T* __restrict__ out, int64_t batch,
                                     int64_t rows, int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
    const T* src = in + b * rows * cols;
    T* dst = out + b * rows * cols;
    for (int64_t ty = blockIdx.y; ty < row_tiles; ty += gridDim.y) {  // uniform across the block
      const int64_t r0 = ty * kTile, c0 = static_cast<int64_t>(blockIdx.x) * kTile;
      for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
        const int64_t r = r0 + k, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
      }
      __syncthreads();
      // Output row c0 + k holds input column c0 + k; its elements are input rows r0 + x.
      for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
        const int64_t c = c0 + k, r = r0 + threadIdx.x;
        if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][k];
      }
      __syncthreads();  // the tile is reused by the next pass
    }
  }
}

template <typename T>
void Launch(const void* in, void* out, int64_t batch, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(col_tiles),
                  static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535),
                  static_cast<unsigned>(batch < 65535 ? batch : 65535));
  TransposeTiledKernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(
      static_cast<const T*>(in), static_cast<T*>(out), batch, rows, cols);
}

}  // namespace

cudaError_t LaunchTransposeTiled(int elem_bytes, const void* in, void* out, int64_t batch,
                                 int64_t rows, int64_t cols, cudaStream_t stream) {
  if (batch == 0 || rows == 0 || cols == 0) return cudaSuccess;
  if ((cols + kTile - 1) / kTile > 0x7fffffff) return cudaErrorInvalidValue;  // grid.x limit
  switch (elem_bytes) {
    case 1:
      Launch<uint8_t>(in, out, batch, rows, cols, stream);
      break;
    case 2:
      Launch<uint16_t>(in, out, batch, rows, cols, stream);
      break;
    case 4:
      Launch<uint32_t>(in, out, batch, rows, cols, stream);
      break;
    case 8:
      Launch<uint64_t>(in, out, batch, rows, cols, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

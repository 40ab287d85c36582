// Pad: one thread per output element (grid-stride), reading the input element PadSource maps it
// to or writing the constant. Any element type of 1, 2, 4 or 8 bytes (moved, not computed).
#include <cstdint>
#include <cstring>

#include "kernels/cuda/pad.h"

namespace inferd::kernels::cuda {
namespace {

template <typename T>
__global__ void PadKernel(const T* __restrict__ x, T* __restrict__ y, PadIndex index, T value) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < index.count;
       i += stride) {
    const int64_t src = PadSource(index, i);
    y[i] = src < 0 ? value : x[src];
  }
}

template <typename T>
void Launch(const void* x, void* y, const PadIndex& index, const unsigned char (&value)[8],
            cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (index.count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  T v;
  std::memcpy(&v, value, sizeof(T));
  PadKernel<T>
      <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), index, v);
}

}  // namespace

cudaError_t LaunchPad(int elem_bytes, const void* x, void* y, const PadIndex& index,
                      const unsigned char (&value)[8], cudaStream_t stream) {
  if (index.count == 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1:
      Launch<uint8_t>(x, y, index, value, stream);
      break;
    case 2:
      Launch<uint16_t>(x, y, index, value, stream);
      break;
    case 4:
      Launch<uint32_t>(x, y, index, value, stream);
      break;
    case 8:
      Launch<uint64_t>(x, y, index, value, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

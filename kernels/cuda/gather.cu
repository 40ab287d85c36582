// Gather: one thread per output element of [outer, count, inner]; negative indices count from
// the end, indices out of range write zeros (ONNX Runtime's CUDA Gather does the same; a kernel
// cannot return an error without the host waiting for it).
#include <cstdint>

#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {
namespace {

template <typename T, typename Index>
__global__ void GatherKernel(const T* __restrict__ data, const Index* __restrict__ indices,
                             T* __restrict__ out, int64_t total, int64_t dim, int64_t count,
                             int64_t inner) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const int64_t k = i % inner;
    const int64_t rest = i / inner;
    const int64_t j = rest % count, o = rest / count;
    int64_t index = static_cast<int64_t>(indices[j]);
    if (index < 0) index += dim;
    out[i] = index >= 0 && index < dim ? data[(o * dim + index) * inner + k] : T(0);
  }
}

template <typename T>
void Launch(const void* data, const void* indices, bool indices_int64, void* out, int64_t total,
            int64_t dim, int64_t count, int64_t inner, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (total + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  if (indices_int64) {
    GatherKernel<T, int64_t><<<blocks, kThreads, 0, stream>>>(
        static_cast<const T*>(data), static_cast<const int64_t*>(indices), static_cast<T*>(out),
        total, dim, count, inner);
  } else {
    GatherKernel<T, int32_t><<<blocks, kThreads, 0, stream>>>(
        static_cast<const T*>(data), static_cast<const int32_t*>(indices), static_cast<T*>(out),
        total, dim, count, inner);
  }
}

}  // namespace

cudaError_t LaunchGather(int elem_bytes, const void* data, const void* indices, bool indices_int64,
                         void* out, int64_t outer, int64_t dim, int64_t count, int64_t inner,
                         cudaStream_t stream) {
  const int64_t total = outer * count * inner;
  if (total == 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1:
      Launch<uint8_t>(data, indices, indices_int64, out, total, dim, count, inner, stream);
      break;
    case 2:
      Launch<uint16_t>(data, indices, indices_int64, out, total, dim, count, inner, stream);
      break;
    case 4:
      Launch<uint32_t>(data, indices, indices_int64, out, total, dim, count, inner, stream);
      break;
    case 8:
      Launch<uint64_t>(data, indices, indices_int64, out, total, dim, count, inner, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

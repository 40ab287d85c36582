// The strided copy behind Slice, Expand, Concat, Split and the general Transpose: one thread per
// element, its source and destination offsets from its coordinates; contiguous copies are one
// cudaMemcpyAsync.
#include <cstdint>

#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {
namespace {

template <typename T>
__global__ void StridedCopyKernel(const T* __restrict__ src, T* __restrict__ dst,
                                  StridedCopyIndex index) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < index.count;
       i += stride) {
    int64_t rest = i, s = index.src_offset, d = index.dst_offset;
    for (int k = index.rank - 1; k >= 0; --k) {
      const int64_t c = rest % index.dims[k];
      rest /= index.dims[k];
      s += c * index.src_strides[k];
      d += c * index.dst_strides[k];
    }
    dst[d] = src[s];
  }
}

template <typename T>
void Launch(const void* src, void* dst, const StridedCopyIndex& index, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (index.count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  StridedCopyKernel<T>
      <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), index);
}

}  // namespace

cudaError_t LaunchStridedCopy(int elem_bytes, const void* src, void* dst,
                              const StridedCopyIndex& index, cudaStream_t stream) {
  if (index.count == 0) return cudaSuccess;
  if (index.rank == 0 ||
      (index.rank == 1 && index.src_strides[0] == 1 && index.dst_strides[0] == 1)) {
    return cudaMemcpyAsync(static_cast<char*>(dst) + index.dst_offset * elem_bytes,
                           static_cast<const char*>(src) + index.src_offset * elem_bytes,
                           static_cast<size_t>(index.count) * elem_bytes, cudaMemcpyDeviceToDevice,
                           stream);
  }
  switch (elem_bytes) {
    case 1:
      Launch<uint8_t>(src, dst, index, stream);
      break;
    case 2:
      Launch<uint16_t>(src, dst, index, stream);
      break;
    case 4:
      Launch<uint32_t>(src, dst, index, stream);
      break;
    case 8:
      Launch<uint64_t>(src, dst, index, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

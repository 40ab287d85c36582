// Where: out = condition ? x : y with numpy broadcasting of all three (WhereIndex), one thread
// per output element; operands of the output's shape take an index-free path.
#include <cstdint>

#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {
namespace {

template <typename T, bool kSameShape>
__global__ void WhereKernel(const bool* __restrict__ c, const T* __restrict__ x,
                            const T* __restrict__ y, T* __restrict__ out, WhereIndex index) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < index.count;
       i += stride) {
    if constexpr (kSameShape) {
      out[i] = c[i] ? x[i] : y[i];
    } else {
      int64_t rest = i, ic = 0, ix = 0, iy = 0;
      for (int d = index.rank - 1; d >= 0; --d) {
        const int64_t coordinate = rest % index.out_dims[d];
        rest /= index.out_dims[d];
        ic += coordinate * index.c_strides[d];
        ix += coordinate * index.x_strides[d];
        iy += coordinate * index.y_strides[d];
      }
      out[i] = c[ic] ? x[ix] : y[iy];
    }
  }
}

template <typename T>
void Launch(const bool* c, const void* x, const void* y, void* out, const WhereIndex& index,
            cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (index.count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  const bool same = index.rank == 0 || (index.rank == 1 && index.c_strides[0] == 1 &&
                                        index.x_strides[0] == 1 && index.y_strides[0] == 1);
  const T* a = static_cast<const T*>(x);
  const T* b = static_cast<const T*>(y);
  T* o = static_cast<T*>(out);
  if (same) {
    WhereKernel<T, true><<<blocks, kThreads, 0, stream>>>(c, a, b, o, index);
  } else {
    WhereKernel<T, false><<<blocks, kThreads, 0, stream>>>(c, a, b, o, index);
  }
}

}  // namespace

cudaError_t LaunchWhere(int elem_bytes, const bool* condition, const void* x, const void* y,
                        void* out, const WhereIndex& index, cudaStream_t stream) {
  if (index.count == 0) return cudaSuccess;
  switch (elem_bytes) {
    case 1:
      Launch<uint8_t>(condition, x, y, out, index, stream);
      break;
    case 2:
      Launch<uint16_t>(condition, x, y, out, index, stream);
      break;
    case 4:
      Launch<uint32_t>(condition, x, y, out, index, stream);
      break;
    case 8:
      Launch<uint64_t>(condition, x, y, out, index, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

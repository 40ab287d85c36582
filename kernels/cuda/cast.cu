// Cast between float32, float16, int32, int64, uint8 and bool: one kernel per (from, to) pair, a
// grid-stride loop. Conversions as the CPU kernel's (kernels/cpu/cast.cc): through float for
// float16 (round to nearest even), truncation toward zero for float -> integer, != 0 for bool.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/movement.h"

namespace inferd::kernels::cuda {
namespace {

template <typename To, typename From>
__device__ __forceinline__ To Convert(From v) {
  if constexpr (std::is_same_v<From, __half>) {
    return Convert<To>(__half2float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* __restrict__ x, To* __restrict__ y, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    y[i] = Convert<To>(x[i]);
  }
}

template <typename From, typename To>
void Launch(const void* x, void* y, int64_t count, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  CastKernel<From, To>
      <<<blocks, kThreads, 0, stream>>>(static_cast<const From*>(x), static_cast<To*>(y), count);
}

template <typename From>
bool LaunchTo(CastType to, const void* x, void* y, int64_t count, cudaStream_t stream) {
  switch (to) {
    case CastType::kFloat32:
      Launch<From, float>(x, y, count, stream);
      return true;
    case CastType::kFloat16:
      Launch<From, __half>(x, y, count, stream);
      return true;
    case CastType::kInt32:
      Launch<From, int32_t>(x, y, count, stream);
      return true;
    case CastType::kInt64:
      Launch<From, int64_t>(x, y, count, stream);
      return true;
    case CastType::kUint8:
      Launch<From, uint8_t>(x, y, count, stream);
      return true;
    case CastType::kBool:
      Launch<From, bool>(x, y, count, stream);
      return true;
  }
  return false;
}

}  // namespace

cudaError_t LaunchCast(CastType from, CastType to, const void* x, void* y, int64_t count,
                       cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  bool launched = false;
  switch (from) {
    case CastType::kFloat32:
      launched = LaunchTo<float>(to, x, y, count, stream);
      break;
    case CastType::kFloat16:
      launched = LaunchTo<__half>(to, x, y, count, stream);
      break;
    case CastType::kInt32:
      launched = LaunchTo<int32_t>(to, x, y, count, stream);
      break;
    case CastType::kInt64:
      launched = LaunchTo<int64_t>(to, x, y, count, stream);
      break;
    case CastType::kUint8:
      launched = LaunchTo<uint8_t>(to, x, y, count, stream);
      break;
    case CastType::kBool:
      launched = LaunchTo<bool>(to, x, y, count, stream);
      break;
  }
  return launched ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace inferd::kernels::cuda

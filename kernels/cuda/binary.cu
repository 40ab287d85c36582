// Add, Sub, Mul, Div, Pow over numpy-broadcast operands: one kernel template per (op, type), a
// grid-stride loop; operands of the output's shape and scalar operands take index-free paths.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {
namespace {

// Unsigned arithmetic of the same width, so that integer ops wrap instead of overflowing.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// x^e by squaring, wrapping; a negative exponent gives the truncated reciprocal (0 unless |x| = 1):
// kernels/cpu/binary.cc's IntPow for a same-typed exponent.
template <typename T>
__device__ __forceinline__ T IntPow(T x, T e) {
  if (e < 0) {
    if (x == 1) return 1;
    if (x == -1) return (e % 2 == 0) ? 1 : -1;
    return 0;
  }
  Unsigned<T> result = 1, base = static_cast<Unsigned<T>>(x);
  for (uint64_t n = static_cast<uint64_t>(e); n != 0; n >>= 1) {
    if (n & 1) result *= base;
    base *= base;
  }
  return static_cast<T>(result);
}

template <BinaryOp kOp, typename T>
__device__ __forceinline__ T Apply(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (kOp == BinaryOp::kAdd) return x + y;
    if constexpr (kOp == BinaryOp::kSub) return x - y;
    if constexpr (kOp == BinaryOp::kMul) return x * y;
    if constexpr (kOp == BinaryOp::kDiv) return x / y;
    if constexpr (kOp == BinaryOp::kPow) return powf(x, y);
  } else {
    const Unsigned<T> ux = static_cast<Unsigned<T>>(x), uy = static_cast<Unsigned<T>>(y);
    if constexpr (kOp == BinaryOp::kAdd) return static_cast<T>(ux + uy);
    if constexpr (kOp == BinaryOp::kSub) return static_cast<T>(ux - uy);
    if constexpr (kOp == BinaryOp::kMul) return static_cast<T>(ux * uy);
    if constexpr (kOp == BinaryOp::kDiv) {
      if (y == 0) return T(0);
      if (y == T(-1)) return static_cast<T>(Unsigned<T>(0) - ux);  // MIN / -1 would trap
      return static_cast<T>(x / y);
    }
    if constexpr (kOp == BinaryOp::kPow) return IntPow(x, y);
  }
  return T(0);
}

enum class Layout { kSameShape, kScalarA, kScalarB, kBroadcast };

template <BinaryOp kOp, typename T, Layout kLayout>
__global__ void BinaryKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                             BroadcastIndex index) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < index.count;
       i += stride) {
    if constexpr (kLayout == Layout::kSameShape) {
      out[i] = Apply<kOp>(a[i], b[i]);
    } else if constexpr (kLayout == Layout::kScalarA) {
      out[i] = Apply<kOp>(a[0], b[i]);
    } else if constexpr (kLayout == Layout::kScalarB) {
      out[i] = Apply<kOp>(a[i], b[0]);
    } else {
      int64_t rest = i, ia = 0, ib = 0;
      for (int d = index.rank - 1; d >= 0; --d) {
        const int64_t coordinate = rest % index.out_dims[d];
        rest /= index.out_dims[d];
        ia += coordinate * index.a_strides[d];
        ib += coordinate * index.b_strides[d];
      }
      out[i] = Apply<kOp>(a[ia], b[ib]);
    }
  }
}

// Which index-free path applies. Merged dimensions (BroadcastIndex::Make) leave an operand of the
// output's shape as one dimension of stride 1, and a scalar operand with stride 0.
Layout LayoutOf(const BroadcastIndex& index) {
  if (index.rank == 0) return Layout::kSameShape;  // one element
  if (index.rank == 1) {
    const int64_t sa = index.a_strides[0], sb = index.b_strides[0];
    if (sa == 1 && sb == 1) return Layout::kSameShape;
    if (sa == 0 && sb == 1) return Layout::kScalarA;
    if (sa == 1 && sb == 0) return Layout::kScalarB;
  }
  return Layout::kBroadcast;
}

template <BinaryOp kOp, typename T>
void Launch(const void* a, const void* b, void* out, const BroadcastIndex& index,
            cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t blocks64 = (index.count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(out);
  switch (LayoutOf(index)) {
    case Layout::kSameShape:
      BinaryKernel<kOp, T, Layout::kSameShape><<<blocks, kThreads, 0, stream>>>(x, y, z, index);
      break;
    case Layout::kScalarA:
      BinaryKernel<kOp, T, Layout::kScalarA><<<blocks, kThreads, 0, stream>>>(x, y, z, index);
      break;
    case Layout::kScalarB:
      BinaryKernel<kOp, T, Layout::kScalarB><<<blocks, kThreads, 0, stream>>>(x, y, z, index);
      break;
    case Layout::kBroadcast:
      BinaryKernel<kOp, T, Layout::kBroadcast><<<blocks, kThreads, 0, stream>>>(x, y, z, index);
      break;
  }
}

template <BinaryOp kOp>
void LaunchTyped(ElementType type, const void* a, const void* b, void* out,
                 const BroadcastIndex& index, cudaStream_t stream) {
  switch (type) {
    case ElementType::kFloat32:
      return Launch<kOp, float>(a, b, out, index, stream);
    case ElementType::kInt32:
      return Launch<kOp, int32_t>(a, b, out, index, stream);
    case ElementType::kInt64:
      return Launch<kOp, int64_t>(a, b, out, index, stream);
  }
}

}  // namespace

cudaError_t LaunchBinary(BinaryOp op, ElementType type, const void* a, const void* b, void* out,
                         const BroadcastIndex& index, cudaStream_t stream) {
  if (index.count == 0) return cudaSuccess;
  switch (op) {
    case BinaryOp::kAdd:
      LaunchTyped<BinaryOp::kAdd>(type, a, b, out, index, stream);
      break;
    case BinaryOp::kSub:
      LaunchTyped<BinaryOp::kSub>(type, a, b, out, index, stream);
      break;
    case BinaryOp::kMul:
      LaunchTyped<BinaryOp::kMul>(type, a, b, out, index, stream);
      break;
    case BinaryOp::kDiv:
      LaunchTyped<BinaryOp::kDiv>(type, a, b, out, index, stream);
      break;
    case BinaryOp::kPow:
      LaunchTyped<BinaryOp::kPow>(type, a, b, out, index, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

// ReduceSum, ReduceMean, ReduceMax, ReduceMin over float32, int32 and int64 (reduce.h's plans):
// rows with one block each (CUB's BlockReduce), [outer, n, inner] columns with one thread per
// output (neighbouring threads read neighbouring columns: coalesced), and a general strided
// path with one thread per output walking the reduced coordinates.
#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/reduce.h"

namespace inferd::kernels::cuda {
namespace {

// Init (the empty fold), Combine (associative), Fin (from the fold and the count): the CPU
// kernels' definitions (kernels/cpu/reduce.cc), so that NaNs and empty folds agree.
template <ReduceOp kOp, typename T>
struct Fold {
  __device__ static T Init() {
    if constexpr (kOp == ReduceOp::kMax) {
      if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
      return -std::numeric_limits<T>::infinity();
    }
    if constexpr (kOp == ReduceOp::kMin) {
      if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
      return std::numeric_limits<T>::infinity();
    }
    return T(0);
  }
  __device__ T operator()(T a, T b) const {
    if constexpr (kOp == ReduceOp::kMax) return b > a ? b : a;
    if constexpr (kOp == ReduceOp::kMin) return b < a ? b : a;
    if constexpr (std::is_integral_v<T>) {  // wrap instead of overflowing
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    }
    return a + b;
  }
  __device__ static T Fin(T a, int64_t n) {
    if constexpr (kOp == ReduceOp::kMean) {
      if constexpr (std::is_integral_v<T>) return n == 0 ? T(0) : static_cast<T>(a / n);
      return a / static_cast<T>(n);
    }
    return a;
  }
};

template <ReduceOp kOp, typename T, int kThreads>
__global__ void ReduceRows(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n) {
  using Reduce = cub::BlockReduce<T, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const Fold<kOp, T> fold;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {  // uniform across the block
    const T* xr = x + r * n;
    T acc = Fold<kOp, T>::Init();
    for (int64_t i = threadIdx.x; i < n; i += kThreads) acc = fold(acc, xr[i]);
    acc = Reduce(temp).Reduce(acc, fold);
    if (threadIdx.x == 0) y[r] = Fold<kOp, T>::Fin(acc, n);
    __syncthreads();  // temp is reused by the next row
  }
}

template <ReduceOp kOp, typename T>
__global__ void ReduceColumns(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n,
                              int64_t inner) {
  const Fold<kOp, T> fold;
  const int64_t outputs = outer * inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < outputs;
       j += stride) {
    const int64_t o = j / inner, i = j - o * inner;
    const T* xc = x + o * n * inner + i;
    T acc = Fold<kOp, T>::Init();
    for (int64_t k = 0; k < n; ++k) acc = fold(acc, xc[k * inner]);
    y[j] = Fold<kOp, T>::Fin(acc, n);
  }
}

template <ReduceOp kOp, typename T>
__global__ void ReduceStrided(const T* __restrict__ x, T* __restrict__ y, ReducePlan p) {
  const Fold<kOp, T> fold;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < p.outputs;
       j += stride) {
    int64_t rest = j, base = 0;
    for (int d = p.kept_rank - 1; d >= 0; --d) {
      base += (rest % p.kept_dims[d]) * p.kept_strides[d];
      rest /= p.kept_dims[d];
    }
    T acc = Fold<kOp, T>::Init();
    for (int64_t k = 0; k < p.reduced; ++k) {
      int64_t r = k, offset = base;
      for (int d = p.reduced_rank - 1; d >= 0; --d) {
        offset += (r % p.reduced_dims[d]) * p.reduced_strides[d];
        r /= p.reduced_dims[d];
      }
      acc = fold(acc, x[offset]);
    }
    y[j] = Fold<kOp, T>::Fin(acc, p.reduced);
  }
}

unsigned GridFor(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
}

template <ReduceOp kOp, typename T>
void Launch(const void* xv, void* yv, const ReducePlan& p, cudaStream_t stream) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  constexpr int kThreads = 256;
  switch (p.kind) {
    case ReducePlan::kRows: {
      const unsigned blocks = static_cast<unsigned>(p.outer < 65535 * 16 ? p.outer : 65535 * 16);
      ReduceRows<kOp, T, kThreads><<<blocks, kThreads, 0, stream>>>(x, y, p.outer, p.reduced);
      break;
    }
    case ReducePlan::kColumns:
      ReduceColumns<kOp, T><<<GridFor(p.outputs, kThreads), kThreads, 0, stream>>>(
          x, y, p.outer, p.reduced, p.inner);
      break;
    case ReducePlan::kStrided:
      ReduceStrided<kOp, T><<<GridFor(p.outputs, kThreads), kThreads, 0, stream>>>(x, y, p);
      break;
  }
}

template <ReduceOp kOp>
void LaunchTyped(ElementType type, const void* x, void* y, const ReducePlan& p,
                 cudaStream_t stream) {
  switch (type) {
    case ElementType::kFloat32:
      return Launch<kOp, float>(x, y, p, stream);
    case ElementType::kInt32:
      return Launch<kOp, int32_t>(x, y, p, stream);
    case ElementType::kInt64:
      return Launch<kOp, int64_t>(x, y, p, stream);
  }
}

}  // namespace

cudaError_t LaunchReduce(ReduceOp op, ElementType type, const void* x, void* y,
                         const ReducePlan& plan, cudaStream_t stream) {
  if (plan.outputs == 0) return cudaSuccess;
  switch (op) {
    case ReduceOp::kSum:
      LaunchTyped<ReduceOp::kSum>(type, x, y, plan, stream);
      break;
    case ReduceOp::kMean:
      LaunchTyped<ReduceOp::kMean>(type, x, y, plan, stream);
      break;
    case ReduceOp::kMax:
      LaunchTyped<ReduceOp::kMax>(type, x, y, plan, stream);
      break;
    case ReduceOp::kMin:
      LaunchTyped<ReduceOp::kMin>(type, x, y, plan, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

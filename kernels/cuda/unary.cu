// Relu, Sigmoid, Tanh and the math ops (Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Gelu in its
// erf and tanh forms) on float32: one kernel template, a grid-stride loop. Sigmoid is computed
// so that it never overflows: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below.
#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {
namespace {

template <UnaryOp kOp>
__device__ __forceinline__ float Apply(float x) {
  if constexpr (kOp == UnaryOp::kRelu) return x > 0.0f ? x : 0.0f;
  if constexpr (kOp == UnaryOp::kSigmoid) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
  }
  if constexpr (kOp == UnaryOp::kTanh) return tanhf(x);
  if constexpr (kOp == UnaryOp::kNeg) return -x;
  if constexpr (kOp == UnaryOp::kAbs) return fabsf(x);
  if constexpr (kOp == UnaryOp::kSqrt) return sqrtf(x);
  if constexpr (kOp == UnaryOp::kReciprocal) return 1.0f / x;
  if constexpr (kOp == UnaryOp::kExp) return expf(x);
  if constexpr (kOp == UnaryOp::kLog) return logf(x);
  if constexpr (kOp == UnaryOp::kErf) return erff(x);
  if constexpr (kOp == UnaryOp::kGelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  if constexpr (kOp == UnaryOp::kGeluTanh) {
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(inner));
  }
  return x;
}

template <UnaryOp kOp>
__global__ void UnaryKernel(const float* __restrict__ x, float* __restrict__ y, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    y[i] = Apply<kOp>(x[i]);
  }
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
  switch (op) {
    case UnaryOp::kRelu:
      UnaryKernel<UnaryOp::kRelu><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kSigmoid:
      UnaryKernel<UnaryOp::kSigmoid><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kTanh:
      UnaryKernel<UnaryOp::kTanh><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kNeg:
      UnaryKernel<UnaryOp::kNeg><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kAbs:
      UnaryKernel<UnaryOp::kAbs><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kSqrt:
      UnaryKernel<UnaryOp::kSqrt><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kReciprocal:
      UnaryKernel<UnaryOp::kReciprocal><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kExp:
      UnaryKernel<UnaryOp::kExp><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kLog:
      UnaryKernel<UnaryOp::kLog><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kErf:
      UnaryKernel<UnaryOp::kErf><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kGelu:
      UnaryKernel<UnaryOp::kGelu><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
    case UnaryOp::kGeluTanh:
      UnaryKernel<UnaryOp::kGeluTanh><<<blocks, kThreads, 0, stream>>>(x, y, count);
      break;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

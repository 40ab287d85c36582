// The float32 unary ops (Relu, Sigmoid, Tanh, the math ops, Gelu in its erf and tanh forms, the
// activations with attributes and com.microsoft's bias forms) and Clip (float32, int32, int64):
// one kernel template per op, a grid-stride loop. Sigmoid (and QuickGelu through it) never
// overflows: 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below. The formulas are the CPU kernels'
// (kernels/cpu/activation.cc, unary.cc, contrib_activation.cc).
#include <cstdint>

#include "kernels/cuda/elementwise.h"

namespace inferd::kernels::cuda {
namespace {

constexpr UnaryOp kLastUnaryOp = UnaryOp::kQuickGelu;

__device__ __forceinline__ float Sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  const float e = expf(x);
  return e / (1.0f + e);
}

__device__ __forceinline__ float Clamp01(float v) {
  return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

template <UnaryOp kOp>
__device__ __forceinline__ float Apply(float x, const UnaryParams& p) {
  if constexpr (kOp == UnaryOp::kRelu) return x > 0.0f ? x : 0.0f;
  if constexpr (kOp == UnaryOp::kSigmoid) return Sigmoid(x);
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
  if constexpr (kOp == UnaryOp::kSin) return sinf(x);
  if constexpr (kOp == UnaryOp::kCos) return cosf(x);
  if constexpr (kOp == UnaryOp::kFloor) return floorf(x);
  if constexpr (kOp == UnaryOp::kCeil) return ceilf(x);
  if constexpr (kOp == UnaryOp::kRound) return rintf(x);  // half to even
  if constexpr (kOp == UnaryOp::kLeakyRelu) return x < 0.0f ? p.alpha * x : x;
  if constexpr (kOp == UnaryOp::kElu) return x < 0.0f ? p.alpha * expm1f(x) : x;
  if constexpr (kOp == UnaryOp::kSelu) return p.gamma * (x <= 0.0f ? p.alpha * expm1f(x) : x);
  if constexpr (kOp == UnaryOp::kHardSigmoid) return Clamp01(p.alpha * x + p.beta);
  if constexpr (kOp == UnaryOp::kHardSwish) return x * Clamp01((x + 3.0f) * (1.0f / 6.0f));
  if constexpr (kOp == UnaryOp::kSoftplus) {
    return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));  // log(1 + e^x), no overflow
  }
  if constexpr (kOp == UnaryOp::kQuickGelu) return x * Sigmoid(p.alpha * x);
  return x;
}

template <UnaryOp kOp, bool kBias>
__global__ void UnaryKernel(const float* __restrict__ x, float* __restrict__ y, int64_t count,
                            UnaryParams params) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if constexpr (kBias) {
      y[i] = Apply<kOp>(x[i] + params.bias[i % params.bias_len], params);
    } else {
      y[i] = Apply<kOp>(x[i], params);
    }
  }
}

template <typename T>
__global__ void ClipKernel(const T* __restrict__ x, T* __restrict__ y, int64_t count, T lo, T hi) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const T v = x[i];
    const T low = v < lo ? lo : v;
    y[i] = low > hi ? hi : low;
  }
}

constexpr int kThreads = 256;

unsigned BlocksFor(int64_t count) {
  const int64_t blocks64 = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks64 < 65535 * 8 ? blocks64 : 65535 * 8);
}

// Launches the kernel of the op numbered kFirst if that is `op`, else tries the next one.
template <int kFirst>
void LaunchFrom(UnaryOp op, const float* x, float* y, int64_t count, cudaStream_t stream,
                const UnaryParams& params) {
  if constexpr (kFirst <= static_cast<int>(kLastUnaryOp)) {
    constexpr UnaryOp kOp = static_cast<UnaryOp>(kFirst);
    if (op != kOp) return LaunchFrom<kFirst + 1>(op, x, y, count, stream, params);
    if (params.bias != nullptr) {
      UnaryKernel<kOp, true><<<BlocksFor(count), kThreads, 0, stream>>>(x, y, count, params);
    } else {
      UnaryKernel<kOp, false><<<BlocksFor(count), kThreads, 0, stream>>>(x, y, count, params);
    }
  }
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t count, cudaStream_t stream,
                        const UnaryParams& params) {
  if (count == 0) return cudaSuccess;
  if (params.bias != nullptr && params.bias_len <= 0) return cudaErrorInvalidValue;
  LaunchFrom<0>(op, x, y, count, stream, params);
  return cudaGetLastError();
}

cudaError_t LaunchClip(ElementType type, const void* x, void* y, int64_t count,
                       const ClipBounds& bounds, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  switch (type) {
    case ElementType::kFloat32:
      ClipKernel<float><<<BlocksFor(count), kThreads, 0, stream>>>(
          static_cast<const float*>(x), static_cast<float*>(y), count, bounds.float_lo,
          bounds.float_hi);
      break;
    case ElementType::kInt32:
      ClipKernel<int32_t><<<BlocksFor(count), kThreads, 0, stream>>>(
          static_cast<const int32_t*>(x), static_cast<int32_t*>(y), count,
          static_cast<int32_t>(bounds.int_lo), static_cast<int32_t>(bounds.int_hi));
      break;
    case ElementType::kInt64:
      ClipKernel<int64_t><<<BlocksFor(count), kThreads, 0, stream>>>(
          static_cast<const int64_t*>(x), static_cast<int64_t*>(y), count, bounds.int_lo,
          bounds.int_hi);
      break;
  }
  return cudaGetLastError();
}

}  // namespace inferd::kernels::cuda

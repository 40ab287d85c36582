// The launchers of the elementwise CUDA kernels: plain C++ declarations that the .cu files
// define (compiled by nvcc) and the OpKernels call (compiled by the host compiler). Each launcher
// enqueues its kernel on `stream` and returns the launch's error (cudaGetLastError); it never
// synchronizes. Pointers are device memory.
#ifndef INFERD_KERNELS_CUDA_ELEMENTWISE_H_
#define INFERD_KERNELS_CUDA_ELEMENTWISE_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace inferd::kernels::cuda {

enum class ElementType { kFloat32, kInt32, kInt64 };

// ---- binary.cu: Add, Sub, Mul, Div with numpy broadcasting ----

// kPow: powf for float32; for integers x^e by squaring (wrapping), a negative exponent giving
// the truncated reciprocal (0 unless |x| = 1), as the CPU kernel does. Same element type for both
// operands.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow };

inline constexpr int kMaxBroadcastRank = 8;

// How output element i reads its operands: i's coordinates in `out_dims` (row-major) dotted with
// each operand's strides in elements (0 along a broadcast dimension). Dimensions along which both
// operands advance together are merged first (MakeBroadcastIndex, broadcast_index.h), so the
// rank is small; `rank` 0 is a scalar.
struct BroadcastIndex {
  int rank = 0;
  int64_t count = 0;  // output elements
  int64_t out_dims[kMaxBroadcastRank] = {};
  int64_t a_strides[kMaxBroadcastRank] = {};
  int64_t b_strides[kMaxBroadcastRank] = {};
};

// out[i] = a[.] op b[.]. Integers wrap on overflow; integer Div truncates toward zero and gives 0
// for a zero divisor (as the CPU kernels do).
cudaError_t LaunchBinary(BinaryOp op, ElementType type, const void* a, const void* b, void* out,
                         const BroadcastIndex& index, cudaStream_t stream);

// ---- unary.cu: activations and math ops on float32 ----

enum class UnaryOp {
  kRelu,
  kSigmoid,
  kTanh,
  // The math ops: Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Gelu (erf form and tanh form).
  kNeg,
  kAbs,
  kSqrt,
  kReciprocal,
  kExp,
  kLog,
  kErf,
  kGelu,
  kGeluTanh,
  // Sin, Cos, Floor, Ceil, Round (half to even).
  kSin,
  kCos,
  kFloor,
  kCeil,
  kRound,
  // The activations with attributes (UnaryParams): LeakyRelu (alpha), Elu (alpha), Selu (alpha,
  // gamma), HardSigmoid (alpha, beta), HardSwish, Softplus, QuickGelu (alpha: x sigmoid(alpha x)).
  kLeakyRelu,
  kElu,
  kSelu,
  kHardSigmoid,
  kHardSwish,
  kSoftplus,
  kQuickGelu,  // the last one
};

// An op's attributes, and an optional bias added to x before the op (com.microsoft FastGelu and
// BiasGelu): y[i] = op(x[i] + bias[i % bias_len]) when bias is not null.
struct UnaryParams {
  float alpha = 0.0f, beta = 0.0f, gamma = 0.0f;
  const float* bias = nullptr;  // device memory, bias_len values
  int64_t bias_len = 0;
};

cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t count, cudaStream_t stream,
                        const UnaryParams& params = {});

// Clip's bounds: the float ones for float32, the integer ones for int32 (in range) and int64.
struct ClipBounds {
  float float_lo = 0.0f, float_hi = 0.0f;
  int64_t int_lo = 0, int_hi = 0;
};

// y[i] = min(max(x[i], lo), hi) as the CPU kernel computes it (NaN stays NaN; lo > hi gives hi).
cudaError_t LaunchClip(ElementType type, const void* x, void* y, int64_t count,
                       const ClipBounds& bounds, cudaStream_t stream);

// ---- gemm_bias.cu: Gemm's C broadcast into Y ----

// y[r, c] = beta * c[r * row_stride + c * col_stride] for an [rows, cols] row-major y (strides 0
// along the dimensions C broadcasts).
cudaError_t LaunchBroadcastBias(const float* c, int64_t row_stride, int64_t col_stride, float beta,
                                float* y, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_ELEMENTWISE_H_

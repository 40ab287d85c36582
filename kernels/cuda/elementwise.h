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

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

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
};

cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t count, cudaStream_t stream);

// ---- gemm_bias.cu: Gemm's C broadcast into Y ----

// y[r, c] = beta * c[r * row_stride + c * col_stride] for an [rows, cols] row-major y (strides 0
// along the dimensions C broadcasts).
cudaError_t LaunchBroadcastBias(const float* c, int64_t row_stride, int64_t col_stride, float beta,
                                float* y, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_ELEMENTWISE_H_

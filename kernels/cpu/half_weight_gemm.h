// HalfWeightGemm: C = alpha * op(A) * op(B) (+ C) for float32 A and C and a float16 or bfloat16 B
// that is never converted as a whole. It is what MatMul, FusedMatMul and Gemm run when the
// precision widening pass (engine/precision_widening.h) leaves their B weight in half precision:
// the model's half weights are the only copy, instead of the half weights plus a float32 copy plus
// a prepacked float32 copy (docs/half-precision.md "Half weights").
//
// Two paths, both computing in float32 with each B element converted exactly:
//   - streaming, for at most kStreamRows rows of A and no transposed A: B is read once, in place,
//     16 elements at a time converted in registers (AVX-512; a portable loop elsewhere), every row
//     of A against it. This is a decode step's product: memory-bound, and B's half bytes are half
//     of what float32 weights would stream.
//   - blocked, for more rows: B is converted block by block (kBlockK x kBlockN) into a per-slot
//     float32 buffer in the declared workspace and multiplied by dnnl_sgemm, accumulating over the
//     blocks of K; the conversion is paid once per block for all rows of A.
// Columns are split over the intra-op pool (RunParts) in both.
//
// Pure functions of their arguments; thread-safe. No allocation.
#ifndef INFERD_KERNELS_CPU_HALF_WEIGHT_GEMM_H_
#define INFERD_KERNELS_CPU_HALF_WEIGHT_GEMM_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "engine/data_type.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

inline constexpr int64_t kStreamRows = 8;
inline constexpr int64_t kBlockK = 256, kBlockN = 128;

struct HalfWeightGemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A stored [K, M]
  bool trans_b = false;  // B stored [N, K] (Gemm transB) instead of [K, N]
  engine::DataType b_type = engine::DataType::kFloat16;  // or kBFloat16
};

// Whether `t` is a type B may have here (float16, bfloat16).
bool IsHalfWeightType(engine::DataType t);

// Workspace bytes HalfWeightGemm needs with `threads` threads (0 on the streaming path).
size_t HalfWeightGemmWorkspace(const HalfWeightGemmShape& s, int threads);

// C (row-major [m, n], leading dimension n) = alpha * op(A) * op(B), plus C's previous contents
// when `accumulate`. A is row-major [m, k] (or [k, m] with trans_a), B row-major [k, n] (or
// [n, k] with trans_b). `workspace` holds HalfWeightGemmWorkspace(s, pool.num_threads()) bytes.
// `portable` forces the portable streaming loop (tests compare it with the AVX-512 one).
absl::Status HalfWeightGemm(engine::ThreadPool& pool, const HalfWeightGemmShape& s, const float* a,
                            const void* b, float alpha, bool accumulate, float* c, void* workspace,
                            const NodeLabel& node, bool portable = false);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_HALF_WEIGHT_GEMM_H_

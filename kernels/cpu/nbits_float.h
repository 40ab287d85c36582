// MatMulNBits' float32 paths (docs/genai-ops.md): dequantizing whole columns (the prefill path
// dequantizes panels for sgemm; AVX-512 where the decode form below is) and the on-the-fly decode
// path for M <= kDecodeRows.
//
// The decode path has two forms:
//   - AVX-512 (kAvx512: the CPU has AVX-512F, block_size and K are multiples of 32, zero points
//     absent or packed uint8): A's rows are rearranged once per run so that each 32 values hold
//     the 16 at even positions, then the 16 at odd ones. A 16-byte chunk of B zero-extended to
//     16 int32 lanes then gives, masked and shifted, the low nibbles (even elements) and the
//     high nibbles (odd elements) in lane order: one shuffle per 32 weights, no interleaving.
//     The zero point is subtracted in integers, so (q - z) * a accumulates as the reference
//     writes it; the scale multiplies each block's sum. Several columns at a time share A's
//     loads.
//   - portable (AVX2 + FMA where compiled for it, else scalar): each column dequantized block by
//     block; zero points are folded out of the inner loop, sum((q - z) * s * a) =
//     s * sum(q * a) - s * z * sum(a), with sum(a) per block computed once per run.
#ifndef INFERD_KERNELS_CPU_NBITS_FLOAT_H_
#define INFERD_KERNELS_CPU_NBITS_FLOAT_H_

#include <cstdint>

#include "kernels/cpu/nbits.h"

namespace inferd::kernels::cpu::nbits {

enum class FloatIsa { kPortable, kAvx512 };

// Dequantizes column `col` of B into `dst` (K floats); kAvx512 converts 32 values at a time.
void DequantizeColumn(FloatIsa isa, const Quant& q, int64_t col, float* dst);

// The decode path for these attributes on this CPU; INFERD_NBITS_ISA=avx2 or scalar asks for the
// portable one (tests and benchmarks).
FloatIsa PickFloatIsa(int64_t k, int64_t block);

// Floats of workspace a decode run of `m` rows needs (block sums and A rearranged).
int64_t DecodeWorkspaceFloats(int64_t m, int64_t k, int64_t blocks);

// One decode run: A [m, K] and what the run derived from it in the workspace, y [m, N].
struct FloatDecode {
  const Quant* q = nullptr;
  FloatIsa isa = FloatIsa::kPortable;  // kAvx512 only where the zero points allow it
  const float* a = nullptr;
  int64_t m = 0;
  const float* block_sums = nullptr;  // portable: [m, blocks]
  const float* a_pairs = nullptr;     // AVX-512: [m, K], evens then odds per 32
  float* y = nullptr;
};

// Fills `workspace` (DecodeWorkspaceFloats floats) from A for `isa` and returns the run.
FloatDecode PrepareDecode(FloatIsa isa, const Quant& q, const float* a, int64_t m, float* workspace,
                          float* y);

// Columns [begin, end) of y.
void DecodeColumns(const FloatDecode& d, int64_t begin, int64_t end);

}  // namespace inferd::kernels::cpu::nbits

#endif  // INFERD_KERNELS_CPU_NBITS_FLOAT_H_

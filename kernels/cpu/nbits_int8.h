// MatMulNBits at accuracy_level 4: int8 A x int4 B with integer dot products (docs/genai-ops.md).
//
// Each row of A is quantized per block of K (ONNX Runtime's CompInt8 scheme): scale =
// max|a| / 127, q = round-to-nearest-even(a * (127 / max|a|)) (0 where the block is all zero),
// padded with zeros to whole blocks. Per column and block, dot = sum(qa * qb) in int32 with qb
// the raw 4-bit value (0..15), and
//   y = sum over blocks of a_scale * b_scale * dot - (a_scale * sum(qa)) * (b_scale * zero).
// For the SIMD paths B is repacked at creation by groups of 8 columns: a 32-byte chunk holds,
// for each of the 8 columns, 4 consecutive K values in the low nibbles and the next 4 in the
// high nibbles. One vpdpbusd then multiplies 4 K values of all 8 columns (its 8 int32 lanes) by
// the same 4 int8 values of A (broadcast), so a block's dots for 8 columns end in one vector,
// scaled by the 8 columns' scales (also repacked) with no horizontal sums. The dot runs on
// AVX-VNNI or AVX-512 VNNI (vpdpbusd) where the CPU has it, else AVX2 (vpmaddubsw: u8 x s8 pairs,
// 15 * 127 * 2 = 3810 fits int16, then vpmaddwd), else scalar (also used where the scales or
// zero points are not constant).
#ifndef INFERD_KERNELS_CPU_NBITS_INT8_H_
#define INFERD_KERNELS_CPU_NBITS_INT8_H_

#include <cstdint>
#include <vector>

#include "kernels/cpu/nbits.h"

namespace inferd::kernels::cpu::nbits {

enum class Int8Isa { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

// The best path this CPU runs; INFERD_NBITS_ISA=scalar|avx2|avxvnni|avx512vnni asks for one
// (tests and benchmarks), honoured only where the CPU has it.
Int8Isa PickInt8Isa();

// A's rows quantized per block (the run's workspace).
struct QuantA {
  const int8_t* q = nullptr;          // [M, blocks * block], zero padded
  const float* scale = nullptr;       // [M, blocks]
  const float* scaled_sum = nullptr;  // [M, blocks]: scale * sum(q)
  int64_t row = 0;                    // blocks * block
};

// Quantizes `len` values of `a` into `q` (block values, the tail zeroed); returns sum(q) and
// sets *scale.
int32_t QuantizeBlock(const float* a, int64_t len, int64_t block, int8_t* q, float* scale);

inline constexpr int64_t kGroupCols = 8;  // columns per packed group

// The level-4 inputs of one run.
struct Int8Args {
  const Quant* q = nullptr;
  const uint8_t* packed = nullptr;  // B by groups (above), [groups, blocks, 4 * block]
  const float* bs = nullptr;        // scales by groups, [groups, blocks, 8]
  const float* zs = nullptr;        // scale * zero point by groups, [groups, blocks, 8]
  QuantA a;
  int64_t m = 0;
  float* y = nullptr;  // [M, N]
};

// Groups of 8 columns [begin, end) on the SIMD paths (B packed), else columns on the scalar one.
void Int8Run(Int8Isa isa, const Int8Args& p, int64_t begin, int64_t end);

// The repacked B, scales and scale * zero point for the SIMD paths (padding columns zero).
struct PackedInt8 {
  std::vector<uint8_t> b;
  std::vector<float> bs, zs;
};

PackedInt8 PackForInt8(const Quant& q);

}  // namespace inferd::kernels::cpu::nbits

#endif  // INFERD_KERNELS_CPU_NBITS_INT8_H_

// MatMulNBits' 4-bit weights as its paths read them: matmul_nbits.cc (the kernel),
// nbits_float.cc (the float32 paths), nbits_int8.cc (accuracy_level 4). docs/genai-ops.md.
#ifndef INFERD_KERNELS_CPU_NBITS_H_
#define INFERD_KERNELS_CPU_NBITS_H_

#include <algorithm>
#include <cstdint>

#if defined(__AVX2__) && defined(__FMA__)
#define INFERD_NBITS_AVX2 1
#endif

namespace inferd::kernels::cpu::nbits {

// M up to this takes the on-the-fly decode paths (float and int8).
inline constexpr int64_t kDecodeRows = 4;

// One run's B: [N, blocks, blob] bytes (two 4-bit values a byte, the low nibble first), its
// scales and zero points.
struct Quant {
  const uint8_t* b = nullptr;     // [N, k_blocks, blob]
  const float* scales = nullptr;  // [N, k_blocks]
  const uint8_t* zp_packed = nullptr;
  const float* zp_float = nullptr;
  int64_t k = 0, n = 0, block = 0, blocks = 0, blob = 0, zp_row = 0;

  // Block `blk` of column `col`: its bytes, scale, zero point, first K index and length (the
  // last block may be short).
  struct Block {
    const uint8_t* src;
    float scale, zero;
    int64_t k0, len;
  };
  Block At(int64_t col, int64_t blk) const {
    const int64_t k0 = blk * block;
    return {b + (col * blocks + blk) * blob, scales[col * blocks + blk], Zero(col, blk), k0,
            std::min(block, k - k0)};
  }

  float Zero(int64_t col, int64_t blk) const {
    if (zp_packed != nullptr) {
      const uint8_t v = zp_packed[col * zp_row + blk / 2];
      return static_cast<float>((blk & 1) ? (v >> 4) : (v & 0x0F));
    }
    if (zp_float != nullptr) return zp_float[col * blocks + blk];
    return 8.0f;
  }
};

}  // namespace inferd::kernels::cpu::nbits

#endif  // INFERD_KERNELS_CPU_NBITS_H_

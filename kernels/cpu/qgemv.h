// Products of a few uint8 rows with int8 weights packed at load, dequantized to float32 (the
// recurrent and input products of com.microsoft DynamicQuantizeLSTM, rnn_quant.cc):
//
//   y[r][n] = (a_scale * b_scale[n]) * sum_k (a[r][k] - a_zp) * (b[k][n] - b_zp[n])
//
// with the integer sum exact in int32, as ONNX Runtime's quantized GEMM computes it. The sum is
// taken as dot(a, b) - b_zp * sum(a) - a_zp * sum(b) + K * a_zp * b_zp, so the inner loop is a
// plain u8 x s8 dot product: on AVX-512 VNNI (vpdpbusd: 4 byte products of 16 columns a
// instruction) where the CPU has it, else portable code over the same packed layout.
//
// Layout: B by groups of 16 columns; in a group, K in steps of 4, each step 64 bytes holding the
// 4 consecutive k values of the 16 columns (column-major within the step). K is padded to a
// multiple of 4 and N to 16 with zeros. uint8 weights are stored as int8 (value - 128, the zero
// point too), which leaves every b - b_zp unchanged.
#ifndef INFERD_KERNELS_CPU_QGEMV_H_
#define INFERD_KERNELS_CPU_QGEMV_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferd::kernels::cpu {

struct PackedInt8Weights {
  int64_t k = 0, n = 0;
  int64_t k4 = 0;                    // K rounded up to a multiple of 4
  int64_t groups = 0;                // ceil(N / 16)
  std::vector<int8_t> data;          // [groups][k4 / 4][16][4]
  std::vector<int32_t> column_sums;  // sum over k of the stored b[k][n], [groups * 16]
  std::vector<int32_t> zero_points;  // the stored b_zp per column, [groups * 16]
  std::vector<float> scales;         // b_scale per column, [groups * 16]

  size_t bytes() const {
    return data.size() + (column_sums.size() + zero_points.size()) * sizeof(int32_t) +
           scales.size() * sizeof(float);
  }
};

// Packs `b` ([K][N]: element (k, n) at b[k * ldb + n]), int8 or (is_uint8) uint8, with its
// scales and zero points: per column (`per_column`, N values) or one for all.
PackedInt8Weights PackInt8Weights(const void* b, bool is_uint8, int64_t k, int64_t n, int64_t ldb,
                                  const float* scales, const void* zero_points, bool per_column);

enum class QgemvIsa { kPortable, kAvx512Vnni };

// AVX-512 VNNI where the CPU has it; INFERD_QGEMV_ISA=portable asks for the portable code.
QgemvIsa BestQgemvIsa();

// y rows [0, rows) (row stride ldy) from `a` rows (row stride lda >= b.k4; the bytes between K
// and k4 must be zero) with scale a_scale and zero point a_zp.
void QgemvRows(QgemvIsa isa, const uint8_t* a, int64_t rows, int64_t lda, int32_t a_zp,
               float a_scale, const PackedInt8Weights& b, float* y, int64_t ldy);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_QGEMV_H_

#include "kernels/cpu/qgemv.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__AVX2__)
#include <immintrin.h>
#define INFERD_QGEMV_X86 1
#endif

namespace inferd::kernels::cpu {
namespace {

constexpr int64_t kCols = 16;  // columns per group
constexpr int64_t kRows = 4;   // rows sharing each load of B

int64_t RowSum(const uint8_t* a, int64_t k) {
  int64_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += a[i];
  return s;
}

// The zero-point terms of column c for a row whose bytes sum to `row_sum`, dequantized.
inline float Finish(int32_t dot, const PackedInt8Weights& b, int64_t c, int64_t row_sum,
                    int32_t a_zp, float a_scale) {
  const int64_t zp = b.zero_points[c];
  const int64_t v = dot - zp * row_sum - int64_t{a_zp} * b.column_sums[c] + b.k * a_zp * zp;
  return (a_scale * b.scales[c]) * static_cast<float>(v);
}

void RowsPortable(const uint8_t* a, int64_t rows, int64_t lda, int32_t a_zp, float a_scale,
                  const PackedInt8Weights& b, float* y, int64_t ldy) {
  const int64_t steps = b.k4 / 4;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* ar = a + r * lda;
    const int64_t row_sum = RowSum(ar, b.k);
    for (int64_t g = 0; g < b.groups; ++g) {
      int32_t dot[kCols] = {};
      const int8_t* bg = b.data.data() + g * steps * 64;
      for (int64_t s = 0; s < steps; ++s) {
        for (int64_t c = 0; c < kCols; ++c) {
          for (int64_t j = 0; j < 4; ++j) {
            dot[c] += int32_t{ar[s * 4 + j]} * int32_t{bg[s * 64 + c * 4 + j]};
          }
        }
      }
      for (int64_t c = 0; c < kCols && g * kCols + c < b.n; ++c) {
        y[r * ldy + g * kCols + c] = Finish(dot[c], b, g * kCols + c, row_sum, a_zp, a_scale);
      }
    }
  }
}

#ifdef INFERD_QGEMV_X86
#define INFERD_QGEMV_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// Dequantizes the int32 dot products `acc` of the group of 16 columns from c0 for a row whose
// bytes sum to `row_sum` and stores them (masked for the last, partial group).
INFERD_QGEMV_VNNI inline void StoreGroup(__m512i acc, const PackedInt8Weights& b, int64_t c0,
                                         int64_t row_sum, int32_t a_zp, float a_scale, float* y) {
  const __m512i zp = _mm512_loadu_si512(b.zero_points.data() + c0);
  const __m512i sums = _mm512_loadu_si512(b.column_sums.data() + c0);
  const __m512 scale =
      _mm512_mul_ps(_mm512_set1_ps(a_scale), _mm512_loadu_ps(b.scales.data() + c0));
  const __mmask16 mask =
      static_cast<__mmask16>(b.n - c0 >= kCols ? 0xFFFF : (1u << (b.n - c0)) - 1);
  // The zero-point terms in int32: |values| stay below 2^31 for K < 2^15 (rnn_quant.cc refuses
  // more).
  __m512i v = _mm512_sub_epi32(
      acc, _mm512_mullo_epi32(zp, _mm512_set1_epi32(static_cast<int32_t>(row_sum))));
  v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(a_zp), sums));
  v = _mm512_add_epi32(v,
                       _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int32_t>(b.k) * a_zp), zp));
  _mm512_mask_storeu_ps(y + c0, mask, _mm512_mul_ps(scale, _mm512_cvtepi32_ps(v)));
}

// kR rows (1..4) against groups [g0, g0 + kG) of 16 columns: kR * kG independent accumulator
// chains, so that vpdpbusd's latency is hidden (one row and one group at a time waited on it:
// 13 us a step of a 256-wide LSTM).
template <int kR, int kG>
INFERD_QGEMV_VNNI inline void GroupsVnni(const uint8_t* a, int64_t lda, int32_t a_zp, float a_scale,
                                         const int64_t* row_sum, const PackedInt8Weights& b,
                                         int64_t g0, float* y, int64_t ldy) {
  const int64_t steps = b.k4 / 4;
  __m512i acc[kR][kG];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int g = 0; g < kG; ++g) acc[r][g] = _mm512_setzero_si512();
  }
  const int8_t* bg = b.data.data() + g0 * steps * 64;
  for (int64_t s = 0; s < steps; ++s) {
    __m512i four[kR];
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      int32_t v;
      std::memcpy(&v, a + r * lda + s * 4, sizeof(v));
      four[r] = _mm512_set1_epi32(v);
    }
#pragma GCC unroll 8
    for (int g = 0; g < kG; ++g) {
      const __m512i bv = _mm512_loadu_si512(bg + (g * steps + s) * 64);
#pragma GCC unroll 8
      for (int r = 0; r < kR; ++r) acc[r][g] = _mm512_dpbusd_epi32(acc[r][g], four[r], bv);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int g = 0; g < kG; ++g) {
      StoreGroup(acc[r][g], b, (g0 + g) * kCols, row_sum[r], a_zp, a_scale, y + r * ldy);
    }
  }
}

// kR rows against every group: kG at a time, the rest one by one.
template <int kR>
INFERD_QGEMV_VNNI inline void RowsVnni(const uint8_t* a, int64_t lda, int32_t a_zp, float a_scale,
                                       const PackedInt8Weights& b, float* y, int64_t ldy) {
  constexpr int kG = kR == 1 ? 8 : kR == 2 ? 4 : 2;
  int64_t row_sum[kR];
  for (int r = 0; r < kR; ++r) row_sum[r] = RowSum(a + r * lda, b.k);
  int64_t g = 0;
  for (; g + kG <= b.groups; g += kG) {
    GroupsVnni<kR, kG>(a, lda, a_zp, a_scale, row_sum, b, g, y, ldy);
  }
  for (; g < b.groups; ++g) GroupsVnni<kR, 1>(a, lda, a_zp, a_scale, row_sum, b, g, y, ldy);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"), flatten)) void RowsAvx512Vnni(
    const uint8_t* a, int64_t rows, int64_t lda, int32_t a_zp, float a_scale,
    const PackedInt8Weights& b, float* y, int64_t ldy) {
  int64_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    RowsVnni<4>(a + r * lda, lda, a_zp, a_scale, b, y + r * ldy, ldy);
  }
  switch (rows - r) {
    case 3:
      return RowsVnni<3>(a + r * lda, lda, a_zp, a_scale, b, y + r * ldy, ldy);
    case 2:
      return RowsVnni<2>(a + r * lda, lda, a_zp, a_scale, b, y + r * ldy, ldy);
    case 1:
      return RowsVnni<1>(a + r * lda, lda, a_zp, a_scale, b, y + r * ldy, ldy);
    default:
      return;
  }
}
#endif

}  // namespace

PackedInt8Weights PackInt8Weights(const void* b, bool is_uint8, int64_t k, int64_t n, int64_t ldb,
                                  const float* scales, const void* zero_points, bool per_column) {
  PackedInt8Weights p;
  p.k = k;
  p.n = n;
  p.k4 = (k + 3) / 4 * 4;
  p.groups = (n + kCols - 1) / kCols;
  const int64_t padded = p.groups * kCols;
  p.data.assign(static_cast<size_t>(p.groups * p.k4 * kCols), 0);
  p.column_sums.assign(static_cast<size_t>(padded), 0);
  p.zero_points.assign(static_cast<size_t>(padded), 0);
  p.scales.assign(static_cast<size_t>(padded), 0.0f);
  // A stored value: int8 as it is, uint8 shifted into int8.
  auto stored = [&](const void* base, int64_t i) -> int32_t {
    return is_uint8 ? int32_t{static_cast<const uint8_t*>(base)[i]} - 128
                    : int32_t{static_cast<const int8_t*>(base)[i]};
  };
  const int64_t steps = p.k4 / 4;
  for (int64_t c = 0; c < n; ++c) {
    const int64_t g = c / kCols, cc = c % kCols;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t v = stored(b, i * ldb + c);
      p.data[static_cast<size_t>((g * steps + i / 4) * 64 + cc * 4 + i % 4)] =
          static_cast<int8_t>(v);
      sum += v;
    }
    p.column_sums[c] = sum;
    p.zero_points[c] = zero_points != nullptr ? stored(zero_points, per_column ? c : 0) : 0;
    p.scales[c] = scales[per_column ? c : 0];
  }
  return p;
}

QgemvIsa BestQgemvIsa() {
#ifdef INFERD_QGEMV_X86
  if (const char* env = std::getenv("INFERD_QGEMV_ISA");
      env != nullptr && std::string(env) == "portable") {
    return QgemvIsa::kPortable;
  }
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) {
    return QgemvIsa::kAvx512Vnni;
  }
#endif
  return QgemvIsa::kPortable;
}

void QgemvRows(QgemvIsa isa, const uint8_t* a, int64_t rows, int64_t lda, int32_t a_zp,
               float a_scale, const PackedInt8Weights& b, float* y, int64_t ldy) {
#ifdef INFERD_QGEMV_X86
  if (isa == QgemvIsa::kAvx512Vnni) return RowsAvx512Vnni(a, rows, lda, a_zp, a_scale, b, y, ldy);
#endif
  RowsPortable(a, rows, lda, a_zp, a_scale, b, y, ldy);
}

}  // namespace inferd::kernels::cpu

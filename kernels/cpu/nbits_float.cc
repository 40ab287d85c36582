#include "kernels/cpu/nbits_float.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#ifdef INFERD_NBITS_AVX2
#include <immintrin.h>
#endif

namespace inferd::kernels::cpu::nbits {
namespace {

// ---- portable ----

#ifdef INFERD_NBITS_AVX2
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
  return _mm_cvtss_f32(s);
}
#endif

// One column's dot products with kRows rows of A: out[r] = sum_k a[r][k] * w[k], w the
// dequantized column. kRows is a template argument so that the accumulators live in registers
// (with a run-time row count the compiler kept them on the stack, and every FMA waited on a
// store and a reload: 20 ms per token instead of a few on an 8-layer 512-wide model).
template <int kRows>
void DecodeColumnRows(const Quant& q, int64_t col, const float* a, const float* block_sums,
                      float* out) {
  float corr[kRows] = {};  // -sum over blocks of s * z * sum(a in block), plus scalar tails
#ifdef INFERD_NBITS_AVX2
  __m256 total[kRows];
  for (int r = 0; r < kRows; ++r) total[r] = _mm256_setzero_ps();
  const __m128i low_mask = _mm_set1_epi8(0x0F);
#else
  float total[kRows] = {};
#endif
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const auto [src, s, z, k0, len] = q.At(col, blk);
    for (int r = 0; r < kRows; ++r) corr[r] -= s * z * block_sums[r * q.blocks + blk];
    int64_t j = 0;  // element within the block
#ifdef INFERD_NBITS_AVX2
    // Two accumulators a row (the low and high 8 elements of each 16), summed per block.
    __m256 acc0[kRows], acc1[kRows];
    for (int r = 0; r < kRows; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (; j + 32 <= len; j += 32) {
      // 16 bytes -> 32 nibbles in element order (low nibble first).
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j / 2));
      const __m128i lo = _mm_and_si128(bytes, low_mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
      const __m128i n0 = _mm_unpacklo_epi8(lo, hi), n1 = _mm_unpackhi_epi8(lo, hi);
      const __m256 w0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(n0));
      const __m256 w1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(n0, 8)));
      const __m256 w2 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(n1));
      const __m256 w3 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(n1, 8)));
      for (int r = 0; r < kRows; ++r) {
        const float* ar = a + r * q.k + k0 + j;
        acc0[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(ar), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(ar + 8), acc1[r]);
        acc0[r] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(ar + 16), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(ar + 24), acc1[r]);
      }
    }
    for (; j + 16 <= len; j += 16) {
      // 8 bytes -> 16 nibbles.
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + j / 2));
      const __m128i lo = _mm_and_si128(bytes, low_mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
      const __m128i nib = _mm_unpacklo_epi8(lo, hi);
      const __m256 w0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nib));
      const __m256 w1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(nib, 8)));
      for (int r = 0; r < kRows; ++r) {
        const float* ar = a + r * q.k + k0 + j;
        acc0[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(ar), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(ar + 8), acc1[r]);
      }
    }
    const __m256 sv = _mm256_set1_ps(s);
    for (int r = 0; r < kRows; ++r) {
      total[r] = _mm256_fmadd_ps(_mm256_add_ps(acc0[r], acc1[r]), sv, total[r]);
    }
#endif
    for (; j < len; ++j) {  // the tail (or everything without AVX2)
      const uint8_t v = src[j / 2];
      const float w = static_cast<float>((j & 1) ? (v >> 4) : (v & 0x0F)) * s;
      for (int r = 0; r < kRows; ++r) corr[r] += w * a[r * q.k + k0 + j];
    }
  }
  for (int r = 0; r < kRows; ++r) {
#ifdef INFERD_NBITS_AVX2
    out[r] = HorizontalSum(total[r]) + corr[r];
#else
    out[r] = total[r] + corr[r];
#endif
  }
}

void DecodeColumn(const Quant& q, int64_t col, const float* a, int64_t rows,
                  const float* block_sums, float* out) {
  static_assert(kDecodeRows == 4, "DecodeColumn dispatches rows 1 to 4");
  switch (rows) {
    case 1:
      return DecodeColumnRows<1>(q, col, a, block_sums, out);
    case 2:
      return DecodeColumnRows<2>(q, col, a, block_sums, out);
    case 3:
      return DecodeColumnRows<3>(q, col, a, block_sums, out);
    default:
      return DecodeColumnRows<4>(q, col, a, block_sums, out);
  }
}

#ifdef INFERD_NBITS_AVX2
// ---- AVX-512 ----

// GCC 12 warns that the AVX-512 intrinsics' own undefined-vector placeholders may be used
// uninitialized (a false positive inside avx512fintrin.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define INFERD_NBITS_AVX512 __attribute__((target("avx512f")))

// Columns [col0, col0 + kCols) for kRows rows.
template <int kRows, int kCols, bool kPackedZp>
INFERD_NBITS_AVX512 inline void Avx512Columns(const FloatDecode& d, int64_t col0) {
  const Quant& q = *d.q;
  const __m512i low_mask = _mm512_set1_epi32(0x0F);
  __m512 total[kRows][kCols];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) total[r][c] = _mm512_setzero_ps();
  }
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const int64_t k0 = blk * q.block, chunks = std::min(q.block, q.k - k0) / 32;
    __m512i zero[kCols];
    __m512 scale[kCols];
    __m512 acc[kRows][kCols];
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const int64_t col = col0 + c;
      scale[c] = _mm512_set1_ps(q.scales[col * q.blocks + blk]);
      int32_t z = 8;
      if constexpr (kPackedZp) {
        const uint8_t v = q.zp_packed[col * q.zp_row + blk / 2];
        z = (blk & 1) ? (v >> 4) : (v & 0x0F);
      }
      zero[c] = _mm512_set1_epi32(z);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) acc[r][c] = _mm512_setzero_ps();
    }
    for (int64_t ch = 0; ch < chunks; ++ch) {
      __m512 even[kRows], odd[kRows];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const float* ar = d.a_pairs + r * q.k + k0 + ch * 32;
        even[r] = _mm512_loadu_ps(ar);
        odd[r] = _mm512_loadu_ps(ar + 16);
      }
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) {
        const uint8_t* src = q.b + ((col0 + c) * q.blocks + blk) * q.blob + ch * 16;
        const __m512i x =
            _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
        const __m512 lo =
            _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(x, low_mask), zero[c]));
        const __m512 hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(x, 4), zero[c]));
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          acc[r][c] = _mm512_fmadd_ps(lo, even[r], acc[r][c]);
          acc[r][c] = _mm512_fmadd_ps(hi, odd[r], acc[r][c]);
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int c = 0; c < kCols; ++c) {
        total[r][c] = _mm512_fmadd_ps(acc[r][c], scale[c], total[r][c]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) d.y[r * q.n + col0 + c] = _mm512_reduce_add_ps(total[r][c]);
  }
}

// Fewer columns at a time as rows grow, so that the accumulators stay in the 32 registers.
template <int kRows, bool kPackedZp>
INFERD_NBITS_AVX512 inline void Avx512Rows(const FloatDecode& d, int64_t begin, int64_t end) {
  constexpr int kCols = kRows == 1 ? 4 : kRows == 2 ? 2 : 1;
  int64_t col = begin;
  for (; col + kCols <= end; col += kCols) Avx512Columns<kRows, kCols, kPackedZp>(d, col);
  for (; col < end; ++col) Avx512Columns<kRows, 1, kPackedZp>(d, col);
}

template <bool kPackedZp>
INFERD_NBITS_AVX512 inline void Avx512Dispatch(const FloatDecode& d, int64_t begin, int64_t end) {
  static_assert(kDecodeRows == 4, "the AVX-512 decode dispatches rows 1 to 4");
  switch (d.m) {
    case 1:
      return Avx512Rows<1, kPackedZp>(d, begin, end);
    case 2:
      return Avx512Rows<2, kPackedZp>(d, begin, end);
    case 3:
      return Avx512Rows<3, kPackedZp>(d, begin, end);
    default:
      return Avx512Rows<4, kPackedZp>(d, begin, end);
  }
}

// `flatten` inlines the templates into this function, compiled for AVX-512.
__attribute__((target("avx512f"), flatten)) void Avx512DecodeColumns(const FloatDecode& d,
                                                                     int64_t begin, int64_t end) {
  if (d.q->zp_packed != nullptr) return Avx512Dispatch<true>(d, begin, end);
  Avx512Dispatch<false>(d, begin, end);
}

// Column `col` dequantized into `dst` (K floats): 32 values at a time within a block (the low and
// high nibbles, then interleaved into element order with two permutes), the rest scalar.
__attribute__((target("avx512f"))) void Avx512DequantizeColumn(const Quant& q, int64_t col,
                                                               float* dst) {
  const __m512i low_mask = _mm512_set1_epi32(0x0F);
  // Output lane i takes lo[i / 2] (even i) or hi[i / 2] (odd i); the second half from lane 8.
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const auto [src, s, z, k0, len] = q.At(col, blk);
    float* out = dst + k0;
    const __m512 scale = _mm512_set1_ps(s), zero = _mm512_set1_ps(z);
    int64_t j = 0;
    for (; j + 32 <= len; j += 32) {
      const __m512i x =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j / 2)));
      const __m512 lo = _mm512_mul_ps(
          _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(x, low_mask)), zero), scale);
      const __m512 hi =
          _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(x, 4)), zero), scale);
      _mm512_storeu_ps(out + j, _mm512_permutex2var_ps(lo, first, hi));
      _mm512_storeu_ps(out + j + 16, _mm512_permutex2var_ps(lo, second, hi));
    }
    for (; j < len; ++j) {
      const uint8_t v = src[j / 2];
      out[j] = (static_cast<float>((j & 1) ? (v >> 4) : (v & 0x0F)) - z) * s;
    }
  }
}

#pragma GCC diagnostic pop
#endif

}  // namespace

void DequantizeColumn(FloatIsa isa, const Quant& q, int64_t col, float* dst) {
#ifdef INFERD_NBITS_AVX2
  if (isa == FloatIsa::kAvx512) return Avx512DequantizeColumn(q, col, dst);
#endif
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const auto [src, s, z, k0, len] = q.At(col, blk);
    float* out = dst + k0;
    const int64_t pairs = len / 2;
#pragma omp simd
    for (int64_t j = 0; j < pairs; ++j) {
      out[2 * j] = (static_cast<float>(src[j] & 0x0F) - z) * s;
      out[2 * j + 1] = (static_cast<float>(src[j] >> 4) - z) * s;
    }
    if (len & 1) out[len - 1] = (static_cast<float>(src[pairs] & 0x0F) - z) * s;
  }
}
FloatIsa PickFloatIsa(int64_t k, int64_t block) {
#ifdef INFERD_NBITS_AVX2
  if (const char* env = std::getenv("INFERD_NBITS_ISA"); env != nullptr) {
    const std::string want = env;
    if (want == "avx2" || want == "scalar") return FloatIsa::kPortable;
  }
  if (__builtin_cpu_supports("avx512f") && k % 32 == 0 && block % 32 == 0) return FloatIsa::kAvx512;
#endif
  return FloatIsa::kPortable;
}

int64_t DecodeWorkspaceFloats(int64_t m, int64_t k, int64_t blocks) { return m * (blocks + k); }

FloatDecode PrepareDecode(FloatIsa isa, const Quant& q, const float* a, int64_t m, float* workspace,
                          float* y) {
  FloatDecode d;
  d.q = &q;
  d.a = a;
  d.m = m;
  d.y = y;
  d.isa = q.zp_float != nullptr ? FloatIsa::kPortable : isa;  // float zero points: portable
  if (d.isa == FloatIsa::kAvx512) {
    float* pairs = workspace + m * q.blocks;
    for (int64_t r = 0; r < m; ++r) {
      const float* ar = a + r * q.k;
      float* pr = pairs + r * q.k;
      for (int64_t k0 = 0; k0 < q.k; k0 += 32) {
        for (int64_t i = 0; i < 16; ++i) {
          pr[k0 + i] = ar[k0 + 2 * i];
          pr[k0 + 16 + i] = ar[k0 + 2 * i + 1];
        }
      }
    }
    d.a_pairs = pairs;
    return d;
  }
  float* sums = workspace;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t blk = 0; blk < q.blocks; ++blk) {
      const int64_t k0 = blk * q.block, len = std::min(q.block, q.k - k0);
      const float* ar = a + r * q.k + k0;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t j = 0; j < len; ++j) s += ar[j];
      sums[r * q.blocks + blk] = s;
    }
  }
  d.block_sums = sums;
  return d;
}

void DecodeColumns(const FloatDecode& d, int64_t begin, int64_t end) {
#ifdef INFERD_NBITS_AVX2
  if (d.isa == FloatIsa::kAvx512) return Avx512DecodeColumns(d, begin, end);
#endif
  float out[kDecodeRows];
  for (int64_t col = begin; col < end; ++col) {
    DecodeColumn(*d.q, col, d.a, d.m, d.block_sums, out);
    for (int64_t r = 0; r < d.m; ++r) d.y[r * d.q->n + col] = out[r];
  }
}

}  // namespace inferd::kernels::cpu::nbits

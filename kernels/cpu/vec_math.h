// Vectorized float helpers for the row kernels of Softmax, LogSoftmax and the reductions: max of a
// row, exp(x - shift) stored and summed, sum of exp(x - shift). AVX2/FMA (the build targets
// x86-64-v3) with a scalar tail and a scalar fallback. Pure functions; thread-safe.
//
// exp is the Cephes single-precision polynomial (relative error about 2 ulp over the clamped range
// [-87.3, 88.4]); below the range the result is FLT_MIN-sized, not 0, which softmax tolerates.
//
// Example:
//   const float m = vec::Max(x, n);
//   const float sum = vec::ExpShiftStore(x, y, n, m);  // y = exp(x - m), returns sum(y)
#ifndef INFERD_KERNELS_CPU_VEC_MATH_H_
#define INFERD_KERNELS_CPU_VEC_MATH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define INFERD_VEC_MATH_AVX2 1
#endif

namespace inferd::kernels::cpu::vec {

#ifdef INFERD_VEC_MATH_AVX2
// exp of 8 floats.
// Below kExpLow (e^kExpLow = 2.4e-38, just above FLT_MIN) the result is 0: a softmax row divides
// by its sum, which would turn FLT_MIN into a subnormal, and arithmetic on subnormals is slow on
// x86 (BERT's masked attention probabilities made oneDNN's attention-times-V product take 2.8 ms
// per layer instead of about 0.06). The clamp is there too, not at ln(FLT_MIN): from ln(FLT_MIN)
// the last multiply by 2^-126 itself made subnormals in the lanes the mask then zeroed, and a
// masked BERT softmax (a third of its scores -3.4e38) ran 4x slower than an unmasked one.
inline constexpr float kExpLow = -86.64f;  // round(kExpLow / ln 2) = -125: 2^n p stays normal

inline __m256 Exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f);
  const __m256 lo = _mm256_set1_ps(kExpLow);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  // n = round(x / ln 2); r = x - n ln 2 in two steps.
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n through the exponent bits (n in [-125, 127] after the clamp).
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float HorizontalMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

// Scalar exp with the same clamp as Exp8, and 0 below it (for tails, so a row's values are
// consistent).
inline float ExpScalar(float x) {
  if (x < kExpLow) return 0.0f;
  return std::exp(std::min(x, 88.3762626647949f));
}

// Largest of n > 0 values (-inf for n == 0).
inline float Max(const float* x, int64_t n) {
  int64_t i = 0;
  float m = -std::numeric_limits<float>::infinity();
#ifdef INFERD_VEC_MATH_AVX2
  if (n >= 32) {
    __m256 m0 = _mm256_loadu_ps(x), m1 = m0, m2 = m0, m3 = m0;
    for (; i + 32 <= n; i += 32) {
      m0 = _mm256_max_ps(m0, _mm256_loadu_ps(x + i));
      m1 = _mm256_max_ps(m1, _mm256_loadu_ps(x + i + 8));
      m2 = _mm256_max_ps(m2, _mm256_loadu_ps(x + i + 16));
      m3 = _mm256_max_ps(m3, _mm256_loadu_ps(x + i + 24));
    }
    m = HorizontalMax(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
  }
#endif
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// y[i] = exp(x[i] - shift) for n values; returns their sum. y may equal x.
inline float ExpShiftStore(const float* x, float* y, int64_t n, float shift) {
  int64_t i = 0;
  float sum = 0.0f;
#ifdef INFERD_VEC_MATH_AVX2
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m256 e0 = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    const __m256 e1 = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
    _mm256_storeu_ps(y + i, e0);
    _mm256_storeu_ps(y + i + 8, e1);
    acc0 = _mm256_add_ps(acc0, e0);
    acc1 = _mm256_add_ps(acc1, e1);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(y + i, e);
    acc0 = _mm256_add_ps(acc0, e);
  }
  sum = HorizontalSum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) {
    y[i] = ExpScalar(x[i] - shift);
    sum += y[i];
  }
  return sum;
}

// sum of exp(x[i] - shift) over n values.
inline float ExpShiftSum(const float* x, int64_t n, float shift) {
  int64_t i = 0;
  float sum = 0.0f;
#ifdef INFERD_VEC_MATH_AVX2
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_add_ps(acc0, Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
    acc1 = _mm256_add_ps(acc1, Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s)));
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_add_ps(acc0, Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s)));
  }
  sum = HorizontalSum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) sum += ExpScalar(x[i] - shift);
  return sum;
}

// y[i] = exp(x[i] - shift[i]) for n values (per-column shifts; y may equal x).
inline void ExpShiftColumns(const float* x, const float* shift, float* y, int64_t n) {
  int64_t i = 0;
#ifdef INFERD_VEC_MATH_AVX2
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i,
                     Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(shift + i))));
  }
#endif
  for (; i < n; ++i) y[i] = ExpScalar(x[i] - shift[i]);
}

// y[i] = x[i] * scale for n values.
inline void Scale(const float* x, float* y, int64_t n, float scale) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
}

}  // namespace inferd::kernels::cpu::vec

#endif  // INFERD_KERNELS_CPU_VEC_MATH_H_

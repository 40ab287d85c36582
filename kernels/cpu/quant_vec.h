// Vector loops for per-tensor 8-bit quantization (QuantizeLinear, DequantizeLinear, QLinearAdd),
// with the arithmetic of the scalar code they replace (ONNX Runtime's):
//   q(f) = saturate(round_half_even(f / scale) + zero_point), in float32;
//   dq(v) = (v - zero_point) * scale.
// AVX2 where the build has it (x86-64-v3), 8 elements a step; plain loops otherwise and for the
// tails. Stateless functions: safe from any thread.
#ifndef INFERD_KERNELS_CPU_QUANT_VEC_H_
#define INFERD_KERNELS_CPU_QUANT_VEC_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace inferd::kernels::cpu::quant_vec {

template <typename Q>
inline Q QuantizeScalar(float v, float scale, float zero_point) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  float q = std::nearbyint(v / scale) + zero_point;
  q = q > hi ? hi : q;
  q = q >= lo ? q : lo;  // NaN too
  return static_cast<Q>(static_cast<int32_t>(q));
}

#if defined(__AVX2__)
// 8 bytes of Q widened to 8 floats.
template <typename Q>
inline __m256 Load8(const Q* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(std::is_signed_v<Q> ? _mm256_cvtepi8_epi32(b)
                                                : _mm256_cvtepu8_epi32(b));
}

// Stores q(v) for v = f / scale already divided: clamped to [lo - zp, hi - zp] (NaN to the low
// end: max_ps returns its second operand then), rounded half to even (cvtps_epi32 in the default
// rounding mode), the zero point added, packed to 8 bits.
template <typename Q>
inline void Store8(__m256 v, __m256 lo_minus_zp, __m256 hi_minus_zp, __m256i zp, Q* p) {
  v = _mm256_min_ps(_mm256_max_ps(v, lo_minus_zp), hi_minus_zp);
  const __m256i i = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
  const __m128i w =
      _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));  // in range
  const __m128i b = std::is_signed_v<Q> ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), b);
}
#endif

// y[i] = q(x[i]).
template <typename Q>
inline void Quantize(const float* x, int64_t n, float scale, int32_t zero_point, Q* y) {
  int64_t i = 0;
#if defined(__AVX2__)
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zero_point));
  const __m256i zp = _mm256_set1_epi32(zero_point);
  for (; i + 8 <= n; i += 8) {
    Store8(_mm256_div_ps(_mm256_loadu_ps(x + i), s), lo, hi, zp, y + i);
  }
#endif
  const float z = static_cast<float>(zero_point);
  for (; i < n; ++i) y[i] = QuantizeScalar<Q>(x[i], scale, z);
}

// y[i] = dq(x[i]).
template <typename Q>
inline void Dequantize(const Q* x, int64_t n, float scale, int32_t zero_point, float* y) {
  int64_t i = 0;
#if defined(__AVX2__)
  const __m256 s = _mm256_set1_ps(scale);
  const __m256 z = _mm256_set1_ps(static_cast<float>(zero_point));
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(Load8(x + i), z), s));
  }
#endif
  for (; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero_point) * scale;
}

// c[i] = q_c(dq_a(a[i]) + dq_b(b[i])).
template <typename Q>
inline void AddQuantized(const Q* a, const Q* b, int64_t n, float sa, int32_t za, float sb,
                         int32_t zb, float sc, int32_t zc, Q* c) {
  int64_t i = 0;
  const float fa = static_cast<float>(za), fb = static_cast<float>(zb);
#if defined(__AVX2__)
  const __m256 vsa = _mm256_set1_ps(sa), vsb = _mm256_set1_ps(sb), vsc = _mm256_set1_ps(sc);
  const __m256 vza = _mm256_set1_ps(fa), vzb = _mm256_set1_ps(fb);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::min() - zc));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<Q>::max() - zc));
  const __m256i zp = _mm256_set1_epi32(zc);
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_mul_ps(_mm256_sub_ps(Load8(a + i), vza), vsa);
    const __m256 y = _mm256_mul_ps(_mm256_sub_ps(Load8(b + i), vzb), vsb);
    Store8(_mm256_div_ps(_mm256_add_ps(x, y), vsc), lo, hi, zp, c + i);
  }
#endif
  const float z = static_cast<float>(zc);
  for (; i < n; ++i) {
    const float x = (static_cast<float>(a[i]) - fa) * sa;
    const float y = (static_cast<float>(b[i]) - fb) * sb;
    c[i] = QuantizeScalar<Q>(x + y, sc, z);
  }
}

}  // namespace inferd::kernels::cpu::quant_vec

#endif  // INFERD_KERNELS_CPU_QUANT_VEC_H_

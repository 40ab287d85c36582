// Float32 exp, expm1, tanh, sigmoid and erf written so that a loop calling them vectorizes (no libm
// calls, no branches: both sides of each range split are computed and one is selected). Internal
// to //kernels/cpu; pure functions; thread-safe.
//
// Accuracy (checked against double precision over sweeps in fast_math_test): relative error
// below 1e-6 for FastExp, FastExpM1, FastSigmoid and FastTanh on their whole range, and for FastErf
// (absolute below 1e-7 near 0); results flush to zero where the true value is a float subnormal
// (below FLT_MIN, about 1.2e-38: FastExp returns 0 for x < ln FLT_MIN). NaN propagates; +-inf
// give the limits.
//
// Example:
//   for (int64_t i = 0; i < n; ++i) y[i] = FastTanh(x[i]);  // vectorized by the compiler
#ifndef INFERD_KERNELS_CPU_FAST_MATH_H_
#define INFERD_KERNELS_CPU_FAST_MATH_H_

#include <cstdint>
#include <cstring>

// Always inlined: a call inside an `omp simd` loop clobbers memory and keeps the loop scalar,
// which GCC's inliner allowed in kernels with many loops (com.microsoft Gelu ran 5x slower than
// ONNX's Erf on the same tensor).
#define INFERD_FAST_MATH inline __attribute__((always_inline))

namespace inferd::kernels::cpu {
namespace fast_math_internal {

inline float Bits2Float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint32_t Float2Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float Min(float a, float b) { return b < a ? b : a; }  // NaN in `a` stays
inline float Max(float a, float b) { return a < b ? b : a; }  // NaN in `a` stays

// 2^n for n in [-126, 127], built from the exponent bits.
inline float Pow2(int32_t n) { return Bits2Float(static_cast<uint32_t>(n + 127) << 23); }

}  // namespace fast_math_internal

// e^x. Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, then Cephes' degree-7 polynomial for
// e^r, scaled by 2^n in two steps so that results down to the subnormal range are right.
INFERD_FAST_MATH float FastExp(float x) {
  namespace in = fast_math_internal;
  const bool nan = x != x;
  // Past 89 the result is inf, below -104 it is 0, both through the scaling below.
  const float xc = in::Min(in::Max(nan ? 0.0f : x, -104.0f), 89.0f);
  // n = round(x / ln2) with the 1.5 * 2^23 trick (no float-to-int conversion of a big value).
  constexpr float kShift = 12582912.0f;
  const float shifted = xc * 1.44269504088896341f + kShift;
  const int32_t n = static_cast<int32_t>(in::Float2Bits(shifted) - in::Float2Bits(kShift));
  const float fn = shifted - kShift;
  float r = xc - fn * 0.693359375f;  // ln2 split: hi part exact for |n| < 2^14
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t n1 = n / 2;  // n in [-150, 128]: both halves stay in the normal exponent range
  const float y = p * in::Pow2(n1) * in::Pow2(n - n1);
  // Below ln(FLT_MIN) the result would be subnormal: 0 instead, as vec_math.h's exp does. A
  // subnormal is within 1.2e-38 of 0, and arithmetic on one is slow on x86 (vec_math.h says what
  // that cost).
  return nan ? x : (xc < -87.3365448f ? 0.0f : y);
}

// e^x - 1: the Taylor series to x^7 for |x| < 0.25 (no cancellation near 0), else FastExp - 1.
INFERD_FAST_MATH float FastExpM1(float x) {
  float p = 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  const float small = x + x * x * p;
  const float large = FastExp(x) - 1.0f;
  return (x < 0.25f && x > -0.25f) ? small : large;
}

// 1 / (1 + e^-x).
INFERD_FAST_MATH float FastSigmoid(float x) { return 1.0f / (1.0f + FastExp(-x)); }

// tanh x: Cephes' odd polynomial for |x| < 0.625, else 1 - 2 / (e^2|x| + 1) with the sign of x.
INFERD_FAST_MATH float FastTanh(float x) {
  namespace in = fast_math_internal;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = x + x * z * p;
  const float ax = in::Min(x < 0.0f ? -x : x, 9.5f);  // tanh(9.5) rounds to 1; NaN stays
  const float large = 1.0f - 2.0f / (FastExp(2.0f * ax) + 1.0f);
  const float ax_orig = x < 0.0f ? -x : x;
  return ax_orig < 0.625f ? small : (x < 0.0f ? -large : large);
}

// erf x: the odd Taylor series to x^11 for |x| < 0.5; else 1 - erfc|x| with the Chebyshev fit of
// Numerical Recipes (erfcc, fractional error < 1.2e-7), |x| capped at 4 (erf = 1 in float).
INFERD_FAST_MATH float FastErf(float x) {
  namespace in = fast_math_internal;
  const float z = x * x;
  // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
  float p = -8.54832702e-4f;
  p = p * z + 5.22397762e-3f;
  p = p * z - 2.68661706e-2f;
  p = p * z + 1.12837917e-1f;
  p = p * z - 3.76126389e-1f;
  p = p * z + 1.12837917e+0f;
  const float small = x * p;
  const float ax_orig = x < 0.0f ? -x : x;
  const float ax = in::Min(ax_orig, 4.0f);  // NaN stays
  const float t = 1.0f / (1.0f + 0.5f * ax);
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  const float erfc = t * FastExp(q - ax * ax);
  const float large = 1.0f - erfc;
  return ax_orig < 0.5f ? small : (x < 0.0f ? -large : large);
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_FAST_MATH_H_

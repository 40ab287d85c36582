// 16-bit floating-point element types for the CPU kernels (internal to //kernels/cpu): IEEE half
// (float16) and bfloat16, stored as their bits, converted through float. float -> float16 rounds
// to nearest even (F16C when the target has it, as x86-64-v3 does); float -> bfloat16 truncates,
// as the ONNX reference (and its backend test data) does. Value types; thread-safe.
#ifndef INFERD_KERNELS_CPU_FLOAT16_H_
#define INFERD_KERNELS_CPU_FLOAT16_H_

#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace inferd::kernels::cpu {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Portable conversions (what HalfToFloat / FloatToHalf do without F16C).
inline float HalfToFloatPortable(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return BitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24, exact in float.
  const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
  return sign != 0 ? -v : v;
}

inline uint16_t FloatToHalfPortable(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (quiet)
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds past the largest half: inf
  if (abs < 0x38800000u) {                        // below the smallest normal half
    // Subnormal half: round abs * 2^24 to the nearest integer, ties to even, by adding 0.5 in
    // float arithmetic (which rounds to nearest even).
    const float scaled = BitsToFloat(abs) * 16777216.0f;  // exact
    const float r = scaled + 8388608.0f - 8388608.0f;     // nearest-even integer (< 2^10)
    return sign | static_cast<uint16_t>(r);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - (112u << 23)) >> 13);
}

inline float HalfToFloat(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return HalfToFloatPortable(h);
#endif
}

inline uint16_t FloatToHalf(float f) {
#if defined(__F16C__)
  return static_cast<uint16_t>(_cvtss_sh(f, 0));  // 0: round to nearest even
#else
  return FloatToHalfPortable(f);
#endif
}

inline float BFloat16ToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }
inline uint16_t FloatToBFloat16(float f) { return static_cast<uint16_t>(FloatBits(f) >> 16); }

// Element types that hold the bits; arithmetic goes through float.
struct Float16 {
  uint16_t bits;
  static Float16 From(float f) { return Float16{FloatToHalf(f)}; }
  float ToFloat() const { return HalfToFloat(bits); }
};

struct BFloat16 {
  uint16_t bits;
  static BFloat16 From(float f) { return BFloat16{FloatToBFloat16(f)}; }
  float ToFloat() const { return BFloat16ToFloat(bits); }
};

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2, "16-bit element types");

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_FLOAT16_H_

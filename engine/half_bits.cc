#include "engine/half_bits.h"

#include <cstring>

namespace inferd::engine {

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf, NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else {
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // zero, subnormal: exact
    return sign != 0 ? -v : v;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float BFloat16BitsToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace inferd::engine

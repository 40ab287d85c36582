#include "engine/float8.h"

#include <cmath>
#include <limits>

namespace inferd::engine {
namespace {

struct Format {
  int mantissa_bits;
  int bias;
  bool has_inf;        // e5m2: the top exponent holds infinity and NaNs
  bool unsigned_zero;  // the fnuz types: 0x80 is the only NaN, no -0
  uint8_t max_bits;    // the largest finite magnitude's bits
};

bool FormatOf(DataType t, Format* f) {
  switch (t) {
    case DataType::kFloat8E4M3FN:
      *f = {3, 7, false, false, 0x7E};
      return true;
    case DataType::kFloat8E4M3FNUZ:
      *f = {3, 8, false, true, 0x7F};
      return true;
    case DataType::kFloat8E5M2:
      *f = {2, 15, true, false, 0x7B};
      return true;
    case DataType::kFloat8E5M2FNUZ:
      *f = {2, 16, false, true, 0x7F};
      return true;
    default:
      return false;
  }
}

bool IsNaNBits(uint8_t b, const Format& f) {
  if (f.unsigned_zero) return b == 0x80;
  if (f.has_inf) return (b & 0x7C) == 0x7C && (b & 0x03) != 0;
  return (b & 0x7F) == 0x7F;
}

// The magnitude of bits b & 0x7F (not a NaN or infinity).
double Magnitude(uint8_t b, const Format& f) {
  const int m = f.mantissa_bits;
  const int exponent = (b & 0x7F) >> m;
  const int mantissa = b & ((1 << m) - 1);
  if (exponent == 0) return std::ldexp(mantissa, 1 - f.bias - m);
  return std::ldexp((1 << m) + mantissa, exponent - f.bias - m);
}

}  // namespace

float Float8ToFloat(uint8_t bits, DataType type) {
  Format f;
  if (!FormatOf(type, &f) || IsNaNBits(bits, f)) return std::numeric_limits<float>::quiet_NaN();
  const bool negative = (bits & 0x80) != 0;
  if (f.has_inf && (bits & 0x7F) == 0x7C) {
    return negative ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  }
  const float v = static_cast<float>(Magnitude(bits, f));  // exact
  return negative ? -v : v;
}

uint8_t FloatToFloat8(float v, DataType type, bool saturate) {
  Format f;
  if (!FormatOf(type, &f)) return 0;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const uint8_t nan = f.unsigned_zero ? 0x80 : static_cast<uint8_t>(sign | 0x7F);
  if (std::isnan(v)) return nan;
  // What an out-of-range value becomes.
  const uint8_t overflow = saturate    ? static_cast<uint8_t>(sign | f.max_bits)
                           : f.has_inf ? static_cast<uint8_t>(sign | 0x7C)
                                       : nan;
  if (std::isinf(v)) return overflow;
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0) return f.unsigned_zero ? 0x00 : sign;
  // The spacing of representable values at a: 2^(e - m) for a in [2^e, 2^(e+1)), normal or
  // not; the subnormal spacing below the smallest normal 2^(1 - bias).
  const int m = f.mantissa_bits;
  int e = std::ilogb(a);
  if (e < 1 - f.bias) e = 1 - f.bias;
  const double quantum = std::ldexp(1.0, e - m);
  // a / quantum is exact (a power-of-two scale of a float); nearbyint rounds half to even in the
  // default rounding mode, which is the mantissa's last bit being even.
  const double steps = std::nearbyint(a / quantum);
  const double rounded = steps * quantum;
  if (rounded > Magnitude(f.max_bits, f)) return overflow;
  if (steps == 0) return f.unsigned_zero ? 0x00 : sign;
  // Encode `rounded` (representable): its exponent may be one more than e after rounding up.
  int exponent = std::ilogb(rounded);
  uint8_t bits;
  if (exponent < 1 - f.bias) {
    bits = static_cast<uint8_t>(steps);  // subnormal: the steps are the mantissa
  } else {
    const int mantissa = static_cast<int>(std::ldexp(rounded, m - exponent)) - (1 << m);  // exact
    bits = static_cast<uint8_t>(((exponent + f.bias) << m) | mantissa);
  }
  return static_cast<uint8_t>(sign | bits);
}

}  // namespace inferd::engine

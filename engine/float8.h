// The four 8-bit float element types of ONNX (opset 19) as bits <-> float32: decoding is exact,
// encoding rounds to nearest even, with the out-of-range rules of Cast's `saturate` attribute.
// Pure functions; thread-safe. Used by the Cast / CastLike / QuantizeLinear / DequantizeLinear
// kernels and by test-data comparisons.
//
//   type            bias  max     infinity      NaN            negative zero
//   float8e4m3fn      7   448     none          S.1111.111     yes
//   float8e4m3fnuz    8   240     none          0x80 only      no
//   float8e5m2       15   57344   S.11111.00    S.11111.{01,10,11}  yes
//   float8e5m2fnuz   16   57344   none          0x80 only      no
//
// Encoding float v (saturate = s):
//   NaN                      -> the type's NaN (sign kept where the type has signed NaNs)
//   +-infinity, or |v| beyond the largest finite value after rounding
//                            -> s ? +-max : (e5m2: +-infinity; others: NaN)
//   otherwise                -> the nearest value, ties to an even mantissa; a zero keeps its
//                               sign except in the fnuz types (0x00)
#ifndef INFERD_ENGINE_FLOAT8_H_
#define INFERD_ENGINE_FLOAT8_H_

#include <cstdint>

#include "engine/data_type.h"

namespace inferd::engine {

// `type` must be one of the four float8 types (IsFloat8); bits of another type decode as NaN.
float Float8ToFloat(uint8_t bits, DataType type);
uint8_t FloatToFloat8(float v, DataType type, bool saturate);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_FLOAT8_H_

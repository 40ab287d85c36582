// The value of float16 / bfloat16 bits as a float (exact: every such value is a float). For the
// engine's load-time conversions (engine/precision_widening.h) and test-data comparisons; kernels
// use kernels/cpu/float16.h. Pure functions; thread-safe. A target of its own so that the many
// users of engine/data_type.h are not rebuilt for it.
#ifndef INFERD_ENGINE_HALF_BITS_H_
#define INFERD_ENGINE_HALF_BITS_H_

#include <cstdint>

namespace inferd::engine {

float HalfBitsToFloat(uint16_t h);
float BFloat16BitsToFloat(uint16_t b);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_HALF_BITS_H_

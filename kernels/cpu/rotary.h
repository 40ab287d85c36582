// Rotary position embedding of one head vector, shared by com.microsoft RotaryEmbedding and
// GroupQueryAttention's do_rotary (docs/genai-ops.md). Pure functions; thread-safe.
//
// With half = rotary_dim / 2 and cos/sin the cache rows of the position (half values each):
//   non-interleaved: pairs (x[i], x[i + half]);  interleaved: pairs (x[2i], x[2i + 1]);
//   each pair (a, b) becomes (a cos_i - b sin_i, b cos_i + a sin_i).
// Elements past rotary_dim are copied unchanged. `src` and `dst` may be the same vector.
#ifndef INFERD_KERNELS_CPU_ROTARY_H_
#define INFERD_KERNELS_CPU_ROTARY_H_

#include <cstdint>

namespace inferd::kernels::cpu {

inline void RotateHead(const float* src, const float* cos, const float* sin, int64_t head_size,
                       int64_t rotary_dim, bool interleaved, float* dst) {
  const int64_t half = rotary_dim / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; ++i) {
      const float a = src[2 * i], b = src[2 * i + 1];
      dst[2 * i] = a * cos[i] - b * sin[i];
      dst[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < half; ++i) {
      const float a = src[i], b = src[i + half];
      dst[i] = a * cos[i] - b * sin[i];
      dst[i + half] = b * cos[i] + a * sin[i];
    }
  }
  if (dst != src) {
    for (int64_t i = rotary_dim; i < head_size; ++i) dst[i] = src[i];
  }
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_ROTARY_H_

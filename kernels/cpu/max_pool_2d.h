// The own 2-D MaxPool loops of the CPU pooling kernel (pool.cc): over plain NCHW planes, and
// over channels-last 8-bit tensors (the quantized CNNs' activations between convolutions,
// engine/int8_channels_last.h). Stateless; each call splits its work over the given pool.
#ifndef INFERD_KERNELS_CPU_MAX_POOL_2D_H_
#define INFERD_KERNELS_CPU_MAX_POOL_2D_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "engine/shape.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {

// MaxPool over 2-D planes (float32, uint8, int8) in plain loops (oneDNN's pooling on plain NCHW,
// the layout our tensors have, is a slow reference path): each output takes the max of its window's
// positions inside the input (padding never wins, as in ONNX). Planes are split over the pool's
// threads. Rows up to this wide take the row-first path (its buffer is on the stack).
constexpr int64_t kRowBuffer = 2048;

template <typename T>
void MaxPool2D(const T* x, T* y, int64_t planes, const engine::Shape& in, const engine::Shape& out,
               const WindowGeometry& w, engine::ThreadPool& pool) {
  constexpr T kLowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::lowest();
  const int64_t H = in[2], W = in[3], OH = out[2], OW = out[3];
  const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1], ph = w.pad_begin[0], pw = w.pad_begin[1];
  const bool simple = kh == 2 && kw == 2 && sh == 2 && sw == 2 && dh == 1 && dw == 1 && ph == 0 &&
                      pw == 0 && 2 * OH <= H && 2 * OW <= W;
  pool.ParallelFor(planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, OH * OW)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t p = begin; p < end; ++p) {
                       const T* xp = x + p * H * W;
                       T* yp = y + p * OH * OW;
                       for (int64_t oh = 0; oh < OH; ++oh) {
                         if (simple) {  // the common 2x2 stride-2 case: two rows, no bounds checks
                           const T* r0 = xp + 2 * oh * W;
                           const T* r1 = r0 + W;
                           for (int64_t ow = 0; ow < OW; ++ow) {
                             yp[oh * OW + ow] = std::max(std::max(r0[2 * ow], r0[2 * ow + 1]),
                                                         std::max(r1[2 * ow], r1[2 * ow + 1]));
                           }
                           continue;
                         }
                         // Rows first, vectorized along the row: colmax[c] is the max of the
                         // window's rows at column c; then each output takes the max of its
                         // kw columns, with no bounds checks inside the image. (Per element
                         // with checks, resnet18's 3x3 stride-2 pool took 2.1 ms; 0.84 ms so.)
                         const int64_t h0 = oh * sh - ph;
                         if (W <= kRowBuffer) {
                           T colmax[kRowBuffer];
                           std::fill(colmax, colmax + W, kLowest);
                           for (int64_t i = 0; i < kh; ++i) {
                             const int64_t h = h0 + i * dh;
                             if (h < 0 || h >= H) continue;
                             const T* row = xp + h * W;
#pragma omp simd
                             for (int64_t c = 0; c < W; ++c)
                               colmax[c] = std::max(colmax[c], row[c]);
                           }
                           T* yrow = yp + oh * OW;
                           for (int64_t ow = 0; ow < OW; ++ow) {
                             const int64_t w0 = ow * sw - pw;
                             T m = kLowest;
                             if (w0 >= 0 && w0 + (kw - 1) * dw < W) {
                               for (int64_t j = 0; j < kw; ++j)
                                 m = std::max(m, colmax[w0 + j * dw]);
                             } else {
                               for (int64_t j = 0; j < kw; ++j) {
                                 const int64_t c = w0 + j * dw;
                                 if (c >= 0 && c < W) m = std::max(m, colmax[c]);
                               }
                             }
                             yrow[ow] = m;
                           }
                           continue;
                         }
                         for (int64_t ow = 0; ow < OW; ++ow) {
                           const int64_t w0 = ow * sw - pw;
                           T m = kLowest;
                           for (int64_t i = 0; i < kh; ++i) {
                             const int64_t h = h0 + i * dh;
                             if (h < 0 || h >= H) continue;
                             const T* row = xp + h * W;
                             for (int64_t j = 0; j < kw; ++j) {
                               const int64_t c = w0 + j * dw;
                               if (c >= 0 && c < W) m = std::max(m, row[c]);
                             }
                           }
                           yp[oh * OW + ow] = m;
                         }
                       }
                     }
                   });
}

// y[c] = max(y[c], x[c]) for c in [0, n): 32 bytes a step with AVX2 for the 8-bit types (the
// compiler's cheap vectorization at -O2 leaves this loop scalar: x and y may alias).
template <typename T>
inline void MaxInto(T* y, const T* x, int64_t n) {
  int64_t c = 0;
#if defined(__AVX2__)
  if constexpr (sizeof(T) == 1) {
    for (; c + 32 <= n; c += 32) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + c));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + c));
      const __m256i m = std::is_signed_v<T> ? _mm256_max_epi8(a, b) : _mm256_max_epu8(a, b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + c), m);
    }
  }
#endif
  for (; c < n; ++c) y[c] = std::max(y[c], x[c]);
}

// MaxPool over a 2-D channels-last tensor ([N][H][W][C] in memory, dims N, C, H, W as `in` and
// `out` say): each output position takes, channel by channel, the max of its window's positions
// inside the input; the channel vector is the inner loop. Output rows are split over the pool's
// threads.
template <typename T>
void MaxPool2DChannelsLast(const T* x, T* y, const engine::Shape& in, const engine::Shape& out,
                           const WindowGeometry& w, engine::ThreadPool& pool) {
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1], ph = w.pad_begin[0], pw = w.pad_begin[1];
  pool.ParallelFor(N * OH, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, OW * C)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t n = r / OH, oh = r % OH;
                       const T* xn = x + n * H * W * C;
                       T* yrow = y + r * OW * C;
                       for (int64_t ow = 0; ow < OW; ++ow) {
                         T* yp = yrow + ow * C;
                         bool first = true;
                         for (int64_t i = 0; i < kh; ++i) {
                           const int64_t h = oh * sh - ph + i * dh;
                           if (h < 0 || h >= H) continue;
                           for (int64_t j = 0; j < kw; ++j) {
                             const int64_t c0 = ow * sw - pw + j * dw;
                             if (c0 < 0 || c0 >= W) continue;
                             const T* xp = xn + (h * W + c0) * C;
                             if (first) {
                               std::memcpy(yp, xp, C * sizeof(T));
                               first = false;
                               continue;
                             }
                             MaxInto(yp, xp, C);
                           }
                         }
                         if (first) std::fill(yp, yp + C, std::numeric_limits<T>::lowest());
                       }
                     }
                   });
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_MAX_POOL_2D_H_

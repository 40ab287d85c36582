// com.microsoft MatMulNBits (ONNX Runtime's contrib op, written by its quantizer and by the
// onnxruntime-genai model builder for int4 weights): Y = A x dequant(B)^T (+ bias), float32.
//
//   A [..., K]; B uint8 [N, k_blocks, block_size / 2] (two 4-bit values a byte, the low nibble
//   first); scales float [N * k_blocks] (or [N, k_blocks]); zero_points optional: uint8 packed
//   two a byte ([N * ceil(k_blocks / 2)]) or float [N * k_blocks]; absent means 8. An element
//   is (q - zero_point) * scale. K need not be a multiple of block_size (the last block is
//   padded in B). accuracy_level 4 with constant B (and no float zero points) and M <= 4 takes
//   the int8 path below, as ONNX Runtime does; other levels, and larger M (prefill, where the
//   float32 sgemm is faster here), compute in float32.
//   bits other than 4 and g_idx (act-order) are refused at creation.
//
// Float paths (docs/genai-ops.md):
//   - M <= kDecodeRows (token-by-token decode): each column is dequantized on the fly block by
//     block and dotted with A's rows (AVX2 + FMA where compiled for it); the intra-op pool splits
//     N. Zero points are folded out of the inner loop: sum((q - z) * s * a) is
//     s * sum(q * a) - s * z * sum(a), with sum(a) per block computed once per run.
//   - larger M (prefill): panels of kPanel columns, each dequantized into a float32 workspace
//     and multiplied by a one-thread oneDNN sgemm, the intra-op threads taking panels in turn.
// Workspaces are declared (block sums or the panel), so a warmed-up run allocates nothing.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define INFERD_NBITS_AVX2 1
#endif

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "dnnl.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kDecodeRows = 4;  // M up to this takes the on-the-fly path
constexpr int64_t kPanel = 128;     // columns dequantized at a time on the GEMM path
constexpr int kBlockSums = 0;       // workspace slots
constexpr int kPanelSlot = 1;
constexpr int kQuantASlot = 2;  // level 4: A's scales, scaled sums and int8 rows

// The zero points' form.
enum class ZeroPoints { kNone, kPacked, kFloat };

struct Quant {
  const uint8_t* b = nullptr;     // [N, k_blocks, blob]
  const float* scales = nullptr;  // [N, k_blocks]
  const uint8_t* zp_packed = nullptr;
  const float* zp_float = nullptr;
  int64_t k = 0, n = 0, block = 0, blocks = 0, blob = 0, zp_row = 0;

  float Zero(int64_t col, int64_t blk) const {
    if (zp_packed != nullptr) {
      const uint8_t v = zp_packed[col * zp_row + blk / 2];
      return static_cast<float>((blk & 1) ? (v >> 4) : (v & 0x0F));
    }
    if (zp_float != nullptr) return zp_float[col * blocks + blk];
    return 8.0f;
  }
};

// Dequantizes column `col` of B into `dst` (K floats).
void DequantizeColumn(const Quant& q, int64_t col, float* dst) {
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const uint8_t* src = q.b + (col * q.blocks + blk) * q.blob;
    const float s = q.scales[col * q.blocks + blk];
    const float z = q.Zero(col, blk);
    const int64_t k0 = blk * q.block, len = std::min(q.block, q.k - k0);
    float* out = dst + k0;
    const int64_t pairs = len / 2;
#pragma omp simd
    for (int64_t j = 0; j < pairs; ++j) {
      out[2 * j] = (static_cast<float>(src[j] & 0x0F) - z) * s;
      out[2 * j + 1] = (static_cast<float>(src[j] >> 4) - z) * s;
    }
    if (len & 1) out[len - 1] = (static_cast<float>(src[pairs] & 0x0F) - z) * s;
  }
}

// sum(q * a) over `len` elements of one block (q unpacked from `src`), for `rows` rows of A
// (row r at a + r * lda), added to acc[r] (vector accumulators on AVX2).
#ifdef INFERD_NBITS_AVX2
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
  return _mm_cvtss_f32(s);
}
#endif

// One column's dot products with kRows rows of A: out[r] = sum_k a[r][k] * w[k], w the
// dequantized column. kRows is a template argument so that the accumulators live in registers
// (with a run-time row count the compiler kept them on the stack, and every FMA waited on a
// store and a reload: 20 ms per token instead of a few on an 8-layer 512-wide model).
template <int kRows>
void DecodeColumnRows(const Quant& q, int64_t col, const float* a, const float* block_sums,
                      float* out) {
  float corr[kRows] = {};  // -sum over blocks of s * z * sum(a in block), plus scalar tails
#ifdef INFERD_NBITS_AVX2
  __m256 total[kRows];
  for (int r = 0; r < kRows; ++r) total[r] = _mm256_setzero_ps();
  const __m128i low_mask = _mm_set1_epi8(0x0F);
#else
  float total[kRows] = {};
#endif
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const uint8_t* src = q.b + (col * q.blocks + blk) * q.blob;
    const float s = q.scales[col * q.blocks + blk];
    const float z = q.Zero(col, blk);
    const int64_t k0 = blk * q.block, len = std::min(q.block, q.k - k0);
    for (int r = 0; r < kRows; ++r) corr[r] -= s * z * block_sums[r * q.blocks + blk];
    int64_t j = 0;  // element within the block
#ifdef INFERD_NBITS_AVX2
    // Two accumulators a row (the low and high 8 elements of each 16), summed per block.
    __m256 acc0[kRows], acc1[kRows];
    for (int r = 0; r < kRows; ++r) acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (; j + 32 <= len; j += 32) {
      // 16 bytes -> 32 nibbles in element order (low nibble first).
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j / 2));
      const __m128i lo = _mm_and_si128(bytes, low_mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
      const __m128i n0 = _mm_unpacklo_epi8(lo, hi), n1 = _mm_unpackhi_epi8(lo, hi);
      const __m256 w0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(n0));
      const __m256 w1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(n0, 8)));
      const __m256 w2 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(n1));
      const __m256 w3 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(n1, 8)));
      for (int r = 0; r < kRows; ++r) {
        const float* ar = a + r * q.k + k0 + j;
        acc0[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(ar), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(ar + 8), acc1[r]);
        acc0[r] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(ar + 16), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(ar + 24), acc1[r]);
      }
    }
    for (; j + 16 <= len; j += 16) {
      // 8 bytes -> 16 nibbles.
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + j / 2));
      const __m128i lo = _mm_and_si128(bytes, low_mask);
      const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low_mask);
      const __m128i nib = _mm_unpacklo_epi8(lo, hi);
      const __m256 w0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(nib));
      const __m256 w1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(nib, 8)));
      for (int r = 0; r < kRows; ++r) {
        const float* ar = a + r * q.k + k0 + j;
        acc0[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(ar), acc0[r]);
        acc1[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(ar + 8), acc1[r]);
      }
    }
    const __m256 sv = _mm256_set1_ps(s);
    for (int r = 0; r < kRows; ++r) {
      total[r] = _mm256_fmadd_ps(_mm256_add_ps(acc0[r], acc1[r]), sv, total[r]);
    }
#endif
    for (; j < len; ++j) {  // the tail (or everything without AVX2)
      const uint8_t v = src[j / 2];
      const float w = static_cast<float>((j & 1) ? (v >> 4) : (v & 0x0F)) * s;
      for (int r = 0; r < kRows; ++r) corr[r] += w * a[r * q.k + k0 + j];
    }
  }
  for (int r = 0; r < kRows; ++r) {
#ifdef INFERD_NBITS_AVX2
    out[r] = HorizontalSum(total[r]) + corr[r];
#else
    out[r] = total[r] + corr[r];
#endif
  }
}

void DecodeColumn(const Quant& q, int64_t col, const float* a, int64_t rows,
                  const float* block_sums, float* out) {
  static_assert(kDecodeRows == 4, "DecodeColumn dispatches rows 1 to 4");
  switch (rows) {
    case 1:
      return DecodeColumnRows<1>(q, col, a, block_sums, out);
    case 2:
      return DecodeColumnRows<2>(q, col, a, block_sums, out);
    case 3:
      return DecodeColumnRows<3>(q, col, a, block_sums, out);
    default:
      return DecodeColumnRows<4>(q, col, a, block_sums, out);
  }
}

// ---- accuracy_level 4: int8 A x int4 B with integer dot products (docs/genai-ops.md) ----
//
// Each row of A is quantized per block of K (ONNX Runtime's CompInt8 scheme): scale =
// max|a| / 127, q = round-to-nearest-even(a * (127 / max|a|)) (0 where the block is all zero),
// padded with zeros to whole blocks. Per column and block, dot = sum(qa * qb) in int32 with qb
// the raw 4-bit value (0..15), and
//   y = sum over blocks of a_scale * b_scale * dot - (a_scale * sum(qa)) * (b_scale * zero).
// For the SIMD paths B is repacked at creation by groups of 8 columns: a 32-byte chunk holds,
// for each of the 8 columns, 4 consecutive K values in the low nibbles and the next 4 in the
// high nibbles. One vpdpbusd then multiplies 4 K values of all 8 columns (its 8 int32 lanes) by
// the same 4 int8 values of A (broadcast), so a block's dots for 8 columns end in one vector,
// scaled by the 8 columns' scales (also repacked) with no horizontal sums. The dot runs on
// AVX-VNNI or AVX-512 VNNI (vpdpbusd) where the CPU has it, else AVX2 (vpmaddubsw: u8 x s8 pairs,
// 15 * 127 * 2 = 3810 fits int16, then vpmaddwd), else scalar (also used where the scales or
// zero points are not constant).

enum class Int8Isa { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

// The best path this CPU runs; INFERD_NBITS_ISA=scalar|avx2|avxvnni|avx512vnni asks for one
// (tests and benchmarks), honoured only where the CPU has it.
Int8Isa PickInt8Isa() {
  Int8Isa best = Int8Isa::kScalar;
#ifdef INFERD_NBITS_AVX2
  const bool avx512vnni = __builtin_cpu_supports("avx512vnni") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  const bool avxvnni = __builtin_cpu_supports("avxvnni");
  best = avx512vnni ? Int8Isa::kAvx512Vnni : avxvnni ? Int8Isa::kAvxVnni : Int8Isa::kAvx2;
  if (const char* env = std::getenv("INFERD_NBITS_ISA"); env != nullptr) {
    const std::string want = env;
    if (want == "scalar") return Int8Isa::kScalar;
    if (want == "avx2") return Int8Isa::kAvx2;
    if (want == "avxvnni" && avxvnni) return Int8Isa::kAvxVnni;
    if (want == "avx512vnni" && avx512vnni) return Int8Isa::kAvx512Vnni;
  }
#endif
  return best;
}

// A's rows quantized per block (the run's workspace).
struct QuantA {
  const int8_t* q = nullptr;          // [M, blocks * block], zero padded
  const float* scale = nullptr;       // [M, blocks]
  const float* scaled_sum = nullptr;  // [M, blocks]: scale * sum(q)
  int64_t row = 0;                    // blocks * block
};

// Quantizes `len` values of `a` into `q` (block values, the tail zeroed); returns sum(q) and
// sets *scale.
int32_t QuantizeBlock(const float* a, int64_t len, int64_t block, int8_t* q, float* scale) {
  float amax = 0.0f;
  for (int64_t j = 0; j < len; ++j) amax = std::max(amax, std::fabs(a[j]));
  *scale = amax / 127.0f;
  const float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
  int32_t sum = 0;
  int64_t j = 0;
#ifdef INFERD_NBITS_AVX2
  const __m256 mul = _mm256_set1_ps(inv);
  __m256i acc = _mm256_setzero_si256();
  for (; j + 16 <= len; j += 16) {
    const __m256 v0 = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(a + j), mul),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 v1 = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(a + j + 8), mul),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i i0 = _mm256_cvtps_epi32(v0), i1 = _mm256_cvtps_epi32(v1);
    acc = _mm256_add_epi32(acc, _mm256_add_epi32(i0, i1));
    // int32 -> int16 (saturating, lanes interleaved) -> int8, then back in order.
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(i0, i1), 0xD8);
    const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + j), b);
  }
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
  sum = _mm_cvtsi128_si32(s4);
#endif
  for (; j < len; ++j) {
    const float r = std::nearbyint(a[j] * inv);  // the default mode: to nearest, ties to even
    const int32_t v = static_cast<int32_t>(std::clamp(r, -127.0f, 127.0f));
    q[j] = static_cast<int8_t>(v);
    sum += v;
  }
  std::memset(q + len, 0, static_cast<size_t>(block - len));
  return sum;
}

constexpr int64_t kGroupCols = 8;  // columns per packed group

// The level-4 inputs of one run.
struct Int8Args {
  const Quant* q = nullptr;
  const uint8_t* packed = nullptr;  // B by groups (above), [groups, blocks, 4 * block]
  const float* bs = nullptr;        // scales by groups, [groups, blocks, 8]
  const float* zs = nullptr;        // scale * zero point by groups, [groups, blocks, 8]
  QuantA a;
  int64_t m = 0;
  float* y = nullptr;  // [M, N]
};

// Scalar path: from B, scales and zero points as given (low nibble first).
void Int8ColumnsScalar(const Int8Args& p, int64_t begin, int64_t end) {
  const Quant& q = *p.q;
  for (int64_t col = begin; col < end; ++col) {
    for (int64_t r = 0; r < p.m; ++r) {
      const int8_t* qa = p.a.q + r * p.a.row;
      float total = 0.0f, corr = 0.0f;
      for (int64_t blk = 0; blk < q.blocks; ++blk) {
        const uint8_t* src = q.b + (col * q.blocks + blk) * q.blob;
        const int8_t* ab = qa + blk * q.block;
        const int64_t len = std::min(q.block, q.k - blk * q.block);
        int32_t dot = 0;
        for (int64_t j = 0; j < len; ++j) {
          const int32_t w = (j & 1) ? (src[j / 2] >> 4) : (src[j / 2] & 0x0F);
          dot += w * ab[j];
        }
        const float s = q.scales[col * q.blocks + blk];
        total += static_cast<float>(dot) * (p.a.scale[r * q.blocks + blk] * s);
        corr += p.a.scaled_sum[r * q.blocks + blk] * (s * q.Zero(col, blk));
      }
      p.y[r * q.n + col] = total - corr;
    }
  }
}

#ifdef INFERD_NBITS_AVX2
struct Avx2Dot {
  static inline __m256i Dot(__m256i acc, __m256i b, __m256i a) {
    const __m256i pairs = _mm256_maddubs_epi16(b, a);  // u8 x s8, |pair| <= 3810: no saturation
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};
struct AvxVnniDot {
  __attribute__((target("avxvnni"))) static inline __m256i Dot(__m256i acc, __m256i b, __m256i a) {
    return _mm256_dpbusd_avx_epi32(acc, b, a);
  }
};
struct Avx512VnniDot {
  __attribute__((target("avx512vnni,avx512vl,avx512bw,avx512f"))) static inline __m256i Dot(
      __m256i acc, __m256i b, __m256i a) {
    return _mm256_dpbusd_epi32(acc, b, a);
  }
};

inline __m256i Broadcast4(const int8_t* a) {
  int32_t v;
  std::memcpy(&v, a, sizeof(v));
  return _mm256_set1_epi32(v);
}

// kGroups groups of 8 columns from `g0`, kRows rows. Two dot chains a group and row (low and
// high nibbles) and several groups at once keep enough vpdpbusd in flight; every loop over
// groups and rows is unrolled so that the accumulators stay in registers.
template <int kRows, int kGroups, class Ops>
inline void Int8GroupRows(const Int8Args& p, int64_t g0) {
  const Quant& q = *p.q;
  const __m256i low_mask = _mm256_set1_epi8(0x0F);
  const int64_t group_bytes = 4 * q.block;  // 8 columns x block / 2
  __m256 acc[kGroups][kRows];
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) {
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) acc[g][r] = _mm256_setzero_ps();
  }
  for (int64_t blk = 0; blk < q.blocks; ++blk) {
    const int8_t* ab = p.a.q + blk * q.block;
    __m256i lo[kGroups][kRows], hi[kGroups][kRows];
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) lo[g][r] = hi[g][r] = _mm256_setzero_si256();
    }
    for (int64_t u = 0; u < q.block; u += 8) {
      __m256i a0[kRows], a1[kRows];
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        a0[r] = Broadcast4(ab + r * p.a.row + u);
        a1[r] = Broadcast4(ab + r * p.a.row + u + 4);
      }
#pragma GCC unroll 4
      for (int g = 0; g < kGroups; ++g) {
        const uint8_t* src = p.packed + ((g0 + g) * q.blocks + blk) * group_bytes + u * 4;
        const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
        const __m256i b0 = _mm256_and_si256(bytes, low_mask);
        const __m256i b1 = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low_mask);
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
          lo[g][r] = Ops::Dot(lo[g][r], b0, a0[r]);
          hi[g][r] = Ops::Dot(hi[g][r], b1, a1[r]);
        }
      }
    }
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g) {
      const int64_t at = ((g0 + g) * q.blocks + blk) * kGroupCols;
      const __m256 bs = _mm256_loadu_ps(p.bs + at), zs = _mm256_loadu_ps(p.zs + at);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_add_epi32(lo[g][r], hi[g][r]));
        const __m256 scale = _mm256_mul_ps(bs, _mm256_set1_ps(p.a.scale[r * q.blocks + blk]));
        acc[g][r] = _mm256_fmadd_ps(dot, scale, acc[g][r]);
        acc[g][r] =
            _mm256_fnmadd_ps(_mm256_set1_ps(p.a.scaled_sum[r * q.blocks + blk]), zs, acc[g][r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int g = 0; g < kGroups; ++g) {
    const int64_t col = (g0 + g) * kGroupCols;
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      float* y = p.y + r * q.n + col;
      if (col + kGroupCols <= q.n) {
        _mm256_storeu_ps(y, acc[g][r]);
      } else {  // the last, partial group
        alignas(32) float tmp[kGroupCols];
        _mm256_store_ps(tmp, acc[g][r]);
        std::memcpy(y, tmp, static_cast<size_t>(q.n - col) * sizeof(float));
      }
    }
  }
}

template <int kRows, class Ops>
inline void Int8GroupsRows(const Int8Args& p, int64_t begin, int64_t end) {
  constexpr int kGroups = kRows == 1 ? 4 : kRows == 2 ? 2 : 1;
  int64_t g = begin;
  for (; g + kGroups <= end; g += kGroups) Int8GroupRows<kRows, kGroups, Ops>(p, g);
  for (; g < end; ++g) Int8GroupRows<kRows, 1, Ops>(p, g);
}

// Groups [begin, end) of 8 columns.
template <class Ops>
inline void Int8GroupsSimd(const Int8Args& p, int64_t begin, int64_t end) {
  switch (p.m) {
    case 1:
      return Int8GroupsRows<1, Ops>(p, begin, end);
    case 2:
      return Int8GroupsRows<2, Ops>(p, begin, end);
    case 3:
      return Int8GroupsRows<3, Ops>(p, begin, end);
    default:
      return Int8GroupsRows<4, Ops>(p, begin, end);
  }
}

// One entry point per instruction set: `flatten` inlines the templates and Ops::Dot into a
// function compiled for that target.
__attribute__((flatten)) void Int8GroupsAvx2(const Int8Args& p, int64_t begin, int64_t end) {
  Int8GroupsSimd<Avx2Dot>(p, begin, end);
}
__attribute__((target("avxvnni"), flatten)) void Int8GroupsAvxVnni(const Int8Args& p, int64_t begin,
                                                                   int64_t end) {
  Int8GroupsSimd<AvxVnniDot>(p, begin, end);
}
__attribute__((target("avx512vnni,avx512vl,avx512bw,avx512f"), flatten)) void Int8GroupsAvx512Vnni(
    const Int8Args& p, int64_t begin, int64_t end) {
  Int8GroupsSimd<Avx512VnniDot>(p, begin, end);
}
#endif

// Groups of 8 columns [begin, end) on the SIMD paths (B packed), else columns on the scalar one.
void Int8Run(Int8Isa isa, const Int8Args& p, int64_t begin, int64_t end) {
#ifdef INFERD_NBITS_AVX2
  switch (isa) {
    case Int8Isa::kAvx2:
      return Int8GroupsAvx2(p, begin, end);
    case Int8Isa::kAvxVnni:
      return Int8GroupsAvxVnni(p, begin, end);
    case Int8Isa::kAvx512Vnni:
      return Int8GroupsAvx512Vnni(p, begin, end);
    default:
      break;
  }
#endif
  Int8ColumnsScalar(p, begin, end);
}

// The repacked B, scales and scale * zero point for the SIMD paths (padding columns zero).
struct PackedInt8 {
  std::vector<uint8_t> b;
  std::vector<float> bs, zs;
};

PackedInt8 PackForInt8(const Quant& q) {
  const int64_t groups = (q.n + kGroupCols - 1) / kGroupCols;
  PackedInt8 out;
  out.b.assign(static_cast<size_t>(groups * q.blocks * 4 * q.block), 0);
  out.bs.assign(static_cast<size_t>(groups * q.blocks * kGroupCols), 0.0f);
  out.zs.assign(out.bs.size(), 0.0f);
  for (int64_t col = 0; col < q.n; ++col) {
    const int64_t g = col / kGroupCols, c = col % kGroupCols;
    for (int64_t blk = 0; blk < q.blocks; ++blk) {
      const uint8_t* src = q.b + (col * q.blocks + blk) * q.blob;
      auto value = [&](int64_t e) { return (e & 1) ? (src[e / 2] >> 4) : (src[e / 2] & 0x0F); };
      uint8_t* dst = out.b.data() + (g * q.blocks + blk) * 4 * q.block;
      for (int64_t u = 0; u < q.block; u += 8) {
        for (int64_t i = 0; i < 4; ++i) {
          dst[u * 4 + c * 4 + i] = static_cast<uint8_t>(value(u + i) | (value(u + 4 + i) << 4));
        }
      }
      const int64_t at = (g * q.blocks + blk) * kGroupCols + c;
      out.bs[at] = q.scales[col * q.blocks + blk];
      out.zs[at] = out.bs[at] * q.Zero(col, blk);
    }
  }
  return out;
}

class MatMulNBitsKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MatMulNBitsKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(const int64_t k, info.RequireInt("K"));
    INFERD_ASSIGN_OR_RETURN(const int64_t n, info.RequireInt("N"));
    INFERD_ASSIGN_OR_RETURN(const int64_t block, info.RequireInt("block_size"));
    const int64_t bits = info.GetInt("bits", 4);
    if (bits != 4) {
      return info.Error(absl::StrCat("bits=", bits, " is not supported (only 4-bit weights)"));
    }
    if (k < 1 || n < 1 || k > (int64_t{1} << 31) || n > (int64_t{1} << 31)) {
      return info.Error(absl::StrCat("K and N must be in [1, 2^31], got K=", k, " N=", n));
    }
    if (block < 16 || block > 2048 || (block & (block - 1)) != 0) {
      return info.Error(absl::StrCat("block_size must be a power of two >= 16, got ", block));
    }
    if (info.input_present(4)) {
      return info.Error("g_idx (act-order group indices) is not supported");
    }
    for (int i : {0, 2, 5}) {
      const DataType t = info.input(i).type;
      if (info.input_present(i) && t != DataType::kUndefined && t != DataType::kFloat32) {
        return info.Error("only float32 A, scales and bias are supported");
      }
    }
    auto kernel = std::unique_ptr<MatMulNBitsKernel>(new MatMulNBitsKernel(info, k, n, block));
    // accuracy_level 4 with constant weights: int8 decode path, B repacked now.
    const Tensor* b = info.input_present(1) ? info.input(1).constant : nullptr;
    const int64_t blocks = (k + block - 1) / block;
    // Float zero points keep the float path, as in ONNX Runtime.
    const bool uint8_zp = !info.input_present(3) || info.input(3).type == DataType::kUint8;
    if (info.GetInt("accuracy_level", 0) == 4 && uint8_zp && b != nullptr &&
        b->dtype() == DataType::kUint8 && b->NumElements() == n * blocks * (block / 2)) {
      kernel->int8_ = true;
      kernel->isa_ = PickInt8Isa();
      // The SIMD paths need the scales and zero points too (repacked with B).
      const Tensor* scales = info.input(2).constant;
      const Tensor* zp = info.input_present(3) ? info.input(3).constant : nullptr;
      Quant q;
      q.b = b->data<uint8_t>();
      q.k = k;
      q.n = n;
      q.block = block;
      q.blocks = blocks;
      q.blob = block / 2;
      q.zp_row = (blocks + 1) / 2;
      const bool zp_ok =
          !info.input_present(3) ||
          (zp != nullptr && zp->dtype() == DataType::kUint8 && zp->NumElements() == n * q.zp_row);
      if (kernel->isa_ != Int8Isa::kScalar && scales != nullptr &&
          scales->dtype() == DataType::kFloat32 && scales->NumElements() == n * blocks && zp_ok) {
        q.scales = scales->data<float>();
        q.zp_packed = zp != nullptr ? zp->data<uint8_t>() : nullptr;
        kernel->packed_ = PackForInt8(q);
      } else {
        kernel->isa_ = Int8Isa::kScalar;
      }
    }
    return kernel;
  }

  size_t PersistentBytes() const override {
    return packed_.b.size() + (packed_.bs.size() + packed_.zs.size()) * sizeof(float);
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty() || shapes[0].rank() < 1) return {};
    const int64_t m = shapes[0].SizeBetween(0, shapes[0].rank() - 1);
    if (m <= 0) return {};
    if (int8_ && m <= kDecodeRows) {
      const int64_t bytes = m * blocks_ * (2 * sizeof(float) + block_);
      return {{kQuantASlot, static_cast<size_t>(bytes)}};
    }
    if (m <= kDecodeRows) {
      return {{kBlockSums, static_cast<size_t>(m * blocks_) * sizeof(float)}};
    }
    const int64_t buffers = std::min(panel_buffers_, (n_ + kPanel - 1) / kPanel);
    return {{kPanelSlot, static_cast<size_t>(buffers * std::min(n_, kPanel) * k_) * sizeof(float)}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(ctx, 2, node_));
    const Tensor* zp = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    const Tensor* bias = ctx.num_inputs() > 5 ? ctx.input(5) : nullptr;
    if (ctx.num_inputs() > 4 && ctx.input(4) != nullptr) {
      return node_.Unimplemented("g_idx is not supported");
    }
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kUint8, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scales, DataType::kFloat32, 2, node_));
    const Shape& as = a->shape();
    if (as.rank() < 1 || as[as.rank() - 1] != k_) {
      return node_.InvalidArgument(
          absl::StrCat("A must be [..., K=", k_, "], got ", as.ToString()));
    }
    const int64_t blob = block_ / 2;
    if (b->shape() != Shape{n_, blocks_, blob}) {
      return node_.InvalidArgument(absl::StrCat("B must be [N, k_blocks, block_size / 2] = [", n_,
                                                ", ", blocks_, ", ", blob, "], got ",
                                                b->shape().ToString()));
    }
    if (scales->NumElements() != n_ * blocks_) {
      return node_.InvalidArgument(absl::StrCat("scales must have N * k_blocks = ", n_ * blocks_,
                                                " values, got ", scales->shape().ToString()));
    }
    Quant q;
    q.b = b->data<uint8_t>();
    q.scales = scales->data<float>();
    q.k = k_;
    q.n = n_;
    q.block = block_;
    q.blocks = blocks_;
    q.blob = blob;
    q.zp_row = (blocks_ + 1) / 2;
    if (zp != nullptr) {
      if (zp->dtype() == DataType::kUint8) {
        if (zp->NumElements() != n_ * q.zp_row) {
          return node_.InvalidArgument(absl::StrCat("packed uint8 zero_points must have N * ",
                                                    "ceil(k_blocks / 2) = ", n_ * q.zp_row,
                                                    " values, got ", zp->shape().ToString()));
        }
        q.zp_packed = zp->data<uint8_t>();
      } else if (zp->dtype() == DataType::kFloat32) {
        if (zp->NumElements() != n_ * blocks_) {
          return node_.InvalidArgument(
              absl::StrCat("float zero_points must have N * k_blocks = ", n_ * blocks_,
                           " values, got ", zp->shape().ToString()));
        }
        q.zp_float = zp->data<float>();
      } else {
        return node_.InvalidArgument("zero_points must be uint8 (packed) or float32");
      }
    }
    if (bias != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 5, node_));
      if (bias->NumElements() != n_) {
        return node_.InvalidArgument(absl::StrCat("bias must have N = ", n_, " values"));
      }
    }
    Shape out_shape = as;
    out_shape[as.rank() - 1] = n_;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out_shape));
    const int64_t m = as.SizeBetween(0, as.rank() - 1);
    if (m == 0) return absl::OkStatus();
    const float* av = a->data<float>();
    float* yv = y->mutable_data<float>();
    if (int8_ && m <= kDecodeRows) {
      if (q.zp_float != nullptr) {
        return node_.InvalidArgument("zero_points were declared uint8 but are float32");
      }
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kQuantASlot));
      float* scale = static_cast<float*>(ws);
      float* scaled_sum = scale + m * blocks_;
      int8_t* qa = reinterpret_cast<int8_t*>(scaled_sum + m * blocks_);
      const int64_t row = blocks_ * block_;
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t blk = 0; blk < blocks_; ++blk) {
          const int64_t k0 = blk * block_, len = std::min(block_, k_ - k0);
          float* sc = scale + r * blocks_ + blk;
          const int32_t sum = QuantizeBlock(av + r * k_ + k0, len, block_, qa + r * row + k0, sc);
          scaled_sum[r * blocks_ + blk] = *sc * static_cast<float>(sum);
        }
      }
      Int8Args p;
      p.q = &q;
      p.packed = packed_.b.data();
      p.bs = packed_.bs.data();
      p.zs = packed_.zs.data();
      p.a = QuantA{qa, scale, scaled_sum, row};
      p.y = yv;
      p.m = m;
      // The pool splits groups of 8 columns (SIMD) or columns (scalar), 64K weights or more a
      // task.
      const bool groups = isa_ != Int8Isa::kScalar;
      const int64_t units = groups ? (n_ + kGroupCols - 1) / kGroupCols : n_;
      const int64_t chunk = std::max<int64_t>(4, 65536 / (k_ * (groups ? kGroupCols : 1)));
      ctx.threads().ParallelFor(units, chunk,
                                [&](int64_t begin, int64_t end) { Int8Run(isa_, p, begin, end); });
    } else if (m <= kDecodeRows) {
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kBlockSums));
      float* sums = static_cast<float*>(ws);
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t blk = 0; blk < blocks_; ++blk) {
          const int64_t k0 = blk * block_, len = std::min(block_, k_ - k0);
          const float* ar = av + r * k_ + k0;
          float s = 0;
#pragma omp simd reduction(+ : s)
          for (int64_t j = 0; j < len; ++j) s += ar[j];
          sums[r * blocks_ + blk] = s;
        }
      }
      const int64_t chunk = std::max<int64_t>(1, 65536 / k_);
      ctx.threads().ParallelFor(n_, chunk, [&](int64_t begin, int64_t end) {
        float out[kDecodeRows];
        for (int64_t col = begin; col < end; ++col) {
          DecodeColumn(q, col, av, m, sums, out);
          for (int64_t r = 0; r < m; ++r) yv[r * n_ + col] = out[r];
        }
      });
    } else {
      // Each intra-op thread takes whole panels (the next one free), dequantizes it into its
      // own buffer and multiplies it with a one-thread sgemm. (Dequantizing on the pool and
      // then calling sgemm with OpenMP's own threads left the pool's workers spinning beside
      // OpenMP's: 2 threads were slower than 1.)
      INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kPanelSlot));
      float* panels = static_cast<float*>(ws);
      const int64_t count = (n_ + kPanel - 1) / kPanel;
      const int64_t workers =
          std::min<int64_t>({ctx.threads().num_threads(), panel_buffers_, count});
      const int64_t stride = std::min(n_, kPanel) * k_;
      std::atomic<int64_t> next{0};
      std::atomic<int> failed{static_cast<int>(dnnl_success)};
      ctx.threads().ParallelFor(workers, 1, [&](int64_t begin, int64_t end) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        for (int64_t t = begin; t < end; ++t) {
          float* panel = panels + t * stride;
          for (int64_t i; (i = next.fetch_add(1)) < count;) {
            const int64_t n0 = i * kPanel, nb = std::min(kPanel, n_ - n0);
            for (int64_t c = 0; c < nb; ++c) DequantizeColumn(q, n0 + c, panel + c * k_);
            const dnnl_status_t s =
                dnnl_sgemm('N', 'T', m, nb, k_, 1.0f, av, k_, panel, k_, 0.0f, yv + n0, n_);
            if (s != dnnl_success) failed.store(static_cast<int>(s));
          }
        }
        omp_set_num_threads(saved);
      });
      if (failed.load() != static_cast<int>(dnnl_success)) {
        return node_.Internal(absl::StrCat("dnnl_sgemm failed with status ", failed.load()));
      }
    }
    if (bias != nullptr) {
      const float* bv = bias->data<float>();
      for (int64_t r = 0; r < m; ++r) {
        float* yr = yv + r * n_;
#pragma omp simd
        for (int64_t c = 0; c < n_; ++c) yr[c] += bv[c];
      }
    }
    return absl::OkStatus();
  }

 private:
  MatMulNBitsKernel(const KernelInfo& info, int64_t k, int64_t n, int64_t block)
      : node_(info),
        k_(k),
        n_(n),
        block_(block),
        blocks_((k + block - 1) / block),
        panel_buffers_(std::max(1, info.intra_op_threads())) {}

  const NodeLabel node_;
  const int64_t k_, n_, block_, blocks_;
  const int64_t panel_buffers_;  // prefill panels in flight: one per intra-op thread
  // Level 4 (set once at creation).
  bool int8_ = false;
  Int8Isa isa_ = Int8Isa::kScalar;
  PackedInt8 packed_;  // for the SIMD paths (empty on the scalar one)
};

}  // namespace

std::vector<engine::KernelDef> MatMulNBitsKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "MatMulNBits", 1, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<MatMulNBitsKernel>())};
}

}  // namespace inferd::kernels::cpu

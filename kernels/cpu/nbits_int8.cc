#include "kernels/cpu/nbits_int8.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef INFERD_NBITS_AVX2
#include <immintrin.h>
#endif

namespace inferd::kernels::cpu::nbits {
namespace {

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

}  // namespace

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

}  // namespace inferd::kernels::cpu::nbits

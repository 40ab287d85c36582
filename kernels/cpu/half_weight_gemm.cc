#include "kernels/cpu/half_weight_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dnnl.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;

// Columns per streaming step (two AVX-512 vectors).
constexpr int64_t kStreamCols = 32;

template <bool kBf16>
inline float ToFloat(uint16_t v) {
  if constexpr (kBf16) {
    return BFloat16ToFloat(v);
  } else {
    return HalfToFloat(v);
  }
}

// ---- portable loops -------------------------------------------------------------------------

template <bool kBf16>
void StreamPortable(const HalfWeightGemmShape& s, const float* a, const uint16_t* b, float alpha,
                    bool accumulate, float* c, int64_t j0, int64_t j1) {
  for (int64_t r = 0; r < s.m; ++r) {
    const float* ar = a + r * s.k;
    for (int64_t j = j0; j < j1; ++j) {
      float sum = 0.0f;
      if (s.trans_b) {
        const uint16_t* bj = b + j * s.k;
        for (int64_t kk = 0; kk < s.k; ++kk) sum += ar[kk] * ToFloat<kBf16>(bj[kk]);
      } else {
        for (int64_t kk = 0; kk < s.k; ++kk) sum += ar[kk] * ToFloat<kBf16>(b[kk * s.n + j]);
      }
      float& out = c[r * s.n + j];
      out = alpha * sum + (accumulate ? out : 0.0f);
    }
  }
}

template <bool kBf16>
void ConvertPortable(const uint16_t* from, float* to, int64_t count) {
  for (int64_t i = 0; i < count; ++i) to[i] = ToFloat<kBf16>(from[i]);
}

// ---- AVX-512 ---------------------------------------------------------------------------------

#define INFERD_HALF_AVX512 __attribute__((target("avx512f")))

template <bool kBf16>
INFERD_HALF_AVX512 inline __m512 Load16(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (kBf16) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_cvtph_ps(h);
  }
}

INFERD_HALF_AVX512 inline void Store16(float* c, __m512 v, __m512 alpha, bool accumulate) {
  v = _mm512_mul_ps(v, alpha);
  if (accumulate) v = _mm512_add_ps(v, _mm512_loadu_ps(c));
  _mm512_storeu_ps(c, v);
}

// B [K, N]: R rows of A against 32 (then 16) columns at a time, B read row by row.
template <int R, bool kBf16>
INFERD_HALF_AVX512 void StreamNN(const HalfWeightGemmShape& s, const float* a, const uint16_t* b,
                                 float alpha, bool accumulate, float* c, int64_t j0, int64_t j1) {
  const __m512 va = _mm512_set1_ps(alpha);
  const int64_t ldb = s.n;
  int64_t j = j0;
  for (; j + kStreamCols <= j1; j += kStreamCols) {
    __m512 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    const uint16_t* bp = b + j;
    for (int64_t kk = 0; kk < s.k; ++kk, bp += ldb) {
      _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * ldb), _MM_HINT_T0);
      const __m512 b0 = Load16<kBf16>(bp), b1 = Load16<kBf16>(bp + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(a[r * s.k + kk]);
        acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      Store16(c + r * s.n + j, acc[r][0], va, accumulate);
      Store16(c + r * s.n + j + 16, acc[r][1], va, accumulate);
    }
  }
  for (; j + 16 <= j1; j += 16) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const uint16_t* bp = b + j;
    for (int64_t kk = 0; kk < s.k; ++kk, bp += ldb) {
      const __m512 b0 = Load16<kBf16>(bp);
      for (int r = 0; r < R; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * s.k + kk]), b0, acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) Store16(c + r * s.n + j, acc[r], va, accumulate);
  }
  if (j < j1) {
    HalfWeightGemmShape rows = s;
    rows.m = R;
    StreamPortable<kBf16>(rows, a, b, alpha, accumulate, c, j, j1);
  }
}

// C[r, j] from the vector sum of a dot product over K's first k16 elements, plus the rest.
template <bool kBf16>
INFERD_HALF_AVX512 inline void FinishDot(const HalfWeightGemmShape& s, const float* a,
                                         const uint16_t* b, float alpha, bool accumulate, float* c,
                                         int r, int64_t j, int64_t k16, __m512 acc) {
  float sum = _mm512_reduce_add_ps(acc);
  const float* ar = a + r * s.k;
  const uint16_t* bj = b + j * s.k;
  for (int64_t kk = k16; kk < s.k; ++kk) sum += ar[kk] * ToFloat<kBf16>(bj[kk]);
  float& out = c[r * s.n + j];
  out = alpha * sum + (accumulate ? out : 0.0f);
}

// B [N, K]: R rows of A against 2 columns at a time, each a dot product along K.
template <int R, bool kBf16>
INFERD_HALF_AVX512 void StreamNT(const HalfWeightGemmShape& s, const float* a, const uint16_t* b,
                                 float alpha, bool accumulate, float* c, int64_t j0, int64_t j1) {
  const int64_t k16 = s.k & ~int64_t{15};
  int64_t j = j0;
  for (; j + 2 <= j1; j += 2) {
    __m512 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    const uint16_t* b0p = b + j * s.k;
    const uint16_t* b1p = b0p + s.k;
    for (int64_t kk = 0; kk < k16; kk += 16) {
      const __m512 b0 = Load16<kBf16>(b0p + kk), b1 = Load16<kBf16>(b1p + kk);
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_loadu_ps(a + r * s.k + kk);
        acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      FinishDot<kBf16>(s, a, b, alpha, accumulate, c, r, j, k16, acc[r][0]);
      FinishDot<kBf16>(s, a, b, alpha, accumulate, c, r, j + 1, k16, acc[r][1]);
    }
  }
  for (; j < j1; ++j) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const uint16_t* bp = b + j * s.k;
    for (int64_t kk = 0; kk < k16; kk += 16) {
      const __m512 b0 = Load16<kBf16>(bp + kk);
      for (int r = 0; r < R; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_loadu_ps(a + r * s.k + kk), b0, acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) FinishDot<kBf16>(s, a, b, alpha, accumulate, c, r, j, k16, acc[r]);
  }
}

template <bool kBf16>
INFERD_HALF_AVX512 void ConvertAvx512(const uint16_t* from, float* to, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(to + i, Load16<kBf16>(from + i));
  for (; i < count; ++i) to[i] = ToFloat<kBf16>(from[i]);
}

#undef INFERD_HALF_AVX512

// ---- dispatch --------------------------------------------------------------------------------

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

template <int R, bool kBf16>
void StreamRows(const HalfWeightGemmShape& s, const float* a, const uint16_t* b, float alpha,
                bool accumulate, float* c, int64_t j0, int64_t j1) {
  if (s.trans_b) {
    StreamNT<R, kBf16>(s, a, b, alpha, accumulate, c, j0, j1);
  } else {
    StreamNN<R, kBf16>(s, a, b, alpha, accumulate, c, j0, j1);
  }
}

template <bool kBf16>
void Stream(const HalfWeightGemmShape& s, const float* a, const uint16_t* b, float alpha,
            bool accumulate, float* c, int64_t j0, int64_t j1, bool portable) {
  if (portable || !HasAvx512()) {
    StreamPortable<kBf16>(s, a, b, alpha, accumulate, c, j0, j1);
    return;
  }
  using Fn = void (*)(const HalfWeightGemmShape&, const float*, const uint16_t*, float, bool,
                      float*, int64_t, int64_t);
  static constexpr Fn kByRows[kStreamRows] = {
      StreamRows<1, kBf16>, StreamRows<2, kBf16>, StreamRows<3, kBf16>, StreamRows<4, kBf16>,
      StreamRows<5, kBf16>, StreamRows<6, kBf16>, StreamRows<7, kBf16>, StreamRows<8, kBf16>};
  kByRows[s.m - 1](s, a, b, alpha, accumulate, c, j0, j1);
}

void Convert(const uint16_t* from, float* to, int64_t count, bool bf16) {
  if (HasAvx512()) {
    bf16 ? ConvertAvx512<true>(from, to, count) : ConvertAvx512<false>(from, to, count);
  } else {
    bf16 ? ConvertPortable<true>(from, to, count) : ConvertPortable<false>(from, to, count);
  }
}

bool Streams(const HalfWeightGemmShape& s) { return s.m <= kStreamRows && !s.trans_a; }

int64_t ColumnGroups(const HalfWeightGemmShape& s) {
  const int64_t width = Streams(s) ? (s.trans_b ? 2 : kStreamCols) : kBlockN;
  return (s.n + width - 1) / width;
}

int PartsOf(const HalfWeightGemmShape& s, int threads) {
  const double work =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  return PartCount(threads, work, ColumnGroups(s));
}

constexpr size_t kBlockBytes = kBlockK * kBlockN * sizeof(float);

}  // namespace

bool IsHalfWeightType(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

size_t HalfWeightGemmWorkspace(const HalfWeightGemmShape& s, int threads) {
  if (s.m == 0 || s.n == 0 || s.k == 0 || Streams(s)) return 0;
  return static_cast<size_t>(Slots(threads, PartsOf(s, threads))) * kBlockBytes;
}

absl::Status HalfWeightGemm(engine::ThreadPool& pool, const HalfWeightGemmShape& s, const float* a,
                            const void* b_data, float alpha, bool accumulate, float* c,
                            void* workspace, const NodeLabel& node, bool portable) {
  if (!IsHalfWeightType(s.b_type)) {
    return node.Internal(absl::StrCat("half-weight product on ", DataTypeName(s.b_type)));
  }
  if (s.m == 0 || s.n == 0) return absl::OkStatus();
  if (s.k == 0) {
    if (!accumulate) std::memset(c, 0, static_cast<size_t>(s.m * s.n) * sizeof(float));
    return absl::OkStatus();
  }
  const bool bf16 = s.b_type == DataType::kBFloat16;
  const auto* b = static_cast<const uint16_t*>(b_data);
  const int parts = PartsOf(s, pool.num_threads());
  const int64_t groups = ColumnGroups(s);
  auto columns = [&](int part, int64_t width) {
    const int64_t g0 = groups * part / parts, g1 = groups * (part + 1) / parts;
    return std::make_pair(g0 * width, std::min(s.n, g1 * width));
  };
  if (Streams(s)) {
    const int64_t width = s.trans_b ? 2 : kStreamCols;
    return RunParts(pool, parts, [&](int part, int) {
      const auto [j0, j1] = columns(part, width);
      bf16 ? Stream<true>(s, a, b, alpha, accumulate, c, j0, j1, portable)
           : Stream<false>(s, a, b, alpha, accumulate, c, j0, j1, portable);
      return absl::OkStatus();
    });
  }
  if (workspace == nullptr) return node.Internal("half-weight product without its workspace");
  return RunParts(pool, parts, [&](int part, int slot) -> absl::Status {
    ScopedOmpThreads one(1);
    float* block = reinterpret_cast<float*>(static_cast<char*>(workspace) + slot * kBlockBytes);
    const auto [j0, j1] = columns(part, kBlockN);
    for (int64_t jb = j0; jb < j1; jb += kBlockN) {
      const int64_t nb = std::min(kBlockN, j1 - jb);
      for (int64_t k0 = 0; k0 < s.k; k0 += kBlockK) {
        const int64_t kb = std::min(kBlockK, s.k - k0);
        if (s.trans_b) {  // block [nb, kb] of B [N, K]
          for (int64_t j = 0; j < nb; ++j)
            Convert(b + (jb + j) * s.k + k0, block + j * kb, kb, bf16);
        } else {  // block [kb, nb] of B [K, N]
          for (int64_t kk = 0; kk < kb; ++kk) {
            Convert(b + (k0 + kk) * s.n + jb, block + kk * nb, nb, bf16);
          }
        }
        const float* a_block = s.trans_a ? a + k0 * s.m : a + k0;
        const int64_t lda = s.trans_a ? s.m : s.k;
        const float beta = (k0 == 0 && !accumulate) ? 0.0f : 1.0f;
        const dnnl_status_t st =
            dnnl_sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, nb, kb, alpha, a_block,
                       lda, block, s.trans_b ? kb : nb, beta, c + jb, s.n);
        if (st != dnnl_success) {
          return node.Internal(
              absl::StrCat("dnnl_sgemm failed (status ", static_cast<int>(st), ")"));
        }
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace inferd::kernels::cpu

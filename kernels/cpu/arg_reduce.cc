// ArgMax and ArgMin (float32, float64, int32, int64 in; int64 out): the index of the first (or,
// with select_last_index, opset 12+, the last) extreme value along `axis` (default 0), the axis
// kept as 1 with keepdims (default 1) or dropped. Seen as [outer, n, inner]: with inner == 1 each
// output scans a contiguous row (the extreme value vectorized, then its position); otherwise a
// tile of inner columns is scanned row by row. Parallel over rows or tiles. Where a line holds
// NaN the index is unspecified.
#include <algorithm>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/reduce_axes.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

constexpr int64_t kGrain = 16 * 1024;  // input elements per thread, at least
constexpr int64_t kTile = 256;         // columns per tile of the strided path

// True when `v` should replace the current best `b`: strictly better, or as good with
// select_last_index.
template <bool kMax, bool kLast, typename T>
inline bool Better(T v, T b) {
  if constexpr (kMax) {
    return kLast ? v >= b : v > b;
  } else {
    return kLast ? v <= b : v < b;
  }
}

// The index of the extreme value of a row: pass 1 finds the value (branch-free, vectorized),
// pass 2 its first (or last) position. A row whose extreme is not found again (NaN) takes the
// scalar loop.
template <bool kMax, bool kLast, typename T>
int64_t ArgRow(const T* row, int64_t n) {
  T best = row[0];
  if constexpr (kMax) {
#pragma omp simd reduction(max : best)
    for (int64_t i = 1; i < n; ++i) best = row[i] > best ? row[i] : best;
  } else {
#pragma omp simd reduction(min : best)
    for (int64_t i = 1; i < n; ++i) best = row[i] < best ? row[i] : best;
  }
  if constexpr (kLast) {
    for (int64_t i = n; i-- > 0;) {
      if (row[i] == best) return i;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      if (row[i] == best) return i;
    }
  }
  int64_t index = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (Better<kMax, kLast>(row[i], row[index])) index = i;
  }
  return index;
}

template <bool kMax, bool kLast, typename T>
void ArgRows(const T* x, int64_t* y, int64_t outer, int64_t n, engine::ThreadPool& pool) {
  pool.ParallelFor(outer, std::max<int64_t>(1, kGrain / n), [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) y[o] = ArgRow<kMax, kLast>(x + o * n, n);
  });
}

// Row indices are tracked in T itself (exact below 2^24 rows for float), so that the compare
// and both selects have one width and vectorize.
template <bool kMax, bool kLast, typename T>
void ArgColumns(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner,
                engine::ThreadPool& pool) {
  const int64_t tiles = (inner + kTile - 1) / kTile;
  pool.ParallelFor(outer * tiles, std::max<int64_t>(1, kGrain / (n * kTile)),
                   [&](int64_t begin, int64_t end) {
                     T best[kTile], where[kTile];
                     int64_t o = begin / tiles, t = begin % tiles;  // one division per chunk
                     for (int64_t w = begin; w < end; ++w) {
                       const int64_t col = t * kTile, width = std::min(kTile, inner - col);
                       const T* base = x + o * n * inner + col;
                       std::copy(base, base + width, best);
                       std::fill(where, where + width, T(0));
                       for (int64_t i = 1; i < n; ++i) {
                         const T* row = base + i * inner;
                         const T row_index = static_cast<T>(i);
#pragma omp simd
                         for (int64_t j = 0; j < width; ++j) {
                           const bool better = Better<kMax, kLast>(row[j], best[j]);
                           best[j] = better ? row[j] : best[j];
                           where[j] = better ? row_index : where[j];
                         }
                       }
                       int64_t* index = y + o * inner + col;
                       for (int64_t j = 0; j < width; ++j)
                         index[j] = static_cast<int64_t>(where[j]);
                       if (++t == tiles) t = 0, ++o;
                     }
                   });
}

template <bool kMax, bool kLast, typename T>
void Arg(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner,
         engine::ThreadPool& pool) {
  if (inner == 1) {
    ArgRows<kMax, kLast>(x, y, outer, n, pool);
  } else if (n > (int64_t{1} << std::numeric_limits<T>::digits)) {
    // Too many rows to count in T: one row scan per column instead.
    pool.ParallelFor(outer * inner, std::max<int64_t>(1, kGrain / n),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t line = begin; line < end; ++line) {
                         const T* col = x + (line / inner) * n * inner + line % inner;
                         int64_t index = 0;
                         for (int64_t i = 1; i < n; ++i) {
                           if (Better<kMax, kLast>(col[i * inner], col[index * inner])) index = i;
                         }
                         y[line] = index;
                       }
                     });
  } else {
    ArgColumns<kMax, kLast>(x, y, outer, n, inner, pool);
  }
}

template <typename T>
void ArgTyped(bool max, bool last, const Tensor& x, int64_t* y, int64_t outer, int64_t n,
              int64_t inner, engine::ThreadPool& pool) {
  const T* in = x.data<T>();
  if (max) {
    last ? Arg<true, true>(in, y, outer, n, inner, pool)
         : Arg<true, false>(in, y, outer, n, inner, pool);
  } else {
    last ? Arg<false, true>(in, y, outer, n, inner, pool)
         : Arg<false, false>(in, y, outer, n, inner, pool);
  }
}

class ArgReduceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ArgReduceKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ArgReduceKernel>(new ArgReduceKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const ArgReduceGeometry g, ArgReduceShape(x->shape(), attrs_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kInt64, g.out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const int64_t outer = g.outer, n = g.n, inner = g.inner;
    int64_t* out = y->mutable_data<int64_t>();
    engine::ThreadPool& pool = ctx.threads();
    return Dispatch(ReduceTypes{}, x->dtype(), node_, [&](auto tag) {
      ArgTyped<typename decltype(tag)::type>(attrs_.max, attrs_.last, *x, out, outer, n, inner,
                                             pool);
      return absl::OkStatus();
    });
  }

 private:
  explicit ArgReduceKernel(const KernelInfo& info)
      : node_(info), attrs_(ArgReduceAttributes::Read(info)) {}

  const NodeLabel node_;
  const ArgReduceAttributes attrs_;
};

}  // namespace

std::vector<engine::KernelDef> ArgReduceKernelDefs() {
  const std::vector<DataType> types = TypesOf(ReduceTypes{});
  std::vector<engine::KernelDef> defs;
  for (const char* op : {"ArgMax", "ArgMin"}) {
    // 1-11: first index (11 adds negative axes, a superset here); 12+: select_last_index.
    defs.push_back(CpuDef(engine::kOnnxDomain, op, 1, 11, types, FactoryOf<ArgReduceKernel>()));
    defs.push_back(
        CpuDef(engine::kOnnxDomain, op, 12, kMaxOpset, types, FactoryOf<ArgReduceKernel>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cpu

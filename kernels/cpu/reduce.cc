// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp (float32, float64, int32, int64; ReduceMax and ReduceMin also
// int8, uint8 and, from opset 20, bool). Axes come from the `axes` attribute (every op up to
// opset 17, ReduceSum up to 12) or from the optional second input (ReduceSum 13+, the others
// 18+, with noop_with_empty_axes); absent or empty axes reduce everything.
//
// The input shape is collapsed first: dims of size 1 dropped, neighbouring dims of the same kind
// (kept or reduced) merged. Two loops then cover every case without index arithmetic per element:
//   - the innermost collapsed dim is reduced: each output folds contiguous runs (a row reduce,
//     vectorized), parallel over outputs; a reduction to one value is split across threads;
//   - the innermost collapsed dim is kept: each output tile of up to kTile contiguous values
//     accumulates input rows of the same width (vectorized across columns), parallel over tiles.
// The other dims are walked with StridedWalk. ReduceLogSumExp takes the maximum first (same loops)
// and sums exp(x - max), so large inputs do not overflow.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/reduce_axes.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/strided_walk.h"
#include "kernels/cpu/type_dispatch.h"
#include "kernels/cpu/vec_math.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using engine::ThreadPool;

constexpr int64_t kGrain = 16 * 1024;  // input elements per thread, at least
constexpr int64_t kTile = 1024;        // output columns per tile of the column loop
constexpr int kMaxPartials = 64;       // chunks of a reduction to one value

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Each op: Init (the empty fold), Pre (per element), Combine (associative fold), Fin (from the
// fold and the element count). Accumulation is in T. `s` is the per-output shift of
// ReduceLogSumExp (0 elsewhere).
template <typename T>
struct SumOp {
  static constexpr bool kAdditive = true;
  static T Init() { return T(0); }
  static T Pre(T x, T) { return x; }
  static T Combine(T a, T b) { return a + b; }
  static T Fin(T a, int64_t, T) { return a; }
};
template <typename T>
struct MeanOp : SumOp<T> {
  static T Fin(T a, int64_t n, T) {
    if constexpr (std::is_integral_v<T>) return n == 0 ? T(0) : static_cast<T>(a / n);
    return a / static_cast<T>(n);
  }
};
template <typename T>
struct SumSquareOp : SumOp<T> {
  static T Pre(T x, T) { return x * x; }
};
template <typename T>
struct L1Op : SumOp<T> {
  static T Pre(T x, T) { return x < T(0) ? -x : x; }
};
template <typename T>
struct L2Op : SumSquareOp<T> {
  static T Fin(T a, int64_t, T) { return static_cast<T>(std::sqrt(static_cast<double>(a))); }
};
template <typename T>
struct LogSumOp : SumOp<T> {
  static T Fin(T a, int64_t, T) { return static_cast<T>(std::log(static_cast<double>(a))); }
};
// Second pass of ReduceLogSumExp: s is the (finite) maximum of the output's values.
template <typename T>
struct SumExpOp : SumOp<T> {
  static T Pre(T x, T s) {
    return static_cast<T>(std::exp(static_cast<double>(x) - static_cast<double>(s)));
  }
  static T Fin(T a, int64_t, T s) {
    return static_cast<T>(std::log(static_cast<double>(a)) + static_cast<double>(s));
  }
};
template <typename T>
struct ProdOp {
  static constexpr bool kAdditive = false;
  static T Init() { return T(1); }
  static T Pre(T x, T) { return x; }
  static T Combine(T a, T b) { return a * b; }
  static T Fin(T a, int64_t, T) { return a; }
};
template <typename T>
struct MaxOp {
  static constexpr bool kAdditive = false;
  static T Init() {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
    return -std::numeric_limits<T>::infinity();
  }
  static T Pre(T x, T) { return x; }
  static T Combine(T a, T b) { return b > a ? b : a; }
  static T Fin(T a, int64_t, T) { return a; }
};
template <typename T>
struct MinOp {
  static constexpr bool kAdditive = false;
  static T Init() {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
    return std::numeric_limits<T>::infinity();
  }
  static T Pre(T x, T) { return x; }
  static T Combine(T a, T b) { return b < a ? b : a; }
  static T Fin(T a, int64_t, T) { return a; }
};

// Folds n contiguous values into `acc`, with 16 independent lanes (vectorizable, and enough
// independent chains to hide the add latency).
template <typename Op, typename T>
T FoldRun(const T* x, int64_t n, T acc, T s) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Op, SumExpOp<float>>) {
    return acc + vec::ExpShiftSum(x, n, s);
  } else if constexpr (std::is_same_v<T, float> && std::is_same_v<Op, MaxOp<float>>) {
    return std::max(acc, vec::Max(x, n));
  } else {
    constexpr int kLanes = 16;
    int64_t i = 0;
    if (n >= 2 * kLanes) {
      T lanes[kLanes];
      for (int j = 0; j < kLanes; ++j) lanes[j] = Op::Init();
      for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) lanes[j] = Op::Combine(lanes[j], Op::Pre(x[i + j], s));
      }
      for (int j = 0; j < kLanes; ++j) acc = Op::Combine(acc, lanes[j]);
    }
    for (; i < n; ++i) acc = Op::Combine(acc, Op::Pre(x[i], s));
    return acc;
  }
}

// acc[j] = Combine(acc[j], Pre(x[j], s[j])) for `width` columns (s may be null).
template <typename Op, typename T>
void FoldColumns(const T* x, T* acc, int64_t width, const T* s) {
  if (s == nullptr) {
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) acc[j] = Op::Combine(acc[j], Op::Pre(x[j], T(0)));
  } else {
    for (int64_t j = 0; j < width; ++j) acc[j] = Op::Combine(acc[j], Op::Pre(x[j], s[j]));
  }
}

// A reduction after collapsing the input shape (see the file comment).
struct ReducePlan {
  int64_t outputs = 0;      // output elements
  int64_t reduce_size = 1;  // input elements folded into each output
  bool inner_reduced = false;
  int64_t inner = 1;          // the innermost collapsed dim (contiguous in the input)
  Dims kept, kept_strides;    // kept dims, the innermost excluded when it is kept
  Dims reduced, red_strides;  // reduced dims, the innermost excluded when it is reduced
};

ReducePlan MakePlan(const Shape& shape, const absl::InlinedVector<bool, 8>& mask) {
  ReducePlan p;
  Dims dims;
  absl::InlinedVector<bool, 8> kinds;
  for (size_t i = 0; i < shape.rank(); ++i) {
    if (shape[i] == 1) continue;
    if (!kinds.empty() && kinds.back() == mask[i]) {
      dims.back() *= shape[i];
    } else {
      dims.push_back(shape[i]);
      kinds.push_back(mask[i]);
    }
  }
  p.outputs = 1;
  p.reduce_size = 1;
  for (size_t i = 0; i < shape.rank(); ++i) (mask[i] ? p.reduce_size : p.outputs) *= shape[i];
  Dims strides(dims.size());
  for (size_t i = dims.size(), stride = 1; i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    stride *= dims[i];
  }
  if (dims.empty()) return p;  // one element per output: the column loop with no reduced dims
  p.inner_reduced = kinds.back();
  p.inner = dims.back();
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    (kinds[i] ? p.reduced : p.kept).push_back(dims[i]);
    (kinds[i] ? p.red_strides : p.kept_strides).push_back(strides[i]);
  }
  return p;
}

// y[o] for every output o, the innermost collapsed dim reduced: each output folds runs of
// p.inner contiguous values, one run per position of the other reduced dims.
template <typename Op, typename T>
void ReduceRows(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  const int64_t runs = Product(p.reduced);
  if (p.outputs == 1 && runs == 1 && p.inner >= 2 * kGrain) {
    // One long run: fold chunks in parallel, then fold the partial results. The chunks depend
    // on the size only, so any thread count gives the same result.
    const int64_t chunks = std::min<int64_t>(kMaxPartials, p.inner / kGrain);
    const int64_t per = (p.inner + chunks - 1) / chunks;
    const T s = shift != nullptr ? shift[0] : T(0);
    T partial[kMaxPartials];
    pool.ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t from = c * per, to = std::min(p.inner, from + per);
        partial[c] = FoldRun<Op>(x + from, std::max<int64_t>(0, to - from), Op::Init(), s);
      }
    });
    T acc = Op::Init();
    for (int64_t c = 0; c < chunks; ++c) acc = Op::Combine(acc, partial[c]);
    y[0] = Op::Fin(acc, p.reduce_size, s);
    return;
  }
  pool.ParallelFor(p.outputs, std::max<int64_t>(1, kGrain / p.reduce_size),
                   [&](int64_t begin, int64_t end) {
                     StridedWalk kept(p.kept, p.kept_strides, begin);
                     for (int64_t o = begin; o < end; ++o, kept.Next()) {
                       const T* base = x + kept.offset();
                       const T s = shift != nullptr ? shift[o] : T(0);
                       T acc = Op::Init();
                       if (runs == 1) {
                         acc = FoldRun<Op>(base, p.inner, acc, s);
                       } else {
                         StridedWalk red(p.reduced, p.red_strides);
                         for (int64_t r = 0; r < runs; ++r, red.Next()) {
                           acc = FoldRun<Op>(base + red.offset(), p.inner, acc, s);
                         }
                       }
                       y[o] = Op::Fin(acc, p.reduce_size, s);
                     }
                   });
}

// y for every output, the innermost collapsed dim kept: outputs come in blocks of p.inner
// contiguous values (one block per position of the other kept dims), cut into tiles; each tile
// accumulates one input row of its width per position of the reduced dims.
template <typename Op, typename T>
void ReduceColumns(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  const int64_t runs = Product(p.reduced);
  const int64_t blocks = p.outputs / p.inner;
  // Tiles of kTile columns; narrower (down to 64) when there are too few for the threads. Each
  // column folds its rows in the same order whatever the tiling.
  int64_t tile = kTile;
  const int64_t wanted = 4 * static_cast<int64_t>(pool.num_threads());
  if (blocks < wanted && p.inner > 64 && p.inner * runs >= 2 * kGrain) {
    const int64_t per_block = (wanted + blocks - 1) / blocks;
    tile = std::max<int64_t>(64, std::min(kTile, (p.inner / per_block + 15) / 16 * 16));
  }
  const int64_t tiles = (p.inner + tile - 1) / tile;
  const int64_t work_per_tile = std::min(tile, p.inner) * std::max<int64_t>(1, runs);
  pool.ParallelFor(blocks * tiles, std::max<int64_t>(1, kGrain / work_per_tile),
                   [&](int64_t begin, int64_t end) {
                     int64_t b = begin / tiles, t = begin % tiles;  // one division per chunk
                     StridedWalk kept(p.kept, p.kept_strides, b);
                     for (int64_t w = begin; w < end; ++w) {
                       const int64_t col = t * tile, width = std::min(tile, p.inner - col);
                       T* acc = y + b * p.inner + col;
                       const T* s = shift != nullptr ? shift + b * p.inner + col : nullptr;
                       std::fill(acc, acc + width, Op::Init());
                       const T* base = x + kept.offset() + col;
                       StridedWalk red(p.reduced, p.red_strides);
                       for (int64_t r = 0; r < runs; ++r, red.Next()) {
                         FoldColumns<Op>(base + red.offset(), acc, width, s);
                       }
                       for (int64_t j = 0; j < width; ++j) {
                         acc[j] = Op::Fin(acc[j], p.reduce_size, s != nullptr ? s[j] : T(0));
                       }
                       if (++t == tiles) {
                         t = 0;
                         ++b;
                         kept.Next();
                       }
                     }
                   });
}

template <typename Op, typename T>
void Reduce(const ReducePlan& p, const T* x, T* y, const T* shift, ThreadPool& pool) {
  if (p.inner_reduced) {
    ReduceRows<Op>(p, x, y, shift, pool);
  } else {
    ReduceColumns<Op>(p, x, y, shift, pool);
  }
}

template <typename T>
absl::Status RunTyped(Kind kind, const ReducePlan& p, const Tensor& x, Tensor& y,
                      KernelContext& ctx) {
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  ThreadPool& pool = ctx.threads();
  const T* none = nullptr;   // no shift
  if (p.reduce_size == 0) {  // folds of nothing
    T v = T(0);
    switch (kind) {
      case Kind::kMax:
        v = MaxOp<T>::Init();
        break;
      case Kind::kMin:
        v = MinOp<T>::Init();
        break;
      case Kind::kProd:
        v = T(1);
        break;
      case Kind::kMean:
        v = MeanOp<T>::Fin(T(0), 0, T(0));
        break;
      case Kind::kLogSum:
      case Kind::kLogSumExp:
        v = LogSumOp<T>::Fin(T(0), 0, T(0));
        break;
      default:
        break;
    }
    std::fill(out, out + p.outputs, v);
    return absl::OkStatus();
  }
  switch (kind) {
    case Kind::kSum:
      Reduce<SumOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kMean:
      Reduce<MeanOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kMax:
      Reduce<MaxOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kMin:
      Reduce<MinOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kProd:
      Reduce<ProdOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kL1:
      Reduce<L1Op<T>>(p, in, out, none, pool);
      break;
    case Kind::kL2:
      Reduce<L2Op<T>>(p, in, out, none, pool);
      break;
    case Kind::kSumSquare:
      Reduce<SumSquareOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kLogSum:
      Reduce<LogSumOp<T>>(p, in, out, none, pool);
      break;
    case Kind::kLogSumExp: {
      // pass 1: the maximum per output (infinite ones replaced by 0: exp(x - 0) then gives the
      // right -inf / inf); pass 2: log(sum(exp(x - max))) + max.
      INFERD_ASSIGN_OR_RETURN(Tensor max, ctx.MakeTemporaryTensor(y.dtype(), y.shape()));
      T* m = max.mutable_data<T>();
      Reduce<MaxOp<T>>(p, in, m, none, pool);
      for (int64_t o = 0; o < p.outputs; ++o) {
        if (!std::isfinite(static_cast<double>(m[o]))) m[o] = T(0);
      }
      Reduce<SumExpOp<T>>(p, in, out, m, pool);
      break;
    }
  }
  return absl::OkStatus();
}

// ReduceMax and ReduceMin also take 8-bit integers (opset 12) and bool (opset 20).
using ExtremumOnlyTypes = TypeList<int8_t, uint8_t, bool>;

template <typename T>
absl::Status RunExtremum(Kind kind, const ReducePlan& p, const Tensor& x, Tensor& y,
                         ThreadPool& pool) {
  const T* none = nullptr;
  T* out = y.mutable_data<T>();
  if (p.reduce_size == 0) {
    std::fill(out, out + p.outputs, kind == Kind::kMax ? MaxOp<T>::Init() : MinOp<T>::Init());
  } else if (kind == Kind::kMax) {
    Reduce<MaxOp<T>>(p, x.data<T>(), out, none, pool);
  } else {
    Reduce<MinOp<T>>(p, x.data<T>(), out, none, pool);
  }
  return absl::OkStatus();
}

struct OpName {
  const char* name;
  Kind kind;
};
constexpr OpName kOps[] = {
    {"ReduceSum", Kind::kSum},       {"ReduceMean", Kind::kMean},
    {"ReduceMax", Kind::kMax},       {"ReduceMin", Kind::kMin},
    {"ReduceProd", Kind::kProd},     {"ReduceL1", Kind::kL1},
    {"ReduceL2", Kind::kL2},         {"ReduceSumSquare", Kind::kSumSquare},
    {"ReduceLogSum", Kind::kLogSum}, {"ReduceLogSumExp", Kind::kLogSumExp},
};

class ReduceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ReduceKernel>> Create(const KernelInfo& info) {
    Kind kind = Kind::kSum;
    for (const OpName& op : kOps) {
      if (info.op_type() == op.name) kind = op.kind;
    }
    // ReduceSum from opset 13 reads its axes from input 1, the other ops from opset 18.
    const bool axes_input = info.opset() >= (kind == Kind::kSum ? 13 : 18);
    auto k = std::unique_ptr<ReduceKernel>(new ReduceKernel(info, kind, axes_input));
    if (!axes_input) k->axes_ = info.GetInts("axes");
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& shape = x->shape();

    // The axes: attribute, or input 1 (absent or empty: all, or none with noop_with_empty_axes).
    absl::InlinedVector<int64_t, 8> axes(axes_.begin(), axes_.end());
    if (axes_input_ && ctx.num_inputs() > 1 && ctx.input(1) != nullptr) {
      const Tensor& a = *ctx.input(1);
      INFERD_RETURN_IF_ERROR(CheckType(a, DataType::kInt64, 1, node_));
      if (a.shape().rank() > 1) {
        return node_.InvalidArgument(
            absl::StrCat("axes (input 1) must be 1-D, got shape ", a.shape().ToString()));
      }
      axes.assign(a.data<int64_t>(), a.data<int64_t>() + a.NumElements());
    }
    if (axes.empty() && noop_with_empty_axes_) {
      INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), shape));
      if (x->bytes() > 0) std::memcpy(y->raw_mutable_data(), x->raw_data(), x->bytes());
      return absl::OkStatus();
    }
    INFERD_ASSIGN_OR_RETURN(const ReducedAxes reduced, ReduceAxes(shape, axes, keepdims_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), reduced.out_shape));
    const ReducePlan plan = MakePlan(shape, reduced.mask);
    if (plan.outputs == 0) return absl::OkStatus();
    absl::Status status;
    if ((kind_ == Kind::kMax || kind_ == Kind::kMin) &&
        Visit(ExtremumOnlyTypes{}, x->dtype(), [&](auto tag) {
          status = RunExtremum<typename decltype(tag)::type>(kind_, plan, *x, *y, ctx.threads());
        })) {
      return status;
    }
    return Dispatch(ReduceTypes{}, x->dtype(), node_, [&](auto tag) {
      return RunTyped<typename decltype(tag)::type>(kind_, plan, *x, *y, ctx);
    });
  }

 private:
  ReduceKernel(const KernelInfo& info, Kind kind, bool axes_input)
      : node_(info),
        kind_(kind),
        axes_input_(axes_input),
        keepdims_(info.GetInt("keepdims", 1) != 0),
        noop_with_empty_axes_(axes_input && info.GetInt("noop_with_empty_axes", 0) != 0) {}

  const NodeLabel node_;
  const Kind kind_;
  const bool axes_input_;
  const bool keepdims_;
  const bool noop_with_empty_axes_;
  std::vector<int64_t> axes_;  // from the attribute; set at creation
};

}  // namespace

std::vector<engine::KernelDef> ReduceKernelDefs() {
  const std::vector<DataType> types = TypesOf(ReduceTypes{});
  std::vector<DataType> extremum = types;
  extremum.push_back(DataType::kInt8);
  extremum.push_back(DataType::kUint8);
  std::vector<DataType> extremum_bool = extremum;
  extremum_bool.push_back(DataType::kBool);
  std::vector<engine::KernelDef> defs;
  auto def = [&](const char* name, int from, int to, const std::vector<DataType>& t) {
    defs.push_back(CpuDef(engine::kOnnxDomain, name, from, to, t, FactoryOf<ReduceKernel>()));
  };
  for (const OpName& op : kOps) {
    const bool is_extremum = op.kind == Kind::kMax || op.kind == Kind::kMin;
    const std::vector<DataType>& t = is_extremum ? extremum : types;
    if (op.kind == Kind::kSum) {
      // Opset 13 moved ReduceSum's axes to an input.
      def(op.name, 1, 12, t);
      def(op.name, 13, kMaxOpset, t);
    } else {
      // 1-10: non-negative axes only (a superset here); 11+: negative axes; 13: more types;
      // 18: axes as input 1 with noop_with_empty_axes; 20: ReduceMax / ReduceMin of bool.
      def(op.name, 1, 17, t);
      if (is_extremum) {
        def(op.name, 18, 19, t);
        def(op.name, 20, kMaxOpset, extremum_bool);
      } else {
        def(op.name, 18, kMaxOpset, t);
      }
    }
  }
  return defs;
}

}  // namespace inferd::kernels::cpu

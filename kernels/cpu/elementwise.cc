// Add and Mul (float32, int32, int64; numpy multidirectional broadcasting, integer overflow wraps)
// and Relu (float32). Own code: broadcasting is reduced to a loop over merged dimensions whose
// innermost run is contiguous in the output and either contiguous or a single repeated value in
// each input (same shape, scalar, row and column broadcasts all become one vectorized loop).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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

// Elements one thread takes at least, and the longest run of one work item.
constexpr int64_t kGrain = 16 * 1024;
constexpr int64_t kMaxRun = 64 * 1024;

// Dimensions after dropping the output's 1s and merging neighbours that broadcast alike.
struct BroadcastLoop {
  std::vector<int64_t> dims;                  // outermost first; never empty
  std::vector<int64_t> a_strides, b_strides;  // in elements; 0 where the input repeats
};

BroadcastLoop MakeLoop(const Shape& a, const Shape& b, const Shape& out) {
  struct Run {
    int64_t size;
    bool a_repeats, b_repeats;
  };
  std::vector<Run> runs;
  const size_t rank = out.rank();
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    const bool a_rep = i < rank - a.rank() || a[i - (rank - a.rank())] == 1;
    const bool b_rep = i < rank - b.rank() || b[i - (rank - b.rank())] == 1;
    if (!runs.empty() && runs.back().a_repeats == a_rep && runs.back().b_repeats == b_rep) {
      runs.back().size *= out[i];
    } else {
      runs.push_back({out[i], a_rep, b_rep});
    }
  }
  if (runs.empty()) runs.push_back({1, false, false});
  BroadcastLoop loop;
  const size_t n = runs.size();
  loop.dims.resize(n);
  loop.a_strides.resize(n);
  loop.b_strides.resize(n);
  int64_t sa = 1, sb = 1;
  for (size_t i = n; i-- > 0;) {
    loop.dims[i] = runs[i].size;
    loop.a_strides[i] = runs[i].a_repeats ? 0 : sa;
    loop.b_strides[i] = runs[i].b_repeats ? 0 : sb;
    if (!runs[i].a_repeats) sa *= runs[i].size;
    if (!runs[i].b_repeats) sb *= runs[i].size;
  }
  return loop;
}

// Integer arithmetic wraps (through the unsigned type) instead of overflowing.
struct AddOp {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
    } else {
      return x + y;
    }
  }
};

struct MulOp {
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
    } else {
      return x * y;
    }
  }
};

// out[i] = a[i * sa] op b[i * sb] for i < n, with sa, sb in {0, 1} and not both 0.
template <typename Op, typename T>
void InnerRun(const T* a, int64_t sa, const T* b, int64_t sb, T* out, int64_t n) {
  if (sa != 0 && sb != 0) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i]);
  } else if (sa != 0) {
    const T bv = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], bv);
  } else if (sb != 0) {
    const T av = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(av, b[i]);
  } else {
    std::fill(out, out + n, Op::Apply(a[0], b[0]));
  }
}

template <typename Op, typename T>
void RunBroadcast(const BroadcastLoop& loop, const T* a, const T* b, T* out,
                  engine::ThreadPool& pool) {
  const size_t outer = loop.dims.size() - 1;
  const int64_t inner = loop.dims[outer];
  const int64_t sa = loop.a_strides[outer], sb = loop.b_strides[outer];
  int64_t rows = 1;
  for (size_t i = 0; i < outer; ++i) rows *= loop.dims[i];
  // Work items: rows cut into runs of at most kMaxRun elements.
  const int64_t run = std::min(inner, kMaxRun);
  const int64_t runs_per_row = (inner + run - 1) / run;
  pool.ParallelFor(rows * runs_per_row, std::max<int64_t>(1, kGrain / run),
                   [&](int64_t begin, int64_t end) {
                     // Odometer over the outer dimensions, starting at begin's row.
                     absl::InlinedVector<int64_t, 8> index(outer, 0);
                     int64_t row = begin / runs_per_row, a_off = 0, b_off = 0;
                     int64_t rest = row;
                     for (size_t d = outer; d-- > 0;) {
                       index[d] = rest % loop.dims[d];
                       rest /= loop.dims[d];
                       a_off += index[d] * loop.a_strides[d];
                       b_off += index[d] * loop.b_strides[d];
                     }
                     for (int64_t item = begin; item < end;) {
                       const int64_t part = item - row * runs_per_row;
                       const int64_t start = part * run, len = std::min(run, inner - start);
                       InnerRun<Op>(a + a_off + start * sa, sa, b + b_off + start * sb, sb,
                                    out + row * inner + start, len);
                       ++item;
                       if (part + 1 < runs_per_row || item >= end) continue;
                       ++row;  // next row: advance the odometer
                       for (size_t d = outer; d-- > 0;) {
                         a_off += loop.a_strides[d];
                         b_off += loop.b_strides[d];
                         if (++index[d] < loop.dims[d]) break;
                         a_off -= index[d] * loop.a_strides[d];
                         b_off -= index[d] * loop.b_strides[d];
                         index[d] = 0;
                       }
                     }
                   });
}

template <typename Op>
class BinaryKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BinaryKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<BinaryKernel>(new BinaryKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, a->dtype(), 1, node_));
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(a->shape(), b->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, a->dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const BroadcastLoop loop = MakeLoop(a->shape(), b->shape(), out_shape);
    switch (a->dtype()) {
      case DataType::kFloat32:
        return Run<float>(loop, *a, *b, *out, ctx);
      case DataType::kInt32:
        return Run<int32_t>(loop, *a, *b, *out, ctx);
      case DataType::kInt64:
        return Run<int64_t>(loop, *a, *b, *out, ctx);
      default:
        return node_.Unimplemented(
            absl::StrCat("element type ", engine::DataTypeName(a->dtype()), " is not supported"));
    }
  }

 private:
  explicit BinaryKernel(const KernelInfo& info) : node_(info) {}

  template <typename T>
  absl::Status Run(const BroadcastLoop& loop, const Tensor& a, const Tensor& b, Tensor& out,
                   KernelContext& ctx) const {
    RunBroadcast<Op>(loop, a.data<T>(), b.data<T>(), out.mutable_data<T>(), ctx.threads());
    return absl::OkStatus();
  }

  const NodeLabel node_;
};

class ReluKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ReluKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ReluKernel>(new ReluKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape()));
    const float* in = x->data<float>();
    float* out = y->mutable_data<float>();
    ctx.threads().ParallelFor(x->NumElements(), kGrain, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) out[i] = in[i] < 0.0f ? 0.0f : in[i];  // NaN stays
    });
    return absl::OkStatus();
  }

 private:
  explicit ReluKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

}  // namespace

absl::Status RegisterElementwiseKernels(engine::KernelRegistry& registry) {
  const std::vector<DataType> types = {DataType::kFloat32, DataType::kInt32, DataType::kInt64};
  return RegisterAll(
      registry,
      {CpuDef(engine::kOnnxDomain, "Add", 7, kMaxOpset, types, FactoryOf<BinaryKernel<AddOp>>()),
       CpuDef(engine::kOnnxDomain, "Mul", 7, kMaxOpset, types, FactoryOf<BinaryKernel<MulOp>>()),
       CpuDef(engine::kOnnxDomain, "Relu", 6, kMaxOpset, {DataType::kFloat32},
              FactoryOf<ReluKernel>())});
}

}  // namespace inferd::kernels::cpu

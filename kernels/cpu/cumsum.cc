// CumSum (opset 11+; float32, float64, int32, int64): running sums along the axis given by input
// 1 (an int32 or int64 scalar or [1] tensor, negative counts from the back); `exclusive` leaves
// each element out of its own sum, `reverse` runs from the end. Seen as [outer, n, inner]: with
// inner == 1 a sequential scan per row; otherwise row i of a block is row i-1 plus input row i
// (vectorized across the inner columns). Parallel over rows or column tiles of blocks.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kGrain = 16 * 1024;  // elements per thread, at least

constexpr int64_t kTile = 1024;  // columns per work item of the strided path

// `width` columns of a block of n rows `inner` apart: y[i] = sum of x[j] for j before (or,
// reversed, after) i, with or without i itself.
template <typename T>
void ScanBlock(const T* x, T* y, int64_t n, int64_t inner, int64_t width, bool exclusive,
               bool reverse) {
  // Visit rows in scan order: row r of the visit is input row (reverse ? n-1-r : r).
  const int64_t first = reverse ? n - 1 : 0;
  const int64_t step = (reverse ? -1 : 1) * inner;
  const T* xi = x + first * inner;
  T* yi = y + first * inner;
  if (width == 1) {
    T acc = T(0);
    for (int64_t r = 0; r < n; ++r, xi += step, yi += step) {
      if (exclusive) {
        *yi = acc;
        acc += *xi;
      } else {
        acc += *xi;
        *yi = acc;
      }
    }
    return;
  }
  // Row by row: the previous output row plus the current (or previous, exclusive) input row.
  const T* prev_y = nullptr;
  const T* prev_x = nullptr;
  for (int64_t r = 0; r < n; ++r, xi += step, yi += step) {
    if (r == 0) {
      if (exclusive) {
        std::fill(yi, yi + width, T(0));
      } else {
        std::copy(xi, xi + width, yi);
      }
    } else {
      const T* add = exclusive ? prev_x : xi;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) yi[j] = prev_y[j] + add[j];
    }
    prev_y = yi;
    prev_x = xi;
  }
}

template <typename T>
void Run(const Tensor& x, Tensor& y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
         bool reverse, engine::ThreadPool& pool) {
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t work = n * std::min(inner, kTile);
  pool.ParallelFor(outer * tiles, std::max<int64_t>(1, kGrain / work),
                   [&](int64_t begin, int64_t end) {
                     int64_t o = begin / tiles, t = begin % tiles;  // one division per chunk
                     for (int64_t w = begin; w < end; ++w) {
                       const int64_t offset = o * n * inner + t * kTile;
                       ScanBlock(in + offset, out + offset, n, inner,
                                 std::min(kTile, inner - t * kTile), exclusive, reverse);
                       if (++t == tiles) t = 0, ++o;
                     }
                   });
}

class CumSumKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<CumSumKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<CumSumKernel>(new CumSumKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1, node_));
    if (axis_t->NumElements() != 1 || axis_t->shape().rank() > 1) {
      return node_.InvalidArgument(absl::StrCat("axis (input 1) must hold one value, got shape ",
                                                axis_t->shape().ToString()));
    }
    int64_t axis_value = 0;
    if (axis_t->dtype() == DataType::kInt64) {
      axis_value = axis_t->data<int64_t>()[0];
    } else if (axis_t->dtype() == DataType::kInt32) {
      axis_value = axis_t->data<int32_t>()[0];
    } else {
      return node_.InvalidArgument(absl::StrCat("axis (input 1) has element type ",
                                                engine::DataTypeName(axis_t->dtype()),
                                                ", expected int32 or int64"));
    }
    const Shape& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    if (rank == 0) return node_.InvalidArgument("input must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_value, rank, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const int64_t outer = shape.SizeBetween(0, axis), n = shape[axis];
    const int64_t inner = shape.SizeFrom(axis + 1);
    engine::ThreadPool& pool = ctx.threads();
    return Dispatch(ReduceTypes{}, x->dtype(), node_, [&](auto tag) {
      Run<typename decltype(tag)::type>(*x, *y, outer, n, inner, exclusive_, reverse_, pool);
      return absl::OkStatus();
    });
  }

 private:
  explicit CumSumKernel(const KernelInfo& info)
      : node_(info),
        exclusive_(info.GetInt("exclusive", 0) != 0),
        reverse_(info.GetInt("reverse", 0) != 0) {}

  const NodeLabel node_;
  const bool exclusive_;
  const bool reverse_;
};

}  // namespace

std::vector<engine::KernelDef> CumSumKernelDefs() {
  // 11: float, double, int32, int64 (14 adds 16-bit floats, not supported here).
  return {CpuDef(engine::kOnnxDomain, "CumSum", 11, kMaxOpset, TypesOf(ReduceTypes{}),
                 FactoryOf<CumSumKernel>())};
}

}  // namespace inferd::kernels::cpu

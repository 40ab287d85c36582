// TopK (float32, float64, int32, int64): the k largest (or, opset 11+ with largest=0, smallest)
// values along `axis` (default -1) and their int64 indices, in order; equal values keep the
// smaller index first, as the ONNX reference does, and NaN counts as larger than any number.
// k is the attribute `k` in opset 1 and the input K ([1] int64) from opset 10. Always sorted
// (sorted=0 leaves the order unspecified). Seen as [outer, n, inner], each of the outer * inner
// lines is selected on its own, in parallel: for k <= 16 in one pass keeping the k best so far
// (no scratch); otherwise with nth_element + sort of the first k (O(n + k log k)) over the line
// gathered into per-worker arena scratch.
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

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

constexpr int64_t kGrain = 16 * 1024;  // input elements per worker, at least

// a > b, with NaN above every number (a strict weak order, safe for std::sort).
template <typename T>
inline bool Greater(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

struct Geometry {
  int64_t outer = 0, n = 0, inner = 0, k = 0;
};

// Lines [begin, end) with one worker's scratch (n values and n indices).
template <typename T>
void SelectLines(const Geometry& g, bool largest, const T* x, T* values, int64_t* indices,
                 int64_t begin, int64_t end, T* scratch_values, int64_t* scratch_index) {
  const T* v = scratch_values;
  auto before = [&](int64_t a, int64_t b) {
    if (largest ? Greater(v[a], v[b]) : Greater(v[b], v[a])) return true;
    if (largest ? Greater(v[b], v[a]) : Greater(v[a], v[b])) return false;
    return a < b;
  };
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / g.inner, i = line % g.inner;
    const T* src = x + o * g.n * g.inner + i;
    if (g.inner == 1) {
      std::copy(src, src + g.n, scratch_values);
    } else {
      for (int64_t j = 0; j < g.n; ++j) scratch_values[j] = src[j * g.inner];
    }
    for (int64_t j = 0; j < g.n; ++j) scratch_index[j] = j;
    if (g.k < g.n)
      std::nth_element(scratch_index, scratch_index + g.k, scratch_index + g.n, before);
    std::sort(scratch_index, scratch_index + g.k, before);
    const int64_t out = o * g.k * g.inner + i;
    for (int64_t j = 0; j < g.k; ++j) {
      values[out + j * g.inner] = v[scratch_index[j]];
      indices[out + j * g.inner] = scratch_index[j];
    }
  }
}

constexpr int64_t kSmallK = 16;

// k <= kSmallK: one pass over each line keeping the k best so far in order; most values are
// rejected by one comparison with the current k-th. A later equal value never displaces an
// earlier one, so ties keep the smaller index. No scratch.
template <typename T>
void SelectSmallK(const Geometry& g, bool largest, const T* x, T* values, int64_t* indices,
                  int64_t begin, int64_t end) {
  T best[kSmallK];
  int64_t where[kSmallK];
  auto precedes = [largest](T a, T b) { return largest ? Greater(a, b) : Greater(b, a); };
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / g.inner, i = line % g.inner;
    const T* src = x + o * g.n * g.inner + i;
    int64_t count = 0;
    for (int64_t j = 0; j < g.n; ++j) {
      const T v = src[j * g.inner];
      if (count == g.k && !precedes(v, best[g.k - 1])) continue;
      int64_t p = count < g.k ? count++ : g.k - 1;
      for (; p > 0 && precedes(v, best[p - 1]); --p) {
        best[p] = best[p - 1];
        where[p] = where[p - 1];
      }
      best[p] = v;
      where[p] = j;
    }
    const int64_t out = o * g.k * g.inner + i;
    for (int64_t j = 0; j < g.k; ++j) {
      values[out + j * g.inner] = best[j];
      indices[out + j * g.inner] = where[j];
    }
  }
}

template <typename T>
absl::Status Run(const Geometry& g, bool largest, const Tensor& x, Tensor& values, Tensor& indices,
                 KernelContext& ctx) {
  const int64_t lines = g.outer * g.inner;
  if (g.k <= kSmallK) {
    ctx.threads().ParallelFor(lines, std::max<int64_t>(1, kGrain / g.n),
                              [&](int64_t begin, int64_t end) {
                                SelectSmallK<T>(g, largest, x.data<T>(), values.mutable_data<T>(),
                                                indices.mutable_data<int64_t>(), begin, end);
                              });
    return absl::OkStatus();
  }
  const int64_t workers = std::max<int64_t>(
      1, std::min<int64_t>({lines, ctx.threads().num_threads(), lines * g.n / kGrain}));
  INFERD_ASSIGN_OR_RETURN(Tensor scratch_v,
                          ctx.MakeTemporaryTensor(x.dtype(), Shape{workers, g.n}));
  INFERD_ASSIGN_OR_RETURN(Tensor scratch_i,
                          ctx.MakeTemporaryTensor(DataType::kInt64, Shape{workers, g.n}));
  T* sv = scratch_v.mutable_data<T>();
  int64_t* si = scratch_i.mutable_data<int64_t>();
  ctx.threads().ParallelFor(workers, 1, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      SelectLines<T>(g, largest, x.data<T>(), values.mutable_data<T>(),
                     indices.mutable_data<int64_t>(), lines * w / workers,
                     lines * (w + 1) / workers, sv + w * g.n, si + w * g.n);
    }
  });
  return absl::OkStatus();
}

class TopKKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TopKKernel>> Create(const KernelInfo& info) {
    auto kernel = std::unique_ptr<TopKKernel>(new TopKKernel(info));
    if (info.opset() < 10) {
      INFERD_ASSIGN_OR_RETURN(kernel->k_attr_, info.RequireInt("k"));
    }
    return kernel;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const Shape& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    if (rank == 0) return node_.InvalidArgument("input must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, rank, node_));
    Geometry g;
    g.outer = shape.SizeBetween(0, axis);
    g.n = shape[axis];
    g.inner = shape.SizeFrom(axis + 1);
    g.k = k_attr_;
    if (k_attr_ < 0) {  // opset 10+: input K
      INFERD_ASSIGN_OR_RETURN(const Tensor* k, RequiredInput(ctx, 1, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*k, DataType::kInt64, 1, node_));
      if (k->NumElements() != 1 || k->shape().rank() > 1) {
        return node_.InvalidArgument(
            absl::StrCat("K (input 1) must hold one value, got shape ", k->shape().ToString()));
      }
      g.k = k->data<int64_t>()[0];
    }
    if (g.k < 0 || g.k > g.n) {
      return node_.InvalidArgument(absl::StrCat("k = ", g.k, " is out of range for axis ", axis,
                                                " of shape ", shape.ToString(), " (0..", g.n, ")"));
    }
    Shape out_shape = shape;
    out_shape[axis] = g.k;
    INFERD_ASSIGN_OR_RETURN(Tensor * values, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    INFERD_ASSIGN_OR_RETURN(Tensor * indices, ctx.MakeOutputTensor(1, DataType::kInt64, out_shape));
    if (values->NumElements() == 0) return absl::OkStatus();
    return Dispatch(ReduceTypes{}, x->dtype(), node_, [&](auto tag) {
      return Run<typename decltype(tag)::type>(g, largest_, *x, *values, *indices, ctx);
    });
  }

 private:
  explicit TopKKernel(const KernelInfo& info)
      : node_(info),
        axis_(info.GetInt("axis", -1)),
        largest_(info.opset() < 11 || info.GetInt("largest", 1) != 0) {}

  const NodeLabel node_;
  const int64_t axis_;
  const bool largest_;
  int64_t k_attr_ = -1;  // opset 1-9: the attribute k; -1: input K
};

}  // namespace

std::vector<engine::KernelDef> TopKKernelDefs() {
  const std::vector<DataType> types = TypesOf(ReduceTypes{});
  // 1-9: attribute k; 10: input K; 11+: largest, sorted, negative axes.
  return {CpuDef(engine::kOnnxDomain, "TopK", 1, 9, types, FactoryOf<TopKKernel>()),
          CpuDef(engine::kOnnxDomain, "TopK", 10, 10, types, FactoryOf<TopKKernel>()),
          CpuDef(engine::kOnnxDomain, "TopK", 11, kMaxOpset, types, FactoryOf<TopKKernel>())};
}

}  // namespace inferd::kernels::cpu

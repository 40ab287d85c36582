// GatherElements and GatherND, any fixed-size element type, int32 or int64 indices (negative ones
// count from the end). Every index is checked before anything is written.
// GatherElements (opset 11+): out[i][j][k] = data[idx[i][j][k]][j][k] for axis 0 (likewise for
// the other axes); output shape = indices shape, each indices dim <= the data dim. Parallel over
// rows of the last dimension.
// GatherND (opset 11+, batch_dims from 12): each index tuple of length k = indices.shape[-1]
// selects a slice data[b..., i0, ..., ik-1, :] that is copied with one memcpy; output shape
// indices.shape[:-1] + data.shape[batch_dims + k:].
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Every index within [-dim, dim), or INVALID_ARGUMENT naming the first one that is not.
template <typename Index>
absl::Status CheckIndices(const Index* idx, int64_t count, int64_t dim, const NodeLabel& node) {
  for (int64_t i = 0; i < count; ++i) {
    if (idx[i] < -dim || idx[i] >= dim) {
      return node.InvalidArgument(absl::StrCat("index ", static_cast<int64_t>(idx[i]),
                                               " (at position ", i, ") is out of range for a ",
                                               "dimension of size ", dim));
    }
  }
  return absl::OkStatus();
}

class GatherElementsKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GatherElementsKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<GatherElementsKernel>(new GatherElementsKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(data->dtype());
    if (elem == 0) return UnsupportedType(data->dtype(), node_);
    const Shape& ds = data->shape();
    const Shape& is = indices->shape();
    if (ds.rank() == 0 || is.rank() != ds.rank()) {
      return node_.InvalidArgument(absl::StrCat("data ", ds.ToString(), " and indices ",
                                                is.ToString(), " must have the same rank >= 1"));
    }
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, ds.rank(), node_));
    for (size_t d = 0; d < ds.rank(); ++d) {
      if (static_cast<int>(d) != axis && is[d] > ds[d]) {
        return node_.InvalidArgument(absl::StrCat("indices shape ", is.ToString(),
                                                  " exceeds data shape ", ds.ToString(),
                                                  " outside axis ", axis));
      }
    }
    return WithIndexType(*indices, node_, [&](auto index) {
      return Run<decltype(index)>(*data, *indices, axis, elem, ctx);
    });
  }

 private:
  explicit GatherElementsKernel(const KernelInfo& info)
      : node_(info), axis_(info.GetInt("axis", 0)) {}

  template <typename Index>
  absl::Status Run(const Tensor& data, const Tensor& indices, int axis, size_t elem,
                   KernelContext& ctx) const {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const int64_t dim = ds[axis];
    const Index* idx = indices.data<Index>();
    INFERD_RETURN_IF_ERROR(CheckIndices(idx, indices.NumElements(), dim, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, data.dtype(), is));
    if (out->NumElements() == 0) return absl::OkStatus();
    const size_t rank = ds.rank(), last = rank - 1;
    const Dims dstride = StridesOf(ds);
    const int64_t len = is[last], rows = is.SizeBetween(0, last);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* src = data.data<T>();
      T* dst = out->mutable_data<T>();
      ctx.threads().ParallelFor(
          rows, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(len * sizeof(T), 1)),
          [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              // Data offset of the row without the axis' contribution.
              int64_t base = 0, rest = r;
              for (size_t d = last; d-- > 0;) {
                const int64_t i = rest % is[d];
                rest /= is[d];
                if (static_cast<int>(d) != axis) base += i * dstride[d];
              }
              const Index* ir = idx + r * len;
              T* o = dst + r * len;
              if (static_cast<int>(last) == axis) {
                for (int64_t j = 0; j < len; ++j)
                  o[j] = src[base + (ir[j] < 0 ? ir[j] + dim : ir[j])];
              } else {
                const int64_t as = dstride[axis];
                for (int64_t j = 0; j < len; ++j) {
                  o[j] = src[base + j + (ir[j] < 0 ? ir[j] + dim : ir[j]) * as];
                }
              }
            }
          });
    };
    if (!WithElementSize(elem, run)) return UnsupportedType(data.dtype(), node_);
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int64_t axis_;
};

class GatherNdKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GatherNdKernel>> Create(const KernelInfo& info) {
    const int64_t b = info.opset() >= 12 ? info.GetInt("batch_dims", 0) : 0;
    if (b < 0) return info.Error(absl::StrCat("batch_dims ", b, " must be >= 0"));
    return std::unique_ptr<GatherNdKernel>(new GatherNdKernel(info, b));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(data->dtype());
    if (elem == 0) return UnsupportedType(data->dtype(), node_);
    return WithIndexType(*indices, node_, [&](auto index) {
      return Run<decltype(index)>(*data, *indices, elem, ctx);
    });
  }

 private:
  GatherNdKernel(const KernelInfo& info, int64_t batch_dims)
      : node_(info), batch_dims_(batch_dims) {}

  template <typename Index>
  absl::Status Run(const Tensor& data, const Tensor& indices, size_t elem,
                   KernelContext& ctx) const {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const size_t b = static_cast<size_t>(batch_dims_);
    const int64_t k = is.rank() == 0 ? 0 : is[is.rank() - 1];
    if (is.rank() < 1 || b >= is.rank() || b >= ds.rank() || k < 1 ||
        k > static_cast<int64_t>(ds.rank() - b)) {
      return node_.InvalidArgument(absl::StrCat("indices ", is.ToString(), " with batch_dims ", b,
                                                " do not index data ", ds.ToString()));
    }
    for (size_t d = 0; d < b; ++d) {
      if (is[d] != ds[d]) {
        return node_.InvalidArgument(absl::StrCat("batch dimension ", d, " differs: indices ",
                                                  is.ToString(), ", data ", ds.ToString()));
      }
    }
    Shape out_shape;
    for (size_t d = 0; d + 1 < is.rank(); ++d) out_shape.push_back(is[d]);
    for (size_t d = b + k; d < ds.rank(); ++d) out_shape.push_back(ds[d]);
    const Index* idx = indices.data<Index>();
    const int64_t tuples = is.SizeBetween(0, is.rank() - 1);  // batches * tuples per batch
    const int64_t per_batch = is.SizeBetween(b, is.rank() - 1);
    const Dims dstride = StridesOf(ds);
    // pass 1: check every index.
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < k; ++j) {
        const int64_t v = idx[t * k + j], dim = ds[b + j];
        if (v < -dim || v >= dim) {
          return node_.InvalidArgument(absl::StrCat("index ", v, " (tuple ", t, ", position ", j,
                                                    ") is out of range for dimension ", b + j,
                                                    " of data ", ds.ToString()));
        }
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, data.dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // pass 2: one memcpy of prod(data.shape[b+k:]) elements per tuple.
    const size_t slice = static_cast<size_t>(ds.SizeFrom(b + k)) * elem;
    const int64_t batch_stride = b == 0 ? 0 : dstride[b - 1];
    const auto* src = static_cast<const unsigned char*>(data.raw_data());
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    ctx.threads().ParallelFor(tuples,
                              std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(slice, 1)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t t = begin; t < end; ++t) {
                                  int64_t off = (t / per_batch) * batch_stride;
                                  for (int64_t j = 0; j < k; ++j) {
                                    const int64_t v = idx[t * k + j];
                                    off += (v < 0 ? v + ds[b + j] : v) * dstride[b + j];
                                  }
                                  std::memcpy(dst + t * slice, src + off * elem, slice);
                                }
                              });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int64_t batch_dims_;
};

}  // namespace

std::vector<engine::KernelDef> GatherNdKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {
      CpuDef(engine::kOnnxDomain, "GatherElements", 11, kMaxOpset, types,
             FactoryOf<GatherElementsKernel>()),
      CpuDef(engine::kOnnxDomain, "GatherND", 11, 11, types, FactoryOf<GatherNdKernel>()),
      CpuDef(engine::kOnnxDomain, "GatherND", 12, kMaxOpset, types, FactoryOf<GatherNdKernel>())};
}

}  // namespace inferd::kernels::cpu

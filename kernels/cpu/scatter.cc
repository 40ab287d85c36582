// ScatterND (opset 11+), ScatterElements (11+) and its deprecated twin Scatter (9-10). The output
// is a copy of data (parallel memcpy) into which updates are written at the indexed positions,
// in index order (so repeated indices accumulate with a reduction, and the last write wins
// without one). Reductions (opset 16+): none (any fixed-size type), add, mul (numeric types;
// max and min of opset 18 too). Indices are int32 or int64, negative ones count from the end,
// all checked before anything is written.
// ScatterND: indices [..., k] select slices data[i0, ..., ik-1, :] of prod(data.shape[k:])
// elements, each written with one memcpy (or one reduction loop); updates have shape
// indices.shape[:-1] + data.shape[k:].
// ScatterElements: out[idx[i][j]][j] = updates[i][j] for axis 0 (likewise for other axes);
// updates have the shape of indices.
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

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<Reduction> ParseReduction(const KernelInfo& info) {
  if (info.opset() < 16) return Reduction::kNone;
  const std::string r = info.GetString("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return info.Error(absl::StrCat("unknown reduction '", r, "'"));
}

template <typename T>
void Reduce(Reduction r, T* dst, const T* src, int64_t n) {
  switch (r) {
    case Reduction::kAdd:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]);
      break;
    case Reduction::kMul:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]);
      break;
    case Reduction::kMax:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
      break;
    case Reduction::kMin:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]);
      break;
    case Reduction::kNone:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
      break;
  }
}

// Common part: inputs, the output as a copy of data, the index type dispatch.
class ScatterBase : public engine::OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* updates, RequiredInput(ctx, 2, node_));
    const size_t elem = engine::ElementSize(data->dtype());
    if (elem == 0) return UnsupportedType(data->dtype(), node_);
    INFERD_RETURN_IF_ERROR(CheckType(*updates, data->dtype(), 2, node_));
    if (reduction_ != Reduction::kNone && !Visit(NumericTypes{}, data->dtype(), [](auto) {})) {
      return node_.Unimplemented(
          absl::StrCat("reduction on element type ", engine::DataTypeName(data->dtype())));
    }
    if (indices->dtype() != DataType::kInt64 && indices->dtype() != DataType::kInt32) {
      return node_.InvalidArgument(absl::StrCat("indices have element type ",
                                                engine::DataTypeName(indices->dtype()),
                                                ", expected int32 or int64"));
    }
    INFERD_RETURN_IF_ERROR(Validate(*data, *indices, *updates));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, data->dtype(), data->shape()));
    ParallelMemcpy(out->raw_mutable_data(), data->raw_data(), data->bytes(), ctx.threads());
    ApplyUpdates(*data, *indices, *updates, elem, out);
    return absl::OkStatus();
  }

 protected:
  ScatterBase(const KernelInfo& info, Reduction reduction) : node_(info), reduction_(reduction) {}

  // Shapes and every index checked; nothing written yet.
  virtual absl::Status Validate(const Tensor& data, const Tensor& indices,
                                const Tensor& updates) const = 0;
  // Writes updates into `out` (already a copy of data); indices are int32 or int64.
  virtual void ApplyUpdates(const Tensor& data, const Tensor& indices, const Tensor& updates,
                            size_t elem, Tensor* out) const = 0;

  // dst[0..n) (op)= src[0..n), element type `type`.
  void Write(DataType type, size_t elem, void* dst, const void* src, int64_t n) const {
    if (reduction_ == Reduction::kNone) {
      std::memcpy(dst, src, static_cast<size_t>(n) * elem);
      return;
    }
    Visit(NumericTypes{}, type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Reduce<T>(reduction_, static_cast<T*>(dst), static_cast<const T*>(src), n);
    });
  }

  const NodeLabel node_;
  const Reduction reduction_;
};

class ScatterNdKernel final : public ScatterBase {
 public:
  static absl::StatusOr<std::unique_ptr<ScatterNdKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(Reduction r, ParseReduction(info));
    return std::unique_ptr<ScatterNdKernel>(new ScatterNdKernel(info, r));
  }

 private:
  ScatterNdKernel(const KernelInfo& info, Reduction r) : ScatterBase(info, r) {}

  absl::Status Validate(const Tensor& data, const Tensor& indices,
                        const Tensor& updates) const override {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const Shape& us = updates.shape();
    const int64_t k = is.rank() == 0 ? 0 : is[is.rank() - 1];
    Shape expected;
    for (size_t d = 0; d + 1 < is.rank(); ++d) expected.push_back(is[d]);
    for (size_t d = std::max<int64_t>(k, 0); d < ds.rank(); ++d) expected.push_back(ds[d]);
    if (is.rank() < 1 || k < 1 || k > static_cast<int64_t>(ds.rank()) || us != expected) {
      return node_.InvalidArgument(
          absl::StrCat("data ", ds.ToString(), ", indices ", is.ToString(), " and updates ",
                       us.ToString(), " do not fit (updates should be ", expected.ToString(), ")"));
    }
    const int64_t count = indices.NumElements();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = indices.dtype() == DataType::kInt64 ? indices.data<int64_t>()[i]
                                                            : indices.data<int32_t>()[i];
      const int64_t dim = ds[i % k];
      if (v < -dim || v >= dim) {
        return node_.InvalidArgument(absl::StrCat("index ", v, " (position ", i,
                                                  ") is out of range for dimension ", i % k,
                                                  " of data ", ds.ToString()));
      }
    }
    return absl::OkStatus();
  }

  template <typename Index>
  void Run(const Tensor& data, const Tensor& indices, const Tensor& updates, size_t elem,
           Tensor* out) const {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const int64_t k = is[is.rank() - 1];
    const int64_t tuples = is.SizeBetween(0, is.rank() - 1);
    const int64_t slice = ds.SizeFrom(k);
    const Dims dstride = StridesOf(ds);
    const Index* idx = indices.data<Index>();
    const auto* src = static_cast<const unsigned char*>(updates.raw_data());
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t v = idx[t * k + j];
        off += (v < 0 ? v + ds[j] : v) * dstride[j];
      }
      Write(data.dtype(), elem, dst + off * elem, src + t * slice * elem, slice);
    }
  }

  void ApplyUpdates(const Tensor& d, const Tensor& i, const Tensor& u, size_t elem,
                    Tensor* out) const override {
    if (i.dtype() == DataType::kInt64) {
      Run<int64_t>(d, i, u, elem, out);
    } else {
      Run<int32_t>(d, i, u, elem, out);
    }
  }
};

class ScatterElementsKernel final : public ScatterBase {
 public:
  static absl::StatusOr<std::unique_ptr<ScatterElementsKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(Reduction r, ParseReduction(info));
    return std::unique_ptr<ScatterElementsKernel>(new ScatterElementsKernel(info, r));
  }

 private:
  ScatterElementsKernel(const KernelInfo& info, Reduction r)
      : ScatterBase(info, r), axis_(info.GetInt("axis", 0)) {}

  absl::Status Validate(const Tensor& data, const Tensor& indices,
                        const Tensor& updates) const override {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    if (ds.rank() == 0 || is.rank() != ds.rank() || updates.shape() != is) {
      return node_.InvalidArgument(absl::StrCat(
          "data ", ds.ToString(), ", indices ", is.ToString(), " and updates ",
          updates.shape().ToString(), " must have the same rank >= 1 (updates shaped as indices)"));
    }
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, ds.rank(), node_));
    for (size_t d = 0; d < ds.rank(); ++d) {
      if (static_cast<int>(d) != axis && is[d] > ds[d]) {
        return node_.InvalidArgument(absl::StrCat("indices shape ", is.ToString(),
                                                  " exceeds data shape ", ds.ToString(),
                                                  " outside axis ", axis));
      }
    }
    const int64_t dim = ds[axis], count = indices.NumElements();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = indices.dtype() == DataType::kInt64 ? indices.data<int64_t>()[i]
                                                            : indices.data<int32_t>()[i];
      if (v < -dim || v >= dim) {
        return node_.InvalidArgument(absl::StrCat(
            "index ", v, " (position ", i, ") is out of range for axis ", axis, " of size ", dim));
      }
    }
    return absl::OkStatus();
  }

  template <typename Index>
  void Run(const Tensor& data, const Tensor& indices, const Tensor& updates, size_t elem,
           Tensor* out) const {
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    const size_t rank = ds.rank();
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + static_cast<int64_t>(rank) : axis_);
    const Dims dstride = StridesOf(ds);
    const int64_t dim = ds[axis], count = indices.NumElements();
    const Index* idx = indices.data<Index>();
    const auto* src = static_cast<const unsigned char*>(updates.raw_data());
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    Dims index(rank, 0);
    int64_t base = 0;  // data offset of `index` without the axis' contribution
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = idx[i] < 0 ? idx[i] + dim : idx[i];
      Write(data.dtype(), elem, dst + (base + v * dstride[axis]) * elem, src + i * elem, 1);
      for (size_t d = rank; d-- > 0;) {  // odometer over the indices' shape
        const int64_t step = static_cast<int>(d) == axis ? 0 : dstride[d];
        base += step;
        if (++index[d] < is[d]) break;
        base -= index[d] * step;
        index[d] = 0;
      }
    }
  }

  void ApplyUpdates(const Tensor& d, const Tensor& i, const Tensor& u, size_t elem,
                    Tensor* out) const override {
    if (i.dtype() == DataType::kInt64) {
      Run<int64_t>(d, i, u, elem, out);
    } else {
      Run<int32_t>(d, i, u, elem, out);
    }
  }

  const int64_t axis_;
};

}  // namespace

std::vector<engine::KernelDef> ScatterKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {
      CpuDef(engine::kOnnxDomain, "ScatterND", 11, 15, types, FactoryOf<ScatterNdKernel>()),
      CpuDef(engine::kOnnxDomain, "ScatterND", 16, kMaxOpset, types, FactoryOf<ScatterNdKernel>()),
      CpuDef(engine::kOnnxDomain, "Scatter", 9, 10, types, FactoryOf<ScatterElementsKernel>()),
      CpuDef(engine::kOnnxDomain, "ScatterElements", 11, 15, types,
             FactoryOf<ScatterElementsKernel>()),
      CpuDef(engine::kOnnxDomain, "ScatterElements", 16, kMaxOpset, types,
             FactoryOf<ScatterElementsKernel>())};
}

}  // namespace inferd::kernels::cpu

// Gather: out = data indexed along `axis` by int32 or int64 indices (negative ones count from the
// end); output shape data[:axis] + indices + data[axis+1:]. Pure data movement: any fixed-size
// element type (float32, int64 and int32 in the models we serve). Indices are checked before
// anything is written. Own code, parallel over the copied blocks.
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

class GatherKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GatherKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<GatherKernel>(new GatherKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(data->dtype());
    if (elem == 0) return UnsupportedType(data->dtype(), node_);
    const Shape& ds = data->shape();
    if (ds.rank() == 0) return node_.InvalidArgument("data must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, ds.rank(), node_));
    return WithIndexType(*indices, node_, [&](auto index) {
      return Run<decltype(index)>(*data, *indices, axis, elem, ctx);
    });
  }

 private:
  explicit GatherKernel(const KernelInfo& info) : node_(info), axis_(info.GetInt("axis", 0)) {}

  template <typename Index>
  absl::Status Run(const Tensor& data, const Tensor& indices, int axis, size_t elem,
                   KernelContext& ctx) const {
    const Shape& ds = data.shape();
    const int64_t dim = ds[axis];
    const int64_t count = indices.NumElements();
    const Index* idx = indices.data<Index>();
    // pass 1: check every index before writing anything.
    for (int64_t i = 0; i < count; ++i) {
      if (idx[i] < -dim || idx[i] >= dim) {
        return node_.InvalidArgument(absl::StrCat("index ", static_cast<int64_t>(idx[i]),
                                                  " (at position ", i,
                                                  ") is out of range for axis ", axis, " of size ",
                                                  dim, " (data shape ", ds.ToString(), ")"));
      }
    }
    Shape out_shape;
    for (int i = 0; i < axis; ++i) out_shape.push_back(ds[i]);
    for (int64_t d : indices.shape().dims()) out_shape.push_back(d);
    for (size_t i = axis + 1; i < ds.rank(); ++i) out_shape.push_back(ds[i]);
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, data.dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // pass 2: copy one block of prod(data[axis+1:]) elements per (outer, index) pair.
    const int64_t outer = ds.SizeBetween(0, axis);
    const size_t block = static_cast<size_t>(ds.SizeFrom(axis + 1)) * elem;
    const auto* src = static_cast<const unsigned char*>(data.raw_data());
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    ctx.threads().ParallelFor(
        outer * count, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(block, 1)),
        [&](int64_t begin, int64_t end) {
          int64_t i = begin % count;  // index position; `base` is the data of outer index o
          const unsigned char* base = src + (begin / count) * dim * block;
          auto next = [&] {
            if (++i == count) {
              i = 0;
              base += dim * block;
            }
          };
          // Blocks of one element (axis = last): a typed move instead of a memcpy call.
          const bool typed = WithElementSize(block, [&](auto tag) {
            using T = decltype(tag);
            for (int64_t j = begin; j < end; ++j) {
              const int64_t k = idx[i] < 0 ? idx[i] + dim : idx[i];
              std::memcpy(dst + j * sizeof(T), base + k * sizeof(T), sizeof(T));
              next();
            }
          });
          if (typed) return;
          for (int64_t j = begin; j < end; ++j) {
            const int64_t k = idx[i] < 0 ? idx[i] + dim : idx[i];
            std::memcpy(dst + j * block, base + k * block, block);
            next();
          }
        });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const int64_t axis_;
};

}  // namespace

std::vector<engine::KernelDef> GatherKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Gather", 1, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<GatherKernel>())};
}

}  // namespace inferd::kernels::cpu

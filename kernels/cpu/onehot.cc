// OneHot (opset 9+; negative indices and axes from 11, accepted throughout). Inputs: indices (any
// numeric type, fractional values truncated), depth (numeric scalar or one-element tensor),
// values [off, on] of any fixed-size type, which is the output's type. The output inserts a
// dimension of size depth at `axis` (default -1, in [-r-1, r]); an index outside [-depth, depth)
// gives an all-off row, as the spec says. Filled with `off` in parallel, then one `on` per index.
#include <cmath>
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

class OneHotKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OneHotKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<OneHotKernel>(new OneHotKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* depth_t, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* values, RequiredInput(ctx, 2, node_));
    const size_t elem = engine::ElementSize(values->dtype());
    if (elem == 0) return UnsupportedType(values->dtype(), node_);
    if (values->NumElements() != 2) {
      return node_.InvalidArgument(
          absl::StrCat("values must hold [off, on], got shape ", values->shape().ToString()));
    }
    double depth_d;
    if (depth_t->NumElements() != 1 || !ReadScalarAsDouble(*depth_t, &depth_d) ||
        !(std::abs(depth_d) < 1e15)) {
      return node_.InvalidArgument("depth must be one finite numeric value");
    }
    const int64_t depth = static_cast<int64_t>(depth_d);
    if (depth < 1) return node_.InvalidArgument(absl::StrCat("depth ", depth, " must be >= 1"));
    const Shape& is = indices->shape();
    const int64_t rank = static_cast<int64_t>(is.rank());
    if (axis_ < -rank - 1 || axis_ > rank) {
      return node_.InvalidArgument(
          absl::StrCat("axis ", axis_, " is out of range for rank ", rank + 1));
    }
    const int64_t axis = axis_ < 0 ? axis_ + rank + 1 : axis_;
    Shape out_shape;
    for (int64_t d = 0; d < axis; ++d) out_shape.push_back(is[d]);
    out_shape.push_back(depth);
    for (int64_t d = axis; d < rank; ++d) out_shape.push_back(is[d]);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, values->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    // Indices as int64 (other numeric types converted into an arena temporary).
    const int64_t count = indices->NumElements();
    const int64_t* iv = indices->data<int64_t>();
    Tensor converted;
    if (indices->dtype() != DataType::kInt64) {
      INFERD_ASSIGN_OR_RETURN(converted, ctx.MakeTemporaryTensor(DataType::kInt64, Shape{count}));
      int64_t* cv = converted.mutable_data<int64_t>();
      const bool numeric = Visit(NumericTypes{}, indices->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* v = indices->data<T>();
        for (int64_t i = 0; i < count; ++i) cv[i] = static_cast<int64_t>(v[i]);
      });
      if (!numeric) {
        return node_.InvalidArgument(absl::StrCat("indices have non-numeric element type ",
                                                  engine::DataTypeName(indices->dtype())));
      }
      iv = cv;
    }
    const int64_t outer = is.SizeBetween(0, axis), inner = is.SizeFrom(axis);
    WithElementSize(elem, [&](auto tag) {
      using T = decltype(tag);
      const T off = values->data<T>()[0], on = values->data<T>()[1];
      T* out = y->mutable_data<T>();
      const int64_t block = depth * inner;
      ctx.threads().ParallelFor(
          outer, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(block * sizeof(T), 1)),
          [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
              T* ob = out + o * block;
              FillN(ob, block, off);
              for (int64_t i = 0; i < inner; ++i) {
                int64_t v = iv[o * inner + i];
                if (v < 0) v += depth;
                if (v >= 0 && v < depth) ob[v * inner + i] = on;
              }
            }
          });
    });
    return absl::OkStatus();
  }

 private:
  explicit OneHotKernel(const KernelInfo& info) : node_(info), axis_(info.GetInt("axis", -1)) {}

  const NodeLabel node_;
  const int64_t axis_;
};

}  // namespace

std::vector<engine::KernelDef> OneHotKernelDefs() {
  engine::KernelDef def = CpuDef(engine::kOnnxDomain, "OneHot", 9, kMaxOpset, FixedSizeTypes(),
                                 FactoryOf<OneHotKernel>());
  def.type_input = 2;  // keyed on values, the output's type
  std::vector<engine::KernelDef> defs;
  defs.push_back(std::move(def));
  return defs;
}

}  // namespace inferd::kernels::cpu

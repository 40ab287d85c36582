// Expand (opset 8+) and Tile (opset 6+), any fixed-size element type.
// Expand: the input broadcast (numpy, both directions) with the int64 `shape` input; when the
// result has the input's shape the output is an alias of the input.
// Tile: each dimension d repeated repeats[d] times (int64 input, one entry per dimension).
// Both are one StridedCopy: Expand reads broadcast dims with stride 0; Tile views the output as
// [r0, d0, r1, d1, ...] and reads the r dims with stride 0. Rows are memcpy (or a fill when the
// innermost dim is broadcast), parallel over rows.
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

class ExpandKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ExpandKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<ExpandKernel>(new ExpandKernel(info));
    // Known at load to keep the shape: the output is a view in every run.
    const std::optional<Shape> in = StaticInputShape(info, 0);
    const Tensor* shape = info.input(1).constant;
    if (in && shape != nullptr && shape->dtype() == DataType::kInt64 &&
        shape->shape().rank() == 1) {
      absl::StatusOr<Shape> out = k->OutputShape(*in, *shape);
      k->view_ = out.ok() && *out == *in;
    }
    return k;
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (view_) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* shape, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    INFERD_RETURN_IF_ERROR(CheckType(*shape, DataType::kInt64, 1, node_));
    if (shape->shape().rank() != 1) {
      return node_.InvalidArgument(
          absl::StrCat("the shape input must be 1-D, got ", shape->shape().ToString()));
    }
    const Shape& in = x->shape();
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, OutputShape(in, *shape));
    if (out_shape == in) return ctx.MakeOutputAlias(0, 0, out_shape).status();
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const size_t rank = out_shape.rank(), lead = rank - in.rank();
    const Dims in_strides = StridesOf(in);
    Dims strides(rank, 0);
    for (size_t d = lead; d < rank; ++d) {
      strides[d] = in[d - lead] == 1 ? 0 : in_strides[d - lead];
    }
    StridedCopy(x->raw_data(), y->raw_mutable_data(), elem, out_shape.dims(), strides, 0,
                ctx.threads());
    return absl::OkStatus();
  }

 private:
  explicit ExpandKernel(const KernelInfo& info) : node_(info) {}

  absl::StatusOr<Shape> OutputShape(const Shape& in, const Tensor& shape) const {
    const int64_t* v = shape.data<int64_t>();
    Shape target;
    for (int64_t i = 0; i < shape.NumElements(); ++i) {
      if (v[i] < 0) {
        return node_.InvalidArgument(absl::StrCat("invalid dimension ", v[i], " in shape [",
                                                  absl::StrJoin(v, v + shape.NumElements(), ","),
                                                  "]"));
      }
      target.push_back(v[i]);
    }
    return BroadcastShapes(in, target, node_);
  }

  const NodeLabel node_;
  bool view_ = false;
};

class TileKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TileKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<TileKernel>(new TileKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* repeats_t, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    Dims repeats;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*repeats_t, "repeats", node_, &repeats));
    const Shape& in = x->shape();
    if (repeats.size() != in.rank()) {
      return node_.InvalidArgument(
          absl::StrCat("repeats has ", repeats.size(), " entries for input ", in.ToString()));
    }
    Shape out_shape;
    Dims dims, strides;
    const Dims in_strides = StridesOf(in);
    for (size_t d = 0; d < in.rank(); ++d) {
      if (repeats[d] < 0) {
        return node_.InvalidArgument(absl::StrCat("repeats[", d, "] = ", repeats[d], " < 0"));
      }
      out_shape.push_back(in[d] * repeats[d]);
      dims.push_back(repeats[d]);
      strides.push_back(0);
      dims.push_back(in[d]);
      strides.push_back(in_strides[d]);
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    StridedCopy(x->raw_data(), y->raw_mutable_data(), elem, dims, strides, 0, ctx.threads());
    return absl::OkStatus();
  }

 private:
  explicit TileKernel(const KernelInfo& info) : node_(info) {}

  const NodeLabel node_;
};

}  // namespace

std::vector<engine::KernelDef> ExpandTileKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "Expand", 8, kMaxOpset, types, FactoryOf<ExpandKernel>()),
          CpuDef(engine::kOnnxDomain, "Tile", 6, kMaxOpset, types, FactoryOf<TileKernel>())};
}

}  // namespace inferd::kernels::cpu

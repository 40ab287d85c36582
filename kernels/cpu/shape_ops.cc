// Reshape and Concat: pure data movement for any fixed-size element type.
// Reshape: the target comes from the int64 `shape` input (the attribute before opset 5); 0 copies
// the input's dimension at that index (opsets 1-13, and 14+ unless allowzero=1, where 0 is a zero
// dimension), one -1 is inferred. The output is an alias of the input (no copy when the plan
// allows it).
// Concat: inputs of equal rank and dims except `axis` (negative from the end; required from
// opset 4, default 1 before), copied block by block in parallel; a single input is aliased.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_types.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kGrainBytes = 64 * 1024;  // bytes per thread, at least

class ReshapeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ReshapeKernel>> Create(const KernelInfo& info) {
    const bool allow_zero = info.opset() >= 14 && info.GetInt("allowzero", 0) != 0;
    auto k = std::unique_ptr<ReshapeKernel>(new ReshapeKernel(info, allow_zero));
    if (info.opset() < 5) {
      if (!info.HasAttribute("shape")) return info.Error("attribute 'shape' is required");
      k->shape_attr_ = info.GetInts("shape");
    }
    return k;
  }

  // The output is the input seen with another shape: a view, always.
  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, node_));
    if (shape_attr_) {  // Reshape-1: the target is the `shape` attribute
      INFERD_ASSIGN_OR_RETURN(Shape out, TargetShape(data->shape(), shape_attr_->data(),
                                                     static_cast<int64_t>(shape_attr_->size())));
      return ctx.MakeOutputAlias(0, 0, out).status();
    }
    INFERD_ASSIGN_OR_RETURN(const Tensor* shape, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*shape, DataType::kInt64, 1, node_));
    if (shape->shape().rank() != 1) {
      return node_.InvalidArgument(
          absl::StrCat("the shape input must be 1-D, got shape ", shape->shape().ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(
        Shape out, TargetShape(data->shape(), shape->data<int64_t>(), shape->NumElements()));
    return ctx.MakeOutputAlias(0, 0, out).status();
  }

 private:
  ReshapeKernel(const KernelInfo& info, bool allow_zero) : node_(info), allow_zero_(allow_zero) {}

  absl::StatusOr<Shape> TargetShape(const Shape& in, const int64_t* target, int64_t n) const {
    Shape out;
    auto describe = [&] {
      return absl::StrCat(" (input shape ", in.ToString(), ", requested [",
                          absl::StrJoin(absl::MakeSpan(target, n), ","), "])");
    };
    int inferred = -1;
    int64_t known = 1;
    bool has_zero = false;
    for (int64_t i = 0; i < n; ++i) {
      int64_t d = target[i];
      if (d == -1) {
        if (inferred >= 0) return node_.InvalidArgument("more than one -1" + describe());
        inferred = static_cast<int>(i);
      } else if (d < -1) {
        return node_.InvalidArgument(absl::StrCat("invalid dimension ", d, describe()));
      } else if (d == 0 && !allow_zero_) {
        if (i >= static_cast<int64_t>(in.rank())) {
          return node_.InvalidArgument(absl::StrCat("0 at index ", i,
                                                    " copies a dimension the "
                                                    "input does not have",
                                                    describe()));
        }
        d = in[i];
      }
      if (d == 0) has_zero = true;
      out.push_back(d);
      if (d >= 0) known *= d;
    }
    const int64_t total = in.NumElements();
    if (inferred >= 0) {
      if (has_zero && allow_zero_) {
        return node_.InvalidArgument("allowzero=1 does not allow both 0 and -1" + describe());
      }
      if (known == 0 || total % known != 0) {
        return node_.InvalidArgument("cannot infer the -1 dimension" + describe());
      }
      out[inferred] = total / known;
    } else if (known != total) {
      return node_.InvalidArgument(absl::StrCat("the requested shape has ", known,
                                                " elements, the input ", total, describe()));
    }
    return out;
  }

  const NodeLabel node_;
  const bool allow_zero_;
  std::optional<std::vector<int64_t>> shape_attr_;  // opsets 1-4; constant after creation
};

class ConcatKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConcatKernel>> Create(const KernelInfo& info) {
    if (info.opset() < 4) {  // Concat-1: axis optional, default 1
      return std::unique_ptr<ConcatKernel>(new ConcatKernel(info, info.GetInt("axis", 1)));
    }
    INFERD_ASSIGN_OR_RETURN(int64_t axis, info.RequireInt("axis"));
    return std::unique_ptr<ConcatKernel>(new ConcatKernel(info, axis));
  }

  // A single input is the output: a view.
  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (single_input_) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const int n = ctx.num_inputs();
    if (n < 1) return node_.InvalidArgument("at least one input is required");
    INFERD_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 0, node_));
    const DataType type = first->dtype();
    const size_t elem = engine::ElementSize(type);
    if (elem == 0) {
      return node_.Unimplemented(
          absl::StrCat("element type ", engine::DataTypeName(type), " is not supported"));
    }
    const Shape& s0 = first->shape();
    if (s0.rank() == 0) return node_.InvalidArgument("inputs must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, s0.rank(), node_));
    Shape out_shape = s0;
    absl::InlinedVector<const Tensor*, 8> inputs(n);
    for (int i = 0; i < n; ++i) {
      INFERD_ASSIGN_OR_RETURN(inputs[i], RequiredInput(ctx, i, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*inputs[i], type, i, node_));
      const Shape& s = inputs[i]->shape();
      bool ok = s.rank() == s0.rank();
      for (size_t d = 0; ok && d < s.rank(); ++d)
        ok = d == static_cast<size_t>(axis) || s[d] == s0[d];
      if (!ok) {
        return node_.InvalidArgument(absl::StrCat("input ", i, " has shape ", s.ToString(),
                                                  ", which does not match input 0 ", s0.ToString(),
                                                  " outside axis ", axis));
      }
      if (i > 0) out_shape[axis] += s[axis];
    }
    if (n == 1) return ctx.MakeOutputAlias(0, 0, out_shape).status();
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, type, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    // Per outer index (dims before axis), input i contributes a contiguous block.
    const int64_t outer = s0.SizeBetween(0, axis);
    const size_t inner = static_cast<size_t>(s0.SizeFrom(axis + 1)) * elem;
    const size_t out_row = static_cast<size_t>(out_shape[axis]) * inner;
    absl::InlinedVector<size_t, 8> offsets(n);  // of each input's block within an output row
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      offsets[i] = total;
      total += static_cast<size_t>(inputs[i]->shape()[axis]) * inner;
    }
    auto* dst = static_cast<unsigned char*>(out->raw_mutable_data());
    const int64_t min_rows = std::max<int64_t>(1, kGrainBytes / std::max<size_t>(out_row, 1));
    ctx.threads().ParallelFor(outer, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        for (int i = 0; i < n; ++i) {
          const size_t block = static_cast<size_t>(inputs[i]->shape()[axis]) * inner;
          if (block == 0) continue;
          std::memcpy(dst + o * out_row + offsets[i],
                      static_cast<const unsigned char*>(inputs[i]->raw_data()) + o * block, block);
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  ConcatKernel(const KernelInfo& info, int64_t axis)
      : node_(info), axis_(axis), single_input_(info.num_inputs() == 1) {}

  const NodeLabel node_;
  const int64_t axis_;
  const bool single_input_;
};

}  // namespace

std::vector<engine::KernelDef> ShapeKernelDefs() {
  // Reshape 1-4: shape attribute; 5-13: 0 always copies; 14+: allowzero (read at creation).
  std::vector<engine::KernelDef> defs = {
      CpuDef(engine::kOnnxDomain, "Reshape", 1, 4, MovementTypes(), FactoryOf<ReshapeKernel>()),
      CpuDef(engine::kOnnxDomain, "Reshape", 5, 13, MovementTypes(), FactoryOf<ReshapeKernel>()),
      CpuDef(engine::kOnnxDomain, "Reshape", 14, kMaxOpset, MovementTypes(),
             FactoryOf<ReshapeKernel>()),
      CpuDef(engine::kOnnxDomain, "Concat", 1, 3, MovementTypes(), FactoryOf<ConcatKernel>()),
      CpuDef(engine::kOnnxDomain, "Concat", 4, kMaxOpset, MovementTypes(),
             FactoryOf<ConcatKernel>())};
  return defs;
}

}  // namespace inferd::kernels::cpu

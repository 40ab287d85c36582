// The data-movement kernels that are strided copies on CUDA (strided_copy.cu, transpose.cu), any
// fixed-size element type, the semantics of the CPU kernels (kernels/cpu/transpose.cc,
// shape_ops.cc, split.cc, slice.cc, expand_tile.cc), whose shape helpers they share:
//   Transpose  perm attribute (default: reversed); a swap of the last two (merged) dims is the
//              tiled kernel, anything else the strided copy. Always a copy here (the CPU kernel
//              aliases order-preserving permutations).
//   Concat     one strided copy per input into its place in the output.
//   Split      one strided copy per wanted output; `split` from the attribute or input 1.
//   Slice      opsets 1-9 attributes; 10+ starts / ends / axes / steps inputs (negative steps).
//   Expand     numpy broadcast of the input to the `shape` input (stride 0 along new dims).
//   Pad        pad.cu: constant, edge, reflect, wrap (19+); negative pads crop. The arguments are
//              the CPU kernel's (kernels/cpu/pad_args.h).
// Host inputs (read here before the launch; the engine binds them in host memory): Split's
// split (input 1, opsets 1 and 13+), Slice's starts, ends, axes, steps (inputs 1-4, opset 10+),
// Expand's shape (input 1), Pad's pads, constant_value and axes (inputs 1-3, opset 11+).
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/pad_args.h"
#include "kernels/cuda/copy_index.h"
#include "kernels/cuda/kernel_def.h"
#include "kernels/cuda/movement.h"
#include "kernels/cuda/pad.h"
#include "kernels/cuda/registration.h"

namespace inferd::kernels::cuda {
namespace {

using cpu::Dims;
using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// The element size of `t` as the copy kernels take it (1, 2, 4 or 8 bytes).
absl::StatusOr<int> ElementBytes(const Tensor& t, const CudaNode& node) {
  const size_t elem = engine::ElementSize(t.dtype());
  if (elem == 1 || elem == 2 || elem == 4 || elem == 8) return static_cast<int>(elem);
  return cpu::UnsupportedType(t.dtype(), node);
}

// The copy `index` from `src` to `dst`, or the error that made it.
absl::Status Copy(const CudaNode& node, int elem, const void* src, void* dst,
                  const absl::StatusOr<StridedCopyIndex>& index, cudaStream_t stream) {
  if (!index.ok()) return node.Unimplemented(index.status().message());
  return node.Launched(LaunchStridedCopy(elem, src, dst, *index, stream));
}

class TransposeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TransposeKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<TransposeKernel>(new TransposeKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*x, node_));
    const Shape& in = x->shape();
    const size_t rank = in.rank();
    Dims perm(perm_.begin(), perm_.end());
    if (!has_perm_) {
      for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    }
    absl::InlinedVector<bool, 8> seen(rank, false);
    bool ok = perm.size() == rank;
    for (size_t i = 0; ok && i < rank; ++i) {
      ok = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[perm[i]];
      if (ok) seen[perm[i]] = true;
    }
    if (!ok) {
      return node_.InvalidArgument(absl::StrCat("perm [", absl::StrJoin(perm, ","),
                                                "] is not a permutation of the ", rank,
                                                " dimensions of input ", in.ToString()));
    }
    const Dims in_strides = cpu::StridesOf(in);
    Shape out_shape;
    Dims src_strides;
    for (int64_t p : perm) {
      out_shape.push_back(in[p]);
      src_strides.push_back(in_strides[p]);
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    const absl::StatusOr<StridedCopyIndex> index = MakeDenseCopy(out_shape, src_strides, 0);
    if (index.ok()) {
      // The swap of the last two dims: in output order [(batch,) cols, rows] reading the input
      // [(batch,) rows, cols] with strides [(rows * cols,) 1, cols].
      const StridedCopyIndex& m = *index;
      const int r = m.rank;
      if ((r == 2 || r == 3) && m.src_strides[r - 2] == 1 &&
          m.src_strides[r - 1] == m.dims[r - 2] &&
          (r == 2 || m.src_strides[0] == m.dims[1] * m.dims[2])) {
        return node_.Launched(LaunchTransposeTiled(elem, x->raw_data(), y->raw_mutable_data(),
                                                   r == 3 ? m.dims[0] : 1, m.dims[r - 1],
                                                   m.dims[r - 2], cuda->cuda_stream()));
      }
    }
    return Copy(node_, elem, x->raw_data(), y->raw_mutable_data(), index, cuda->cuda_stream());
  }

 private:
  explicit TransposeKernel(const KernelInfo& info)
      : node_(info), has_perm_(info.HasAttribute("perm")), perm_(info.GetInts("perm")) {}

  const CudaNode node_;
  const bool has_perm_;
  const std::vector<int64_t> perm_;
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

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    const int n = ctx.num_inputs();
    if (n < 1) return node_.InvalidArgument("at least one input is required");
    INFERD_ASSIGN_OR_RETURN(const Tensor* first, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*first, node_));
    const Shape& s0 = first->shape();
    if (s0.rank() == 0) return node_.InvalidArgument("inputs must have rank >= 1, got a scalar");
    INFERD_ASSIGN_OR_RETURN(int axis, cpu::NormalizeAxis(axis_, s0.rank(), node_));
    Shape out_shape = s0;
    absl::InlinedVector<const Tensor*, 8> inputs(n);
    for (int i = 0; i < n; ++i) {
      INFERD_ASSIGN_OR_RETURN(inputs[i], cpu::RequiredInput(ctx, i, node_));
      INFERD_RETURN_IF_ERROR(cpu::CheckType(*inputs[i], first->dtype(), i, node_));
      const Shape& s = inputs[i]->shape();
      bool ok = s.rank() == s0.rank();
      for (size_t d = 0; ok && d < s.rank(); ++d) {
        ok = d == static_cast<size_t>(axis) || s[d] == s0[d];
      }
      if (!ok) {
        return node_.InvalidArgument(absl::StrCat("input ", i, " has shape ", s.ToString(),
                                                  ", which does not match input 0 ", s0.ToString(),
                                                  " outside axis ", axis));
      }
      if (i > 0) out_shape[axis] += s[axis];
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, first->dtype(), out_shape));
    // Input i is [outer, a_i * inner] placed at column offset_i of [outer, A * inner].
    const int64_t outer = s0.SizeBetween(0, axis), inner = s0.SizeFrom(axis + 1);
    const int64_t row = out_shape[axis] * inner;
    int64_t offset = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t block = inputs[i]->shape()[axis] * inner;
      const int64_t dims[] = {outer, block};
      const int64_t src[] = {block, 1};
      const int64_t dst[] = {row, 1};
      INFERD_RETURN_IF_ERROR(Copy(node_, elem, inputs[i]->raw_data(), out->raw_mutable_data(),
                                  MakeStridedCopy(dims, src, dst, 0, offset), cuda->cuda_stream()));
      offset += block;
    }
    return absl::OkStatus();
  }

 private:
  ConcatKernel(const KernelInfo& info, int64_t axis) : node_(info), axis_(axis) {}

  const CudaNode node_;
  const int64_t axis_;
};

class SplitKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SplitKernel>> Create(const KernelInfo& info) {
    if (info.num_outputs() < 1) return info.Error("at least one output is required");
    return std::unique_ptr<SplitKernel>(new SplitKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*x, node_));
    const Shape& in = x->shape();
    if (in.rank() == 0) return node_.InvalidArgument("the input must have rank >= 1");
    INFERD_ASSIGN_OR_RETURN(int axis, cpu::NormalizeAxis(axis_, in.rank(), node_));
    const int n = ctx.num_outputs();
    Dims split;
    if (split_input_ && ctx.input(1) != nullptr) {  // a host input
      INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*ctx.input(1), "split", node_, &split));
    } else {
      split.assign(split_attr_.begin(), split_attr_.end());
    }
    const int64_t dim = in[axis];
    INFERD_RETURN_IF_ERROR(cpu::SplitSizes(axis, dim, n, num_outputs_attr_, node_, &split));
    // Output k is [outer, s_k * inner], read at column start_k of [outer, dim * inner].
    const int64_t outer = in.SizeBetween(0, axis), inner = in.SizeFrom(axis + 1);
    int64_t start = 0;
    for (int k = 0; k < n; ++k) {
      const int64_t block = split[k] * inner;
      if (ctx.output_wanted(k)) {
        Shape s = in;
        s[axis] = split[k];
        INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(k, x->dtype(), s));
        const int64_t dims[] = {outer, block};
        const int64_t src[] = {dim * inner, 1};
        const int64_t dst[] = {block, 1};
        INFERD_RETURN_IF_ERROR(Copy(node_, elem, x->raw_data(), t->raw_mutable_data(),
                                    MakeStridedCopy(dims, src, dst, start, 0),
                                    cuda->cuda_stream()));
      }
      start += block;
    }
    return absl::OkStatus();
  }

 private:
  explicit SplitKernel(const KernelInfo& info)
      : node_(info),
        axis_(info.GetInt("axis", 0)),
        split_input_(info.opset() >= 13 || info.opset() == 1),
        split_attr_(info.GetInts("split")),
        num_outputs_attr_(info.opset() >= 18 ? info.GetInt("num_outputs", 0) : 0) {}

  const CudaNode node_;
  const int64_t axis_;
  const bool split_input_;
  const std::vector<int64_t> split_attr_;
  const int64_t num_outputs_attr_;  // opset 18; 0 when absent
};

class SliceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SliceKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<SliceKernel>(new SliceKernel(info));
    if (!k->inputs_ && (!info.HasAttribute("starts") || !info.HasAttribute("ends"))) {
      return info.Error("attributes 'starts' and 'ends' are required");
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*x, node_));
    Dims starts, ends, axes, steps;
    if (inputs_) {  // host inputs
      INFERD_ASSIGN_OR_RETURN(const Tensor* s, cpu::RequiredInput(ctx, 1, node_));
      INFERD_ASSIGN_OR_RETURN(const Tensor* e, cpu::RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*s, "starts", node_, &starts));
      INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*e, "ends", node_, &ends));
      if (const Tensor* a = ctx.input(3)) {
        INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*a, "axes", node_, &axes));
      }
      if (const Tensor* st = ctx.input(4)) {
        INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*st, "steps", node_, &steps));
      }
    } else {
      starts.assign(starts_.begin(), starts_.end());
      ends.assign(ends_.begin(), ends_.end());
      axes.assign(axes_.begin(), axes_.end());
    }
    const Shape& in = x->shape();
    Dims start(in.rank(), 0), step(in.rank(), 1), len(in.dims().begin(), in.dims().end());
    INFERD_RETURN_IF_ERROR(
        cpu::ResolveSlice(in, starts, ends, axes, steps, node_, &start, &step, &len));
    const Shape out_shape(absl::MakeConstSpan(len));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    const Dims in_strides = cpu::StridesOf(in);
    Dims strides(in.rank());
    int64_t offset = 0;
    for (size_t d = 0; d < in.rank(); ++d) {
      strides[d] = in_strides[d] * step[d];
      offset += start[d] * in_strides[d];
    }
    return Copy(node_, elem, x->raw_data(), y->raw_mutable_data(),
                MakeDenseCopy(out_shape, strides, offset), cuda->cuda_stream());
  }

 private:
  explicit SliceKernel(const KernelInfo& info)
      : node_(info),
        inputs_(info.opset() >= 10),
        starts_(info.GetInts("starts")),
        ends_(info.GetInts("ends")),
        axes_(info.GetInts("axes")) {}

  const CudaNode node_;
  const bool inputs_;
  const std::vector<int64_t> starts_, ends_, axes_;
};

class ExpandKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ExpandKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<ExpandKernel>(new ExpandKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* shape, cpu::RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*x, node_));
    INFERD_RETURN_IF_ERROR(cpu::CheckType(*shape, DataType::kInt64, 1, node_));
    Dims target;  // a host input
    INFERD_RETURN_IF_ERROR(cpu::ReadIndexVector(*shape, "shape", node_, &target));
    const Shape& in = x->shape();
    INFERD_ASSIGN_OR_RETURN(Shape out_shape,
                            cpu::BroadcastShapes(in, Shape(absl::MakeConstSpan(target)), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    // Right-aligned: stride 0 along the dims the input lacks or has as 1.
    const Dims in_strides = cpu::StridesOf(in);
    const size_t lead = out_shape.rank() - in.rank();
    Dims strides(out_shape.rank(), 0);
    for (size_t d = lead; d < out_shape.rank(); ++d) {
      if (in[d - lead] != 1) strides[d] = in_strides[d - lead];
    }
    return Copy(node_, elem, x->raw_data(), y->raw_mutable_data(),
                MakeDenseCopy(out_shape, strides, 0), cuda->cuda_stream());
  }

 private:
  explicit ExpandKernel(const KernelInfo& info) : node_(info) {}

  const CudaNode node_;
};

class PadKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PadKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(cpu::PadArgs args, cpu::PadArgs::FromInfo(info));
    return std::unique_ptr<PadKernel>(new PadKernel(info, std::move(args)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::CudaKernelContext* cuda, node_.Context(ctx));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, cpu::RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const int elem, ElementBytes(*x, node_));
    // pads, constant_value and axes are host inputs.
    INFERD_ASSIGN_OR_RETURN(const cpu::PadPlan plan, args_.Resolve(ctx, *x));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), plan.out_shape));
    const absl::StatusOr<PadIndex> index =
        MakePadIndex(x->shape(), plan.pads, plan.out_shape, FillOf(args_.mode()));
    if (!index.ok()) return node_.Unimplemented(index.status().message());
    return node_.Launched(LaunchPad(elem, x->raw_data(), y->raw_mutable_data(), *index, plan.value,
                                    cuda->cuda_stream()));
  }

 private:
  PadKernel(const KernelInfo& info, cpu::PadArgs args) : node_(info), args_(std::move(args)) {}

  static PadFill FillOf(cpu::PadMode mode) {
    switch (mode) {
      case cpu::PadMode::kConstant:
        return PadFill::kConstant;
      case cpu::PadMode::kEdge:
        return PadFill::kEdge;
      case cpu::PadMode::kReflect:
        return PadFill::kReflect;
      case cpu::PadMode::kWrap:
        return PadFill::kWrap;
    }
    return PadFill::kConstant;
  }

  const CudaNode node_;
  const cpu::PadArgs args_;
};

}  // namespace

std::vector<engine::KernelDef> MovementKernelDefs() {
  const std::vector<DataType>& types = cpu::FixedSizeTypes();
  return {
      CudaDef(engine::kOnnxDomain, "Transpose", 1, kMaxOpset, types,
              cpu::FactoryOf<TransposeKernel>()),
      CudaDef(engine::kOnnxDomain, "Concat", 1, 3, types, cpu::FactoryOf<ConcatKernel>()),
      CudaDef(engine::kOnnxDomain, "Concat", 4, kMaxOpset, types, cpu::FactoryOf<ConcatKernel>()),
      // Split: host input 1 (split) in opsets 1 and 13+.
      CudaDef(engine::kOnnxDomain, "Split", 1, 1, types, cpu::FactoryOf<SplitKernel>(), {1}),
      CudaDef(engine::kOnnxDomain, "Split", 2, 12, types, cpu::FactoryOf<SplitKernel>()),
      CudaDef(engine::kOnnxDomain, "Split", 13, 17, types, cpu::FactoryOf<SplitKernel>(), {1}),
      CudaDef(engine::kOnnxDomain, "Split", 18, kMaxOpset, types, cpu::FactoryOf<SplitKernel>(),
              {1}),
      // Slice: host inputs 1-4 (starts, ends, axes, steps) from opset 10.
      CudaDef(engine::kOnnxDomain, "Slice", 1, 9, types, cpu::FactoryOf<SliceKernel>()),
      CudaDef(engine::kOnnxDomain, "Slice", 10, kMaxOpset, types, cpu::FactoryOf<SliceKernel>(),
              {1, 2, 3, 4}),
      // Expand: host input 1 (shape).
      CudaDef(engine::kOnnxDomain, "Expand", 8, kMaxOpset, types, cpu::FactoryOf<ExpandKernel>(),
              {1}),
      // Pad: opsets 2-10 attributes; from 11 host inputs 1-3 (pads, constant_value, axes).
      CudaDef(engine::kOnnxDomain, "Pad", 2, 10, types, cpu::FactoryOf<PadKernel>()),
      CudaDef(engine::kOnnxDomain, "Pad", 11, kMaxOpset, types, cpu::FactoryOf<PadKernel>(),
              {1, 2, 3}),
  };
}

}  // namespace inferd::kernels::cuda

// MaxPool (1-D, 2-D, 3-D; kernel_shape, strides, pads, dilations, ceil_mode, auto_pad): one
// oneDNN pooling primitive in plain NC[D][H]W layout. Padding never wins the max. The optional
// Indices output is not implemented (UNIMPLEMENTED when the graph uses it).
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

struct PoolPlan {
  Shape out;
  bool empty = false;  // empty output: no primitive
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward primitive;
  dnnl::memory::desc src, dst;
  size_t scratchpad_bytes() const { return empty ? 0 : pd.scratchpad_desc().get_size(); }
};

absl::StatusOr<WindowAttributes> ReadPoolAttributes(const KernelInfo& info) {
  INFERD_ASSIGN_OR_RETURN(WindowAttributes attrs, WindowAttributes::Read(info));
  if (attrs.kernel_shape.empty()) return info.Error("required attribute 'kernel_shape' is missing");
  return attrs;
}

// The primitive descriptor (and output shape) for input shape `x`; `pd` left empty when the
// output is empty.
absl::Status MakePoolPd(const WindowAttributes& attrs, const Shape& x, int threads,
                        const NodeLabel& node, PoolPlan& plan) {
  if (x.rank() < 3 || x.rank() > 5) {
    return node.InvalidArgument(absl::StrCat("input has shape ", x.ToString(),
                                             " but a rank-3, -4 or -5 input (N,C,spatial...) is "
                                             "expected"));
  }
  INFERD_ASSIGN_OR_RETURN(WindowGeometry w,
                          ComputeWindow(attrs, x.dims().subspan(2), attrs.kernel_shape, node));
  plan.out = Shape{x[0], x[1]};
  for (int64_t d : w.out) plan.out.push_back(d);
  plan.empty = plan.out.NumElements() == 0;
  if (plan.empty) return absl::OkStatus();
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  return CatchDnnl(node, "creating the pooling", [&]() -> absl::Status {
    dnnl::memory::dims dilations;
    for (int64_t d : w.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
    plan.src = PlainDesc(ToDnnlDims(x.dims()));
    plan.dst = PlainDesc(ToDnnlDims(plan.out.dims()));
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::pooling_max, plan.src, plan.dst,
                                        ToDnnlDims(w.strides), ToDnnlDims(w.kernel), dilations,
                                        ToDnnlDims(w.pad_begin), ToDnnlDims(w.pad_end_floor));
    ScopedOmpThreads scoped(threads);
    plan.pd = dnnl::pooling_v2_forward::primitive_desc(desc, UserScratchpadAttr(), *eng);
    return absl::OkStatus();
  });
}

class MaxPoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MaxPoolKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(WindowAttributes attrs, ReadPoolAttributes(info));
    if (info.output(1).present) {
      return absl::UnimplementedError(
          absl::StrCat(NodeLabel(info).prefix(), "the Indices output is not supported on cpu"));
    }
    auto k = std::unique_ptr<MaxPoolKernel>(new MaxPoolKernel(info, std::move(attrs)));
    if (std::optional<Shape> x = StaticInputShape(info, 0)) {
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const PoolPlan> plan, k->BuildPlan(*x));
      k->cache_.Pin(ShapeCache<PoolPlan>::MakeKey({*x}, k->threads_), std::move(plan));
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(WindowAttributes attrs, ReadPoolAttributes(info));
    std::optional<Shape> x = StaticInputShape(info, 0);
    if (!x) return node.InvalidArgument("input shape is not static");
    PoolPlan plan;
    INFERD_RETURN_IF_ERROR(MakePoolPd(attrs, *x, info.intra_op_threads(), node, plan));
    return plan.scratchpad_bytes();
  }

  absl::Status Compute(KernelContext& ctx) const override {
    if (ctx.output_wanted(1)) {
      return node_.Unimplemented("the Indices output is not supported on cpu");
    }
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const PoolPlan> plan, PlanFor(x->shape()));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, plan->out));
    if (plan->empty) return absl::OkStatus();
    INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
    return CatchDnnl(node_, "running the pooling", [&]() -> absl::Status {
      std::unordered_map<int, dnnl::memory> args;
      args.emplace(DNNL_ARG_SRC, dnnl::memory(plan->src, *eng, const_cast<void*>(x->raw_data())));
      args.emplace(DNNL_ARG_DST, dnnl::memory(plan->dst, *eng, y->raw_mutable_data()));
      INFERD_RETURN_IF_ERROR(AddScratchpadArg(ctx, plan->pd.scratchpad_desc(), *eng, args, node_));
      ExecutePrimitive(*eng, plan->primitive, args, ctx.threads().num_threads());
      return absl::OkStatus();
    });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.empty()) return {};
    absl::StatusOr<std::shared_ptr<const PoolPlan>> plan = PlanFor(input_shapes[0]);
    if (!plan.ok()) return {};  // Compute reports the error
    return ScratchpadRequirement((*plan)->scratchpad_bytes());
  }

 private:
  MaxPoolKernel(const KernelInfo& info, WindowAttributes attrs)
      : node_(info), attrs_(std::move(attrs)), threads_(info.intra_op_threads()) {}

  absl::StatusOr<std::shared_ptr<const PoolPlan>> BuildPlan(const Shape& x) const {
    auto plan = std::make_shared<PoolPlan>();
    INFERD_RETURN_IF_ERROR(MakePoolPd(attrs_, x, threads_, node_, *plan));
    if (!plan->empty) {
      INFERD_RETURN_IF_ERROR(CatchDnnl(node_, "creating the pooling", [&]() -> absl::Status {
        plan->primitive = dnnl::pooling_v2_forward(plan->pd);
        return absl::OkStatus();
      }));
    }
    return std::shared_ptr<const PoolPlan>(std::move(plan));
  }

  absl::StatusOr<std::shared_ptr<const PoolPlan>> PlanFor(const Shape& x) const {
    return cache_.GetOrCreate(ShapeCache<PoolPlan>::MakeKey({x}, threads_),
                              [&] { return BuildPlan(x); });
  }

  const NodeLabel node_;
  const WindowAttributes attrs_;
  const int threads_;
  mutable ShapeCache<PoolPlan> cache_;
};

}  // namespace

absl::Status RegisterPoolKernels(engine::KernelRegistry& registry) {
  return RegisterAll(registry,
                     {CpuDef(engine::kOnnxDomain, "MaxPool", 1, kMaxOpset, {DataType::kFloat32},
                             FactoryOf<MaxPoolKernel>(), &MaxPoolKernel::EstimateWorkspace)});
}

}  // namespace inferd::kernels::cpu

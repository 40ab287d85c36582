// ConvLikeKernel<Attributes>: the kernel of the oneDNN convolutions, Conv / FusedConv and
// ConvTranspose. One ConvPrimitive per set of input shapes: built at load when the shapes are
// static, cached per shape otherwise (constant weights prepacked in either case: once per set of
// shapes, counted in PersistentBytes); the static workspace estimate
// and DeclareWorkspaceRequirements give the same exact bytes; with no input channels (or no
// filters) every output element is its channel's bias. Internal to //kernels/cpu.
//
// `Attributes` (the operator's attributes, read once) says what differs between the operators:
//   static absl::StatusOr<Attributes> Read(const KernelInfo&);
//   // The output shape and primitive spec for these input shapes (bias: nullptr when absent).
//   absl::StatusOr<ConvGeometry> Compute(const Shape& x, const Shape& w, const Shape* bias,
//                                        const NodeLabel&) const;
// Compute is thread-safe (the plan cache guards itself).
#ifndef INFERD_KERNELS_CPU_CONV_LIKE_KERNEL_H_
#define INFERD_KERNELS_CPU_CONV_LIKE_KERNEL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/conv_primitive.h"
#include "kernels/cpu/conv_shape.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/shape_cache.h"

namespace inferd::kernels::cpu {

// What a convolution computes for one set of input shapes.
struct ConvGeometry {
  engine::Shape out;
  ConvSpec spec;            // without constant weights
  bool degenerate = false;  // empty output, or no input channels (output = bias)
};

template <typename Attributes>
class ConvLikeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConvLikeKernel>> Create(const engine::KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(Attributes attrs, Attributes::Read(info));
    auto k = std::unique_ptr<ConvLikeKernel>(new ConvLikeKernel(info, std::move(attrs)));
    if (std::optional<std::vector<engine::Shape>> shapes = StaticShapes(info)) {
      const engine::Shape* refs[] = {&(*shapes)[0], &(*shapes)[1],
                                     shapes->size() > 2 ? &(*shapes)[2] : nullptr};
      const ShapeRefs key(refs, shapes->size());
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan, k->BuildPlan(key));
      k->cache_.Pin(key, k->threads_, std::move(plan));
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const engine::KernelInfo& info) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(Attributes attrs, Attributes::Read(info));
    std::optional<std::vector<engine::Shape>> shapes = StaticShapes(info);
    if (!shapes) return node.InvalidArgument("input shapes are not static");
    const bool has_bias = shapes->size() > 2;
    INFERD_ASSIGN_OR_RETURN(
        ConvGeometry geo,
        attrs.Compute((*shapes)[0], (*shapes)[1], has_bias ? &(*shapes)[2] : nullptr, node));
    if (geo.degenerate) return size_t{0};
    ConvSpec& spec = geo.spec;
    const engine::Tensor* constant_w = info.input(1).constant;
    spec.constant_weights = constant_w ? constant_w->raw_data() : nullptr;
    return ConvPrimitive::WorkspaceBytes(spec, info.intra_op_threads(), node);
  }

  absl::Status Compute(engine::KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* w, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, engine::DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*w, engine::DataType::kFloat32, 1, node_));
    const engine::Tensor* b = nullptr;
    if (has_bias_) {
      INFERD_ASSIGN_OR_RETURN(b, RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*b, engine::DataType::kFloat32, 2, node_));
    }
    const engine::Shape* shapes[] = {&x->shape(), &w->shape(),
                                     b != nullptr ? &b->shape() : nullptr};
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan,
                            PlanFor(ShapeRefs(shapes, has_bias_ ? 3 : 2)));
    const ConvGeometry& geo = plan->geometry;
    INFERD_ASSIGN_OR_RETURN(engine::Tensor * y,
                            ctx.MakeOutputTensor(0, engine::DataType::kFloat32, geo.out));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (geo.degenerate) return FillBias(b, geo.spec.post_ops, y);
    return plan->primitive->Execute(ctx, x->raw_data(), w->raw_data(), b ? b->raw_data() : nullptr,
                                    y->raw_mutable_data(), node_);
  }

  size_t PersistentBytes() const override {
    return packed_cache_.bytes() + cache_.SumBytes([](const Plan& p) {
      return p.primitive != nullptr ? p.primitive->prepacked_bytes() : size_t{0};
    });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const engine::Shape> input_shapes) const override {
    if (input_shapes.size() < (has_bias_ ? 3u : 2u)) return {};
    const engine::Shape* shapes[] = {&input_shapes[0], &input_shapes[1],
                                     has_bias_ ? &input_shapes[2] : nullptr};
    absl::StatusOr<std::shared_ptr<const Plan>> plan =
        PlanFor(ShapeRefs(shapes, has_bias_ ? 3 : 2));
    if (!plan.ok()) return {};  // Compute reports the error
    return ScratchpadRequirement((*plan)->primitive ? (*plan)->primitive->workspace_bytes() : 0);
  }

 private:
  // Everything built for one set of input shapes.
  struct Plan {
    ConvGeometry geometry;
    std::shared_ptr<const ConvPrimitive> primitive;  // null when degenerate
  };

  ConvLikeKernel(const engine::KernelInfo& info, Attributes attrs)
      : node_(info),
        attrs_(std::move(attrs)),
        has_bias_(info.input_present(2)),
        threads_(info.intra_op_threads()),
        constant_w_(info.input(1).constant != nullptr ? info.input(1).constant->raw_data()
                                                      : nullptr) {}

  static std::optional<std::vector<engine::Shape>> StaticShapes(const engine::KernelInfo& info) {
    std::vector<engine::Shape> shapes;
    for (int i = 0; i < (info.input_present(2) ? 3 : 2); ++i) {
      std::optional<engine::Shape> s = StaticInputShape(info, i);
      if (!s) return std::nullopt;
      shapes.push_back(*s);
    }
    return shapes;
  }

  static absl::Status FillBias(const engine::Tensor* b, absl::Span<const EltwisePostOp> post_ops,
                               engine::Tensor* y) {
    const engine::Shape& s = y->shape();
    const int64_t n = s[0], m = s[1], inner = s.SizeFrom(2);
    float* out = y->mutable_data<float>();
    for (int64_t i = 0; i < n * m; ++i) {
      const float v = ApplyPostOps(b != nullptr ? b->data<float>()[i % m] : 0.0f, post_ops);
      std::fill(out + i * inner, out + (i + 1) * inner, v);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(ShapeRefs shapes) const {
    auto plan = std::make_shared<Plan>();
    INFERD_ASSIGN_OR_RETURN(plan->geometry, attrs_.Compute(*shapes[0], *shapes[1],
                                                           has_bias_ ? shapes[2] : nullptr, node_));
    if (!plan->geometry.degenerate) {
      ConvSpec spec = plan->geometry.spec;
      spec.constant_weights = constant_w_;
      spec.packed_cache = constant_w_ != nullptr ? &packed_cache_ : nullptr;
      INFERD_ASSIGN_OR_RETURN(plan->primitive, ConvPrimitive::Build(spec, threads_, node_));
    }
    return std::shared_ptr<const Plan>(std::move(plan));
  }

  absl::StatusOr<std::shared_ptr<const Plan>> PlanFor(ShapeRefs shapes) const {
    return cache_.GetOrCreate(shapes, threads_, [&] { return BuildPlan(shapes); });
  }

  const NodeLabel node_;
  const Attributes attrs_;
  const bool has_bias_;
  const int threads_;
  // The weights when they are a constant (the model's or the session's, which outlive the
  // kernel): every plan prepacks them, also the plans made at run time for shapes not known at
  // load (a symbolic batch dim), so that no run reorders constant weights.
  const void* const constant_w_;
  mutable ShapeCache<Plan> cache_;
  // Constant weights packed once per layout, shared by the plans of every input shape (a model
  // served at several batch sizes keeps one copy, not one per batch size).
  mutable PackedWeightsCache packed_cache_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_CONV_LIKE_KERNEL_H_

// Conv (ai.onnx; 1-D, 2-D and 3-D, groups, dilations, strides, pads, auto_pad, optional bias)
// and FusedConv (com.inferd: the same plus `activation` "Relu" or "", applied as a post-op):
// one oneDNN convolution per set of input shapes (ConvPrimitive: layouts, workspace, constant
// weights prepacked when the shapes are known at load).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/conv_primitive.h"
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

struct ConvAttributes {
  WindowAttributes window;
  int64_t group = 1;
  bool relu = false;  // FusedConv activation

  static absl::StatusOr<ConvAttributes> Read(const KernelInfo& info) {
    ConvAttributes a;
    INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
    a.group = info.GetInt("group", 1);
    if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
    if (info.domain() == engine::kInferdDomain) {
      const std::string activation = info.GetString("activation", "");
      if (activation == "Relu") {
        a.relu = true;
      } else if (!activation.empty()) {
        return info.Error(absl::StrCat("activation '", activation,
                                       "' is not supported (expected \"Relu\" or \"\")"));
      }
    }
    return a;
  }
};

struct ConvGeometry {
  Shape out;
  WindowGeometry window;
  dnnl::memory::dims src, weights, bias, dst;
  bool degenerate = false;  // empty output, or no input channels (output = bias)
};

absl::StatusOr<ConvGeometry> ComputeGeometry(const ConvAttributes& attrs, const Shape& x,
                                             const Shape& w, const Shape* b,
                                             const NodeLabel& node) {
  if (x.rank() < 3 || x.rank() > 5) {
    return node.InvalidArgument(absl::StrCat("input 0 has shape ", x.ToString(),
                                             " but a rank-3, -4 or -5 input (N,C,spatial...) is "
                                             "expected"));
  }
  if (w.rank() != x.rank()) {
    return node.InvalidArgument(absl::StrCat("input 1 has shape ", w.ToString(), " but a rank-",
                                             x.rank(), " weight is expected"));
  }
  const int64_t channels = x[1], filters = w[0], g = attrs.group;
  if (channels != w[1] * g || filters % g != 0) {
    return node.InvalidArgument(absl::StrCat("input ", x.ToString(), " and weight ", w.ToString(),
                                             " do not match for group ", g,
                                             ": expected C = W[1] * group and W[0] % group == 0"));
  }
  const size_t spatial = x.rank() - 2;
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  if (!attrs.window.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.window.kernel_shape.begin(),
                  attrs.window.kernel_shape.end())) {
    return node.InvalidArgument(
        absl::StrCat("kernel_shape does not match the weight's shape ", w.ToString()));
  }
  if (b != nullptr && (b->rank() != 1 || (*b)[0] != filters)) {
    return node.InvalidArgument(
        absl::StrCat("bias has shape ", b->ToString(), ", expected [", filters, "]"));
  }
  ConvGeometry geo;
  INFERD_ASSIGN_OR_RETURN(geo.window,
                          ComputeWindow(attrs.window, x.dims().subspan(2), kernel, node));
  geo.out = Shape{x[0], filters};
  for (size_t i = 0; i < spatial; ++i) geo.out.push_back(geo.window.out[i]);
  geo.src = ToDnnlDims(x.dims());
  if (g == 1) {
    geo.weights = ToDnnlDims(w.dims());
  } else {
    geo.weights = {g, filters / g, w[1]};
    geo.weights.insert(geo.weights.end(), kernel.begin(), kernel.end());
  }
  geo.bias = {filters};
  geo.dst = ToDnnlDims(geo.out.dims());
  geo.degenerate = geo.out.NumElements() == 0 || w[1] == 0;
  return geo;
}

ConvSpec SpecFor(const ConvAttributes& attrs, const ConvGeometry& geo, const Shape& x,
                 const Shape& w, bool has_bias, const void* constant_w) {
  ConvSpec spec;
  spec.src = geo.src;
  spec.weights = geo.weights;
  if (has_bias) spec.bias = geo.bias;
  spec.dst = geo.dst;
  spec.strides = ToDnnlDims(geo.window.strides);
  for (int64_t d : geo.window.dilations) spec.dilations.push_back(d - 1);  // oneDNN: the gaps
  spec.pad_begin = ToDnnlDims(geo.window.pad_begin);
  spec.pad_end = ToDnnlDims(geo.window.pad_end);
  spec.relu = attrs.relu;
  spec.layout = ChooseConvLayout(x[1], w[0], attrs.group, w.dims().subspan(2));
  spec.constant_weights = constant_w;
  return spec;
}

// Everything built for one set of input shapes.
struct ConvPlan {
  ConvGeometry geometry;
  std::shared_ptr<const ConvPrimitive> primitive;  // null when degenerate
  size_t workspace_bytes() const { return primitive ? primitive->workspace_bytes() : 0; }
};

class ConvKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConvKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(ConvAttributes attrs, ConvAttributes::Read(info));
    auto k = std::unique_ptr<ConvKernel>(new ConvKernel(info, attrs));
    if (std::optional<std::vector<Shape>> shapes = StaticShapes(info)) {
      const Tensor* constant_w = info.input(1).constant;
      const Shape* refs[] = {&(*shapes)[0], &(*shapes)[1],
                             shapes->size() > 2 ? &(*shapes)[2] : nullptr};
      const ShapeRefs key(refs, shapes->size());
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const ConvPlan> plan,
                              k->BuildPlan(key, constant_w ? constant_w->raw_data() : nullptr));
      k->cache_.Pin(key, k->threads_, std::move(plan));
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(ConvAttributes attrs, ConvAttributes::Read(info));
    std::optional<std::vector<Shape>> shapes = StaticShapes(info);
    if (!shapes) return node.InvalidArgument("input shapes are not static");
    const bool has_bias = shapes->size() > 2;
    INFERD_ASSIGN_OR_RETURN(ConvGeometry geo,
                            ComputeGeometry(attrs, (*shapes)[0], (*shapes)[1],
                                            has_bias ? &(*shapes)[2] : nullptr, node));
    if (geo.degenerate) return size_t{0};
    const Tensor* constant_w = info.input(1).constant;
    return ConvPrimitive::WorkspaceBytes(SpecFor(attrs, geo, (*shapes)[0], (*shapes)[1], has_bias,
                                                 constant_w ? constant_w->raw_data() : nullptr),
                                         info.intra_op_threads(), node);
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*w, DataType::kFloat32, 1, node_));
    const Tensor* b = nullptr;
    if (has_bias_) {
      INFERD_ASSIGN_OR_RETURN(b, RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kFloat32, 2, node_));
    }
    const Shape* shapes[] = {&x->shape(), &w->shape(), b != nullptr ? &b->shape() : nullptr};
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const ConvPlan> plan,
                            PlanFor(ShapeRefs(shapes, has_bias_ ? 3 : 2)));
    const ConvGeometry& geo = plan->geometry;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, geo.out));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (geo.degenerate) return FillBias(b, y);
    return plan->primitive->Execute(ctx, x->raw_data(), w->raw_data(), b ? b->raw_data() : nullptr,
                                    y->raw_mutable_data(), node_);
  }

  size_t PersistentBytes() const override {
    return cache_.SumBytes([](const ConvPlan& p) {
      return p.primitive != nullptr ? p.primitive->prepacked_bytes() : size_t{0};
    });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.size() < (has_bias_ ? 3u : 2u)) return {};
    const Shape* shapes[] = {&input_shapes[0], &input_shapes[1],
                             has_bias_ ? &input_shapes[2] : nullptr};
    absl::StatusOr<std::shared_ptr<const ConvPlan>> plan =
        PlanFor(ShapeRefs(shapes, has_bias_ ? 3 : 2));
    if (!plan.ok()) return {};  // Compute reports the error
    return ScratchpadRequirement((*plan)->workspace_bytes());
  }

 private:
  ConvKernel(const KernelInfo& info, ConvAttributes attrs)
      : node_(info),
        attrs_(std::move(attrs)),
        has_bias_(info.input_present(2)),
        threads_(info.intra_op_threads()) {}

  static std::optional<std::vector<Shape>> StaticShapes(const KernelInfo& info) {
    std::vector<Shape> shapes;
    for (int i = 0; i < (info.input_present(2) ? 3 : 2); ++i) {
      std::optional<Shape> s = StaticInputShape(info, i);
      if (!s) return std::nullopt;
      shapes.push_back(*s);
    }
    return shapes;
  }

  // No input channels: every output element is its channel's bias (then the activation).
  absl::Status FillBias(const Tensor* b, Tensor* y) const {
    const Shape& s = y->shape();
    const int64_t n = s[0], m = s[1], inner = s.SizeFrom(2);
    float* out = y->mutable_data<float>();
    for (int64_t i = 0; i < n * m; ++i) {
      float v = b != nullptr ? b->data<float>()[i % m] : 0.0f;
      if (attrs_.relu) v = std::max(v, 0.0f);
      std::fill(out + i * inner, out + (i + 1) * inner, v);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<const ConvPlan>> BuildPlan(ShapeRefs shapes,
                                                            const void* constant_w) const {
    auto plan = std::make_shared<ConvPlan>();
    INFERD_ASSIGN_OR_RETURN(
        plan->geometry,
        ComputeGeometry(attrs_, *shapes[0], *shapes[1], has_bias_ ? shapes[2] : nullptr, node_));
    if (!plan->geometry.degenerate) {
      INFERD_ASSIGN_OR_RETURN(plan->primitive,
                              ConvPrimitive::Build(SpecFor(attrs_, plan->geometry, *shapes[0],
                                                           *shapes[1], has_bias_, constant_w),
                                                   threads_, node_));
    }
    return std::shared_ptr<const ConvPlan>(std::move(plan));
  }

  absl::StatusOr<std::shared_ptr<const ConvPlan>> PlanFor(ShapeRefs shapes) const {
    return cache_.GetOrCreate(shapes, threads_, [&] { return BuildPlan(shapes, nullptr); });
  }

  const NodeLabel node_;
  const ConvAttributes attrs_;
  const bool has_bias_;
  const int threads_;
  mutable ShapeCache<ConvPlan> cache_;
};

}  // namespace

absl::Status RegisterConvKernels(engine::KernelRegistry& registry) {
  return RegisterAll(registry,
                     {CpuDef(engine::kOnnxDomain, "Conv", 1, kMaxOpset, {DataType::kFloat32},
                             FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace),
                      CpuDef(engine::kInferdDomain, "FusedConv", 1, 1, {DataType::kFloat32},
                             FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace)});
}

}  // namespace inferd::kernels::cpu

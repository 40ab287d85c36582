// Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A, B' = transB ? B^T : B, with C
// unidirectionally broadcast to [M, N] (required before opset 11, optional from 11; before opset
// 7 only with broadcast=1). One oneDNN
// matmul: transposes are strides, alpha an output scale; C is either the primitive's bias (alpha
// == beta == 1 and C a row vector: no extra pass) or written into Y first and added by a sum
// post-op scaled by beta.
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/half_weight_product.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/matmul_primitive.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

struct GemmAttributes {
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
};

enum class CMode {
  kNone,  // no C, or beta == 0
  kBias,  // C is a row vector, alpha == beta == 1: the matmul's bias
  kSum,   // C broadcast into Y, then Y = alpha * A'B' + beta * Y
};

struct GemmGeometry {
  int64_t m = 0, k = 0, n = 0;
  CMode c_mode = CMode::kNone;
  int64_t c_rows = 1, c_cols = 1;  // C's shape as a [rows, cols] broadcast to [M, N]
};

absl::StatusOr<GemmGeometry> ComputeGeometry(const GemmAttributes& attrs, const Shape& a,
                                             const Shape& b, const Shape* c,
                                             const NodeLabel& node) {
  if (a.rank() != 2 || b.rank() != 2) {
    return node.InvalidArgument(
        absl::StrCat("A and B must be 2-D, got A ", a.ToString(), " and B ", b.ToString()));
  }
  GemmGeometry g;
  g.m = attrs.trans_a ? a[1] : a[0];
  g.k = attrs.trans_a ? a[0] : a[1];
  const int64_t kb = attrs.trans_b ? b[1] : b[0];
  g.n = attrs.trans_b ? b[0] : b[1];
  if (kb != g.k) {
    return node.InvalidArgument(absl::StrCat(
        "A ", a.ToString(), (attrs.trans_a ? " (transposed)" : ""), " and B ", b.ToString(),
        (attrs.trans_b ? " (transposed)" : ""), " do not match: K is ", g.k, " vs ", kb));
  }
  if (c == nullptr || attrs.beta == 0.0f) return g;
  const bool c_ok = c->rank() <= 2 &&
                    (c->rank() < 1 || (*c)[c->rank() - 1] == 1 || (*c)[c->rank() - 1] == g.n) &&
                    (c->rank() < 2 || (*c)[0] == 1 || (*c)[0] == g.m);
  if (!c_ok) {
    return node.InvalidArgument(absl::StrCat(
        "C has shape ", c->ToString(), ", which does not broadcast to [", g.m, ",", g.n, "]"));
  }
  g.c_rows = c->rank() == 2 ? (*c)[0] : 1;
  g.c_cols = c->rank() >= 1 ? (*c)[c->rank() - 1] : 1;
  const bool row =
      c->rank() >= 1 && (*c)[c->rank() - 1] == g.n && g.n > 1 && (c->rank() == 1 || (*c)[0] == 1);
  g.c_mode = (row && attrs.alpha == 1.0f && attrs.beta == 1.0f) ? CMode::kBias : CMode::kSum;
  return g;
}

// Writes C broadcast to [m, n] into y, times `scale`.
void BroadcastC(const float* c, int64_t c_rows, int64_t c_cols, int64_t m, int64_t n, float scale,
                float* y) {
  for (int64_t i = 0; i < m; ++i) {
    const float* src = c + (c_rows == 1 ? 0 : i * c_cols);
    float* dst = y + i * n;
    if (c_cols == 1) {
      for (int64_t j = 0; j < n; ++j) dst[j] = scale * src[0];
    } else {
      for (int64_t j = 0; j < n; ++j) dst[j] = scale * src[j];
    }
  }
}

MatMulSpec SpecFor(const GemmAttributes& attrs, const GemmGeometry& g, const void* constant_weights,
                   PackedWeightsCache* packed_cache = nullptr) {
  const dnnl::memory::dim m = g.m, k = g.k, n = g.n;
  MatMulSpec spec;
  spec.src =
      dnnl::memory::desc({m, k}, dnnl::memory::data_type::f32,
                         attrs.trans_a ? dnnl::memory::dims{1, m} : dnnl::memory::dims{k, 1});
  spec.weights =
      dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32,
                         attrs.trans_b ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1});
  spec.dst = PlainDesc({m, n});
  if (g.c_mode == CMode::kBias) spec.bias = PlainDesc({1, n});
  spec.alpha = attrs.alpha;
  spec.beta = g.c_mode == CMode::kSum ? attrs.beta : 0.0f;
  spec.constant_weights = constant_weights;
  spec.packed_cache = constant_weights != nullptr ? packed_cache : nullptr;
  return spec;
}

struct GemmPlan {
  GemmGeometry geometry;
  std::shared_ptr<const MatMulPrimitive> primitive;  // null when M, N or K is 0
};

class GemmKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GemmKernel>> Create(const KernelInfo& info) {
    INFERD_RETURN_IF_ERROR(CheckC(info));
    auto k = std::unique_ptr<GemmKernel>(new GemmKernel(info));
    const Tensor* constant_b = info.input(1).constant;
    k->constant_b_ = constant_b != nullptr ? constant_b->raw_data() : nullptr;
    std::optional<std::vector<Shape>> shapes = StaticShapes(info);
    if (shapes) {
      const Shape* refs[] = {&(*shapes)[0], &(*shapes)[1],
                             shapes->size() > 2 ? &(*shapes)[2] : nullptr};
      const ShapeRefs key(refs, shapes->size());
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const GemmPlan> plan,
                              k->BuildPlan(key, k->constant_b_, nullptr));
      k->cache_.Pin(key, k->threads_, std::move(plan));
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    INFERD_RETURN_IF_ERROR(CheckC(info));
    std::optional<std::vector<Shape>> shapes = StaticShapes(info);
    if (!shapes) return node.InvalidArgument("input shapes are not static");
    const GemmAttributes attrs = ReadAttributes(info);
    INFERD_ASSIGN_OR_RETURN(GemmGeometry g,
                            ComputeGeometry(attrs, (*shapes)[0], (*shapes)[1],
                                            shapes->size() > 2 ? &(*shapes)[2] : nullptr, node));
    if (g.m == 0 || g.n == 0 || g.k == 0) return size_t{0};
    const Tensor* constant_b = info.input(1).constant;
    return MatMulPrimitive::WorkspaceBytes(
        SpecFor(attrs, g, constant_b ? constant_b->raw_data() : nullptr), info.intra_op_threads(),
        node);
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    const Tensor* c = nullptr;
    if (has_c_) {
      INFERD_ASSIGN_OR_RETURN(c, RequiredInput(ctx, 2, node_));
    }
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kFloat32, 1, node_));
    if (c != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*c, DataType::kFloat32, 2, node_));
    const Shape* shapes[] = {&a->shape(), &b->shape(), c != nullptr ? &c->shape() : nullptr};
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const GemmPlan> plan,
                            PlanFor(ShapeRefs(shapes, c != nullptr ? 3 : 2)));
    const GemmGeometry& g = plan->geometry;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, {g.m, g.n}));
    if (g.m == 0 || g.n == 0) return absl::OkStatus();
    float* out = y->mutable_data<float>();
    if (g.k == 0) {  // Y = beta * C
      if (g.c_mode == CMode::kNone) {
        std::fill(out, out + g.m * g.n, 0.0f);
      } else {
        BroadcastC(c->data<float>(), g.c_rows, g.c_cols, g.m, g.n, attrs_.beta, out);
      }
      return absl::OkStatus();
    }
    if (g.c_mode == CMode::kSum)
      BroadcastC(c->data<float>(), g.c_rows, g.c_cols, g.m, g.n, 1.0f, out);
    return plan->primitive->Execute(ctx, a->raw_data(), b->raw_data(),
                                    g.c_mode == CMode::kBias ? c->raw_data() : nullptr, out, node_);
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.size() < (has_c_ ? 3u : 2u)) return {};
    const Shape* shapes[] = {&input_shapes[0], &input_shapes[1],
                             has_c_ ? &input_shapes[2] : nullptr};
    absl::StatusOr<std::shared_ptr<const GemmPlan>> plan =
        PlanFor(ShapeRefs(shapes, has_c_ ? 3 : 2));
    if (!plan.ok() || (*plan)->primitive == nullptr) return {};
    return ScratchpadRequirement((*plan)->primitive->scratchpad_bytes());
  }

  size_t PersistentBytes() const override {
    return packed_cache_.bytes() + cache_.SumBytes([](const GemmPlan& p) {
      return p.primitive != nullptr ? p.primitive->prepacked_bytes() : size_t{0};
    });
  }

 private:
  explicit GemmKernel(const KernelInfo& info)
      : node_(info),
        attrs_(ReadAttributes(info)),
        has_c_(info.input_present(2)),
        strict_c_(info.opset() < 7 && info.GetInt("broadcast", 0) == 0),
        threads_(info.intra_op_threads()) {}

  static GemmAttributes ReadAttributes(const KernelInfo& info) {
    GemmAttributes a;
    a.trans_a = info.GetInt("transA", 0) != 0;
    a.trans_b = info.GetInt("transB", 0) != 0;
    a.alpha = info.GetFloat("alpha", 1.0f);
    a.beta = info.GetFloat("beta", 1.0f);
    return a;
  }

  static absl::Status CheckC(const KernelInfo& info) {
    if (info.opset() < 11 && !info.input_present(2)) {
      return info.Error(
          absl::StrCat("input C is required before opset 11 (model opset ", info.opset(), ")"));
    }
    return absl::OkStatus();
  }

  // Before opset 7, C broadcasts only with broadcast=1; otherwise it must be [M, N].
  absl::Status CheckLegacyBroadcast(const GemmGeometry& g, const Shape& c) const {
    if (!strict_c_ || (c.rank() == 2 && c[0] == g.m && c[1] == g.n)) return absl::OkStatus();
    return node_.InvalidArgument(absl::StrCat("C has shape ", c.ToString(), " but must be [", g.m,
                                              ",", g.n, "] when broadcast is 0 (opset < 7)"));
  }

  // A, B and C (when present) if all are known at load.
  static std::optional<std::vector<Shape>> StaticShapes(const KernelInfo& info) {
    std::vector<Shape> shapes;
    for (int i = 0; i < (info.input_present(2) ? 3 : 2); ++i) {
      std::optional<Shape> s = StaticInputShape(info, i);
      if (!s) return std::nullopt;
      shapes.push_back(*s);
    }
    return shapes;
  }

  absl::StatusOr<std::shared_ptr<const GemmPlan>> BuildPlan(
      ShapeRefs shapes, const void* constant_b, PackedWeightsCache* packed_cache) const {
    auto plan = std::make_shared<GemmPlan>();
    INFERD_ASSIGN_OR_RETURN(plan->geometry,
                            ComputeGeometry(attrs_, *shapes[0], *shapes[1],
                                            shapes.size() > 2 ? shapes[2] : nullptr, node_));
    const GemmGeometry& g = plan->geometry;
    if (shapes.size() > 2) INFERD_RETURN_IF_ERROR(CheckLegacyBroadcast(g, *shapes[2]));
    if (g.m != 0 && g.n != 0 && g.k != 0) {
      INFERD_ASSIGN_OR_RETURN(
          plan->primitive,
          MatMulPrimitive::Build(SpecFor(attrs_, g, constant_b, packed_cache), threads_, node_));
    }
    return std::shared_ptr<const GemmPlan>(std::move(plan));
  }

  absl::StatusOr<std::shared_ptr<const GemmPlan>> PlanFor(ShapeRefs shapes) const {
    // Constant weights are prepacked once into packed_cache_, shared by the plans of every shape.
    return cache_.GetOrCreate(shapes, threads_,
                              [&] { return BuildPlan(shapes, constant_b_, &packed_cache_); });
  }

  const NodeLabel node_;
  const GemmAttributes attrs_;
  const bool has_c_;
  const bool strict_c_;  // opset < 7 with broadcast=0
  const int threads_;
  mutable ShapeCache<GemmPlan> cache_;
  const void* constant_b_ = nullptr;  // B's data when it is a constant (set at creation)
  mutable PackedWeightsCache packed_cache_;
};

}  // namespace

std::vector<engine::KernelDef> GemmKernelDefs() {
  // 1-6: C required, `broadcast` attribute; 7-10: C required, always broadcast; 11+: C optional
  // (CheckC and strict_c_ read the opset).
  // A float16 / bfloat16 B weight left half by the precision widening pass runs the half-weight
  // kernel instead (half_weight_product.h).
  return {WithHalfWeights(CpuDef(engine::kOnnxDomain, "Gemm", 1, 10, {DataType::kFloat32},
                                 FactoryOf<GemmKernel>(), &GemmKernel::EstimateWorkspace)),
          WithHalfWeights(CpuDef(engine::kOnnxDomain, "Gemm", 11, kMaxOpset, {DataType::kFloat32},
                                 FactoryOf<GemmKernel>(), &GemmKernel::EstimateWorkspace))};
}

}  // namespace inferd::kernels::cpu

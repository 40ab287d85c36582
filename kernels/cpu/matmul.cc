// MatMul (ai.onnx, numpy semantics) and FusedMatMul (com.inferd: MatMul times `alpha` (default
// 1), plus an optional bias over the last dimension, then optionally `activation` /
// `activation_params` as post-ops, ActivationPostOps in onednn_util.h), both one oneDNN matmul
// primitive. 1-D operands are promoted (A [K] -> [1,K],
// B [K] -> [K,1]) and the added dimension removed from the output; batch dimensions broadcast.
// A float16 / bfloat16 B weight left half by the precision widening pass runs the half-weight
// kernel instead (half_weight_product.h).
#include <algorithm>
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

// oneDNN memory descriptors hold at most this many dimensions.
constexpr size_t kMaxDnnlRank = DNNL_MAX_NDIMS;

struct MatMulGeometry {
  Shape out;                                   // the ONNX output shape
  dnnl::memory::dims src, weights, dst, bias;  // oneDNN dims: equal ranks >= 2
  int64_t m = 0, k = 0, n = 0;
  // Empty output, or K == 0 (the output is all zeros plus the bias): no primitive.
  bool degenerate = false;
};

absl::StatusOr<MatMulGeometry> ComputeGeometry(const Shape& a, const Shape& b,
                                               const NodeLabel& node) {
  if (a.rank() == 0 || b.rank() == 0) {
    return node.InvalidArgument(
        absl::StrCat("inputs must have rank >= 1, got A ", a.ToString(), " and B ", b.ToString()));
  }
  MatMulGeometry g;
  Shape a2 = a, b2 = b;
  if (a.rank() == 1) a2 = Shape{1, a[0]};
  if (b.rank() == 1) b2 = Shape{b[0], 1};
  g.m = a2[a2.rank() - 2];
  g.k = a2[a2.rank() - 1];
  g.n = b2[b2.rank() - 1];
  if (b2[b2.rank() - 2] != g.k) {
    return node.InvalidArgument(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(),
                                             " do not match: A has ", g.k, " columns, B has ",
                                             b2[b2.rank() - 2], " rows"));
  }
  const size_t batch_rank = std::max(a2.rank(), b2.rank()) - 2;
  if (batch_rank + 2 > kMaxDnnlRank) {
    return node.Unimplemented(
        absl::StrCat("inputs of rank ", batch_rank + 2, " (at most ", kMaxDnnlRank, " supported)"));
  }
  Shape batch;
  for (size_t i = 0; i < batch_rank; ++i) {
    auto dim = [&](const Shape& s) -> int64_t {
      const size_t lead = batch_rank - (s.rank() - 2);
      return i < lead ? 1 : s[i - lead];
    };
    const int64_t da = dim(a2), db = dim(b2);
    if (da != db && da != 1 && db != 1) {
      return node.InvalidArgument(absl::StrCat("batch dimensions of A ", a.ToString(), " and B ",
                                               b.ToString(), " cannot be broadcast"));
    }
    batch.push_back(da == 1 ? db : da);
    g.src.push_back(da);
    g.weights.push_back(db);
    g.dst.push_back(batch[i]);
    g.bias.push_back(1);
  }
  g.src.insert(g.src.end(), {g.m, g.k});
  g.weights.insert(g.weights.end(), {g.k, g.n});
  g.dst.insert(g.dst.end(), {g.m, g.n});
  g.bias.insert(g.bias.end(), {1, g.n});
  g.out = batch;
  if (a.rank() > 1) g.out.push_back(g.m);
  if (b.rank() > 1) g.out.push_back(g.n);
  g.degenerate = g.out.NumElements() == 0 || g.k == 0;
  return g;
}

absl::Status CheckBias(const Shape& bias, int64_t n, const NodeLabel& node) {
  const bool ok = bias.NumElements() == n && (bias.rank() == 0 || bias[bias.rank() - 1] == n);
  if (ok) return absl::OkStatus();
  return node.InvalidArgument(absl::StrCat("bias has shape ", bias.ToString(),
                                           " but must broadcast over the last dimension (", n,
                                           " elements)"));
}

// FusedMatMul's activation as post-ops (none for MatMul).
absl::StatusOr<std::vector<EltwisePostOp>> PostOpsOf(const KernelInfo& info) {
  if (info.domain() != engine::kInferdDomain) return std::vector<EltwisePostOp>{};
  absl::StatusOr<std::vector<EltwisePostOp>> ops =
      ActivationPostOps(info.GetString("activation", ""), info.GetFloats("activation_params"));
  if (!ops.ok()) return info.Error(ops.status().message());
  return ops;
}

// FusedMatMul's bias is input 2 when present.
bool HasBias(const KernelInfo& info) {
  return info.domain() == engine::kInferdDomain && info.input_present(2);
}

MatMulSpec SpecFor(const MatMulGeometry& g, bool has_bias, const void* constant_weights,
                   const std::vector<EltwisePostOp>& post_ops, float alpha,
                   PackedWeightsCache* packed_cache = nullptr) {
  MatMulSpec spec;
  spec.alpha = alpha;
  spec.post_ops = post_ops;
  spec.src = PlainDesc(g.src);
  spec.weights = PlainDesc(g.weights);
  spec.dst = PlainDesc(g.dst);
  if (has_bias) spec.bias = PlainDesc(g.bias);
  spec.constant_weights = constant_weights;
  spec.packed_cache = constant_weights != nullptr ? packed_cache : nullptr;
  return spec;
}

// Everything built for one pair of input shapes.
struct MatMulPlan {
  MatMulGeometry geometry;
  std::shared_ptr<const MatMulPrimitive> primitive;  // null when degenerate
};

class MatMulKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MatMulKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(std::vector<EltwisePostOp> post_ops, PostOpsOf(info));
    auto k = std::unique_ptr<MatMulKernel>(new MatMulKernel(info, std::move(post_ops)));
    // oneDNN does not say whether its output scale applies before or after the bias.
    if (k->has_bias_ && k->alpha_ != 1.0f) return info.Error("alpha with a bias is not supported");
    // Known shapes: build now, prepacking constant weights.
    std::optional<Shape> a = StaticInputShape(info, 0), b = StaticInputShape(info, 1);
    std::optional<Shape> bias = k->has_bias_ ? StaticInputShape(info, 2) : Shape();
    const Tensor* constant_b = info.input(1).constant;
    k->constant_b_ = constant_b != nullptr ? constant_b->raw_data() : nullptr;
    if (a && b && bias) {
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const MatMulPlan> plan,
                              k->BuildPlan(*a, *b, *bias, k->constant_b_, nullptr, k->threads_));
      const Shape* shapes[] = {&*a, &*b, &*bias};
      k->cache_.Pin(ShapeRefs(shapes, k->has_bias_ ? 3 : 2), k->threads_, std::move(plan));
    }
    return k;
  }

  // Workspace estimate without a kernel: the same primitive descriptor Create builds.
  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    const bool has_bias = HasBias(info);
    std::optional<Shape> a = StaticInputShape(info, 0), b = StaticInputShape(info, 1);
    std::optional<Shape> bias = has_bias ? StaticInputShape(info, 2) : Shape();
    if (!a || !b || !bias) return node.InvalidArgument("input shapes are not static");
    INFERD_ASSIGN_OR_RETURN(MatMulGeometry g, ComputeGeometry(*a, *b, node));
    if (g.degenerate) return size_t{0};
    INFERD_ASSIGN_OR_RETURN(std::vector<EltwisePostOp> post_ops, PostOpsOf(info));
    const Tensor* constant_b = info.input(1).constant;
    return MatMulPrimitive::WorkspaceBytes(
        SpecFor(g, has_bias, constant_b ? constant_b->raw_data() : nullptr, post_ops,
                info.GetFloat("alpha", 1.0f)),
        info.intra_op_threads(), node);
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, DataType::kFloat32, 1, node_));
    const Tensor* bias = nullptr;
    if (has_bias_) {
      INFERD_ASSIGN_OR_RETURN(bias, RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 2, node_));
    }
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const MatMulPlan> plan,
                            PlanFor(a->shape(), b->shape(), bias ? bias->shape() : Shape()));
    const MatMulGeometry& g = plan->geometry;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, g.out));
    if (y->NumElements() == 0) return absl::OkStatus();
    if (g.degenerate) {  // K == 0: the empty sum, plus the bias, activated
      float* out = y->mutable_data<float>();
      const int64_t rows = y->NumElements() / g.n;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < g.n; ++j) {
          out[r * g.n + j] = ApplyPostOps(bias ? bias->data<float>()[j] : 0.0f, post_ops_);
        }
      }
      return absl::OkStatus();
    }
    return plan->primitive->Execute(ctx, a->raw_data(), b->raw_data(),
                                    bias ? bias->raw_data() : nullptr, y->raw_mutable_data(),
                                    node_);
  }

  size_t PersistentBytes() const override {
    return packed_cache_.bytes() + cache_.SumBytes([](const MatMulPlan& p) {
      return p.primitive != nullptr ? p.primitive->prepacked_bytes() : size_t{0};
    });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.size() < (has_bias_ ? 3u : 2u)) return {};
    absl::StatusOr<std::shared_ptr<const MatMulPlan>> plan =
        PlanFor(input_shapes[0], input_shapes[1], has_bias_ ? input_shapes[2] : Shape());
    // Invalid shapes: Compute reports the error.
    if (!plan.ok() || (*plan)->primitive == nullptr) return {};
    return ScratchpadRequirement((*plan)->primitive->scratchpad_bytes());
  }

 private:
  MatMulKernel(const KernelInfo& info, std::vector<EltwisePostOp> post_ops)
      : node_(info),
        has_bias_(HasBias(info)),
        alpha_(info.GetFloat("alpha", 1.0f)),
        threads_(info.intra_op_threads()),
        post_ops_(std::move(post_ops)) {}

  absl::StatusOr<std::shared_ptr<const MatMulPlan>> BuildPlan(const Shape& a, const Shape& b,
                                                              const Shape& bias,
                                                              const void* constant_b,
                                                              PackedWeightsCache* packed_cache,
                                                              int threads) const {
    auto plan = std::make_shared<MatMulPlan>();
    INFERD_ASSIGN_OR_RETURN(plan->geometry, ComputeGeometry(a, b, node_));
    if (has_bias_) INFERD_RETURN_IF_ERROR(CheckBias(bias, plan->geometry.n, node_));
    if (!plan->geometry.degenerate) {
      INFERD_ASSIGN_OR_RETURN(plan->primitive,
                              MatMulPrimitive::Build(SpecFor(plan->geometry, has_bias_, constant_b,
                                                             post_ops_, alpha_, packed_cache),
                                                     threads, node_));
    }
    return std::shared_ptr<const MatMulPlan>(std::move(plan));
  }

  // Plans are built for the kernel's thread count (the one its workspace was declared for).
  // Constant weights are prepacked once into packed_cache_, shared by the plans of every shape.
  absl::StatusOr<std::shared_ptr<const MatMulPlan>> PlanFor(const Shape& a, const Shape& b,
                                                            const Shape& bias) const {
    const Shape* shapes[] = {&a, &b, &bias};
    return cache_.GetOrCreate(ShapeRefs(shapes, has_bias_ ? 3 : 2), threads_, [&] {
      return BuildPlan(a, b, bias, constant_b_, &packed_cache_, threads_);
    });
  }

  const NodeLabel node_;
  const bool has_bias_;  // FusedMatMul with input 2
  const float alpha_;    // FusedMatMul's output scale
  const int threads_;
  const std::vector<EltwisePostOp> post_ops_;  // FusedMatMul's activation
  mutable ShapeCache<MatMulPlan> cache_;
  const void* constant_b_ = nullptr;  // B's data when it is a constant (set at creation)
  mutable PackedWeightsCache packed_cache_;
};

}  // namespace

std::vector<engine::KernelDef> MatMulKernelDefs() {
  return {WithHalfWeights(CpuDef(engine::kOnnxDomain, "MatMul", 1, kMaxOpset, {DataType::kFloat32},
                                 FactoryOf<MatMulKernel>(), &MatMulKernel::EstimateWorkspace)),
          WithHalfWeights(CpuDef(engine::kInferdDomain, "FusedMatMul", 1, 1, {DataType::kFloat32},
                                 FactoryOf<MatMulKernel>(), &MatMulKernel::EstimateWorkspace))};
}

}  // namespace inferd::kernels::cpu

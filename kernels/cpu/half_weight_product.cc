#include "kernels/cpu/half_weight_product.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/half_weight_gemm.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// What the node asks besides the product itself.
struct ProductAttributes {
  bool gemm = false;     // Gemm (else MatMul / FusedMatMul)
  bool has_add = false;  // FusedMatMul's bias or Gemm's C (input 2) is applied
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
  std::vector<EltwisePostOp> post_ops;  // FusedMatMul's activation

  static absl::StatusOr<ProductAttributes> Read(const KernelInfo& info) {
    ProductAttributes a;
    a.gemm = info.op_type() == "Gemm";
    a.alpha = info.GetFloat("alpha", 1.0f);
    if (a.gemm) {
      a.beta = info.GetFloat("beta", 1.0f);
      a.trans_a = info.GetInt("transA", 0) != 0;
      a.trans_b = info.GetInt("transB", 0) != 0;
      a.has_add = info.input_present(2) && a.beta != 0.0f;
    } else if (info.domain() == engine::kInferdDomain) {
      a.has_add = info.input_present(2);
      absl::StatusOr<std::vector<EltwisePostOp>> ops =
          ActivationPostOps(info.GetString("activation", ""), info.GetFloats("activation_params"));
      if (!ops.ok()) return info.Error(ops.status().message());
      a.post_ops = *std::move(ops);
    }
    return a;
  }
};

// The product's dimensions and the output shape for A and B (and C / bias) shapes.
struct ProductGeometry {
  HalfWeightGemmShape gemm;
  Shape out;
  int64_t add_rows = 1, add_cols = 1;  // the bias / C as [rows, cols] broadcast to [M, N]
};

absl::StatusOr<ProductGeometry> ComputeGeometry(const ProductAttributes& attrs, const Shape& a,
                                                const Shape& b, const Shape* add, DataType b_type,
                                                const NodeLabel& node) {
  if (b.rank() != 2) {
    return node.Unimplemented(absl::StrCat("a ", DataTypeName(b_type), " B of shape ", b.ToString(),
                                           " (half-precision B must be 2-D)"));
  }
  ProductGeometry g;
  HalfWeightGemmShape& s = g.gemm;
  s.b_type = b_type;
  s.trans_b = attrs.trans_b;
  s.n = attrs.trans_b ? b[0] : b[1];
  const int64_t b_k = attrs.trans_b ? b[1] : b[0];
  if (attrs.gemm) {
    if (a.rank() != 2) {
      return node.InvalidArgument(absl::StrCat("A must be 2-D, got ", a.ToString()));
    }
    s.trans_a = attrs.trans_a;
    s.m = attrs.trans_a ? a[1] : a[0];
    s.k = attrs.trans_a ? a[0] : a[1];
    g.out = Shape{s.m, s.n};
  } else {
    if (a.rank() == 0) return node.InvalidArgument("A must have rank >= 1");
    s.k = a[a.rank() - 1];
    s.m = 1;  // the batch dimensions are rows too: B is 2-D
    for (size_t i = 0; i + 1 < a.rank(); ++i) s.m *= a[i];
    std::vector<int64_t> out(a.dims().begin(), a.dims().end() - 1);
    out.push_back(s.n);
    g.out = Shape(out);
  }
  if (b_k != s.k) {
    return node.InvalidArgument(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(),
                                             " do not match: A has ", s.k, " columns, B has ", b_k,
                                             attrs.trans_b ? " columns" : " rows"));
  }
  if (add != nullptr) {
    bool ok = true;
    if (attrs.gemm) {  // unidirectional broadcast of a C of rank <= 2
      if (add->rank() >= 1) g.add_cols = (*add)[add->rank() - 1];
      if (add->rank() == 2) g.add_rows = (*add)[0];
      ok = add->rank() <= 2 && (g.add_rows == 1 || g.add_rows == s.m) &&
           (g.add_cols == 1 || g.add_cols == s.n);
    } else {  // FusedMatMul's bias: N values over the last dimension
      g.add_cols = s.n;
      ok = add->NumElements() == s.n && (add->rank() == 0 || (*add)[add->rank() - 1] == s.n);
    }
    if (!ok) {
      return node.InvalidArgument(absl::StrCat(attrs.gemm ? "C" : "bias", " of shape ",
                                               add->ToString(), " does not broadcast to [", s.m,
                                               ", ", s.n, "]"));
    }
  }
  return g;
}

class HalfWeightProductKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<HalfWeightProductKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(ProductAttributes attrs, ProductAttributes::Read(info));
    if (!attrs.gemm && attrs.has_add && attrs.alpha != 1.0f) {
      return info.Error("alpha with a bias is not supported");
    }
    auto k = std::unique_ptr<HalfWeightProductKernel>(
        new HalfWeightProductKernel(info, std::move(attrs)));
    // Shapes known now: refuse what cannot run at load rather than at the first request.
    std::optional<Shape> a = StaticInputShape(info, 0), b = StaticInputShape(info, 1);
    if (a && b) {
      std::optional<Shape> add = k->attrs_.has_add ? StaticInputShape(info, 2) : Shape();
      if (add) {
        INFERD_RETURN_IF_ERROR(ComputeGeometry(k->attrs_, *a, *b,
                                               k->attrs_.has_add ? &*add : nullptr, k->b_type_,
                                               k->node_)
                                   .status());
      }
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(ProductAttributes attrs, ProductAttributes::Read(info));
    std::optional<Shape> a = StaticInputShape(info, 0), b = StaticInputShape(info, 1);
    if (!a || !b) return node.InvalidArgument("input shapes are not static");
    INFERD_ASSIGN_OR_RETURN(ProductGeometry g,
                            ComputeGeometry(attrs, *a, *b, nullptr, info.input(1).type, node));
    return HalfWeightGemmWorkspace(g.gemm, info.intra_op_threads());
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, b_type_, 1, node_));
    const Tensor* add = nullptr;
    if (attrs_.has_add) {
      INFERD_ASSIGN_OR_RETURN(add, RequiredInput(ctx, 2, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*add, DataType::kFloat32, 2, node_));
    }
    INFERD_ASSIGN_OR_RETURN(ProductGeometry g,
                            ComputeGeometry(attrs_, a->shape(), b->shape(),
                                            add ? &add->shape() : nullptr, b_type_, node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, g.out));
    if (y->NumElements() == 0) return absl::OkStatus();
    const HalfWeightGemmShape& s = g.gemm;
    float* out = y->mutable_data<float>();
    if (add != nullptr) {  // the bias / beta * C first; the product accumulates onto it
      const float* c = add->data<float>();
      const float scale = attrs_.gemm ? attrs_.beta : 1.0f;
      for (int64_t i = 0; i < s.m; ++i) {
        const float* c_row = c + (g.add_rows == 1 ? 0 : i) * g.add_cols;
        float* y_row = out + i * s.n;
        if (g.add_cols == 1) {
          for (int64_t j = 0; j < s.n; ++j) y_row[j] = scale * c_row[0];
        } else {
          for (int64_t j = 0; j < s.n; ++j) y_row[j] = scale * c_row[j];
        }
      }
    }
    INFERD_ASSIGN_OR_RETURN(void* ws,
                            ScratchpadFor(ctx, HalfWeightGemmWorkspace(s, threads_), node_));
    INFERD_RETURN_IF_ERROR(HalfWeightGemm(ctx.threads(), s, a->data<float>(), b->raw_data(),
                                          attrs_.alpha, add != nullptr, out, ws, node_));
    if (!attrs_.post_ops.empty()) {
      const int64_t count = y->NumElements();
      for (int64_t i = 0; i < count; ++i) out[i] = ApplyPostOps(out[i], attrs_.post_ops);
    }
    return absl::OkStatus();
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.size() < 2) return {};
    absl::StatusOr<ProductGeometry> g =
        ComputeGeometry(attrs_, input_shapes[0], input_shapes[1], nullptr, b_type_, node_);
    if (!g.ok()) return {};  // Compute reports it
    return ScratchpadRequirement(HalfWeightGemmWorkspace(g->gemm, threads_));
  }

 private:
  HalfWeightProductKernel(const KernelInfo& info, ProductAttributes attrs)
      : node_(info),
        attrs_(std::move(attrs)),
        b_type_(info.input(1).type),
        threads_(info.intra_op_threads()) {}

  const NodeLabel node_;
  const ProductAttributes attrs_;
  const DataType b_type_;
  const int threads_;
};

bool HalfB(const KernelInfo& info) {
  return info.input_present(1) && IsHalfWeightType(info.input(1).type);
}

}  // namespace

engine::KernelDef WithHalfWeights(engine::KernelDef def) {
  engine::KernelFactory own = std::move(def.create);
  def.create = [own](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    if (!HalfB(info)) return own(info);
    absl::StatusOr<std::unique_ptr<HalfWeightProductKernel>> k =
        HalfWeightProductKernel::Create(info);
    if (!k.ok()) return k.status();
    return std::unique_ptr<engine::OpKernel>(*std::move(k));
  };
  engine::WorkspaceEstimateFn own_estimate = std::move(def.estimate_workspace);
  def.estimate_workspace = [own_estimate](const KernelInfo& info) -> absl::StatusOr<size_t> {
    if (HalfB(info)) return HalfWeightProductKernel::EstimateWorkspace(info);
    if (!own_estimate) return absl::UnimplementedError("no workspace estimate");
    return own_estimate(info);
  };
  def.half_weight_inputs = {1};
  return def;
}

}  // namespace inferd::kernels::cpu

// The kernels of the KV-cache rewrite (engine/kv_cache_rewrite.h, docs/generation.md): a
// Concat-based Hugging Face export made to append in place into a sequence's KV block and read
// the valid prefix of it without a copy.
//   com.inferd KvCacheAppend(block, new, past_length) -> present_shape
//     block float [B, kv_heads, capacity, head_dim] (the sequence's block, bound as the past
//     input), new float [B, kv_heads, n, head_dim], past_length int64 scalar. Writes `new` into
//     positions [past, past + n) of the block, in place, and outputs the int64 shape
//     [B, kv_heads, past + n, head_dim] of the present the graph computed before.
//   com.inferd KvCacheMatMul(A, block, present_shape, chain_shape, expand_shape?) -> Y
//     The attention MatMul that read the present through layout ops (repeat_kv's Unsqueeze /
//     Expand / Reshape, a Transpose, a scalar Mul), computed from the block with strides:
//       transpose_b = 1:  Y[b,h,i,j] = sum_d A[b,h,i,d] * (K[b,h/rep,j,d] * scale)   (Q K^T)
//       transpose_b = 0:  Y[b,h,i,d] = sum_j A[b,h,i,j] * (V[b,h/rep,j,d] * scale)   (P V)
//     j < past + n (the valid prefix), rep = heads / kv_heads. chain_shape (the shape the
//     removed ops produced, from KvCacheShape) and expand_shape are checked at run time, so the
//     kernel computes exactly what the removed ops described or refuses.
//   com.inferd KvCacheShape(...) -> int64 shape, attribute `of`: the shape the removed layout op
//     `of` (Unsqueeze, Expand, Reshape, Transpose, Mul; "Shape" slices like Shape's start/end)
//     would give from its input's shape; "past": [B, kv_heads, past_length, head_dim] of a block.
// No kernel allocates beyond its output; Compute is const and thread-safe.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Rows of a [B, kv_heads, capacity, head_dim] block.
struct BlockGeometry {
  int64_t batch, kv_heads, capacity, head_dim;
};

absl::StatusOr<BlockGeometry> BlockOf(const Tensor& block, const NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(CheckType(block, DataType::kFloat32, 1, node));
  const Shape& s = block.shape();
  if (s.rank() != 4) {
    return node.InvalidArgument(absl::StrCat(
        "the KV block must be [batch, kv_heads, capacity, head_dim], got ", s.ToString()));
  }
  return BlockGeometry{s[0], s[1], s[2], s[3]};
}

absl::StatusOr<int64_t> ScalarInt(const Tensor& t, int index, const NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(CheckType(t, DataType::kInt64, index, node));
  if (t.NumElements() != 1) {
    return node.InvalidArgument(absl::StrCat("input ", index, " must hold one int64"));
  }
  return *t.data<int64_t>();
}

std::vector<int64_t> Dims(const Tensor& shape_tensor) {
  const int64_t* p = shape_tensor.data<int64_t>();
  return std::vector<int64_t>(p, p + shape_tensor.NumElements());
}

absl::Status WriteShape(KernelContext& ctx, const std::vector<int64_t>& dims) {
  INFERD_ASSIGN_OR_RETURN(
      Tensor * y,
      ctx.MakeOutputTensor(0, DataType::kInt64, Shape{static_cast<int64_t>(dims.size())}));
  std::copy(dims.begin(), dims.end(), y->mutable_data<int64_t>());
  return absl::OkStatus();
}

class KvCacheAppend final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<KvCacheAppend>> Create(const KernelInfo& info) {
    return std::unique_ptr<KvCacheAppend>(new KvCacheAppend(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* block, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* fresh, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* past_t, RequiredInput(ctx, 2, node_));
    INFERD_ASSIGN_OR_RETURN(BlockGeometry g, BlockOf(*block, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*fresh, DataType::kFloat32, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const int64_t past, ScalarInt(*past_t, 2, node_));
    const Shape& f = fresh->shape();
    if (f.rank() != 4 || f[0] != g.batch || f[1] != g.kv_heads || f[3] != g.head_dim) {
      return node_.InvalidArgument(absl::StrCat("new keys/values ", f.ToString(),
                                                " do not fit the KV block ",
                                                block->shape().ToString()));
    }
    const int64_t n = f[2];
    if (past < 0 || n < 0 || past > g.capacity - n) {
      return node_.InvalidArgument(absl::StrCat(
          "past length ", past, " + ", n, " new positions exceed the KV block's capacity of ",
          g.capacity, " positions (the sequence's maximum length)"));
    }
    // The block is the sequence's own buffer, bound as this graph input for this run: written
    // in place (the rewrite's contract, engine/kv_cache_rewrite.h).
    auto* dst = static_cast<float*>(const_cast<void*>(block->raw_data()));
    const float* src = fresh->data<float>();
    const size_t row = static_cast<size_t>(g.head_dim) * sizeof(float);
    for (int64_t bh = 0; bh < g.batch * g.kv_heads; ++bh) {
      std::memcpy(dst + (bh * g.capacity + past) * g.head_dim, src + bh * n * g.head_dim,
                  row * static_cast<size_t>(n));
    }
    return WriteShape(ctx, {g.batch, g.kv_heads, past + n, g.head_dim});
  }

 private:
  explicit KvCacheAppend(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

class KvCacheMatMul final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<KvCacheMatMul>> Create(const KernelInfo& info) {
    return std::unique_ptr<KvCacheMatMul>(new KvCacheMatMul(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* block, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* present, RequiredInput(ctx, 2, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* chain, RequiredInput(ctx, 3, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*a, DataType::kFloat32, 0, node_));
    INFERD_ASSIGN_OR_RETURN(BlockGeometry g, BlockOf(*block, node_));
    const std::vector<int64_t> p = Dims(*present);
    if (p.size() != 4 || p[0] != g.batch || p[1] != g.kv_heads || p[3] != g.head_dim || p[2] < 0 ||
        p[2] > g.capacity) {
      return node_.InvalidArgument("the present shape does not describe the KV block");
    }
    const int64_t len = p[2];
    const Shape& as = a->shape();
    if (as.rank() != 4 || as[0] != g.batch || as[1] % g.kv_heads != 0) {
      return node_.InvalidArgument(absl::StrCat("A ", as.ToString(), " does not fit the KV block ",
                                                block->shape().ToString()));
    }
    const int64_t heads = as[1], q = as[2], rep = heads / g.kv_heads;
    // What the removed layout ops produced must be what this kernel reads.
    const std::vector<int64_t> want_chain =
        transpose_b_ ? std::vector<int64_t>{g.batch, heads, g.head_dim, len}
                     : std::vector<int64_t>{g.batch, heads, len, g.head_dim};
    if (Dims(*chain) != want_chain) {
      return node_.InvalidArgument(
          "the layout ops between the cache and the MatMul are not "
          "the repeat / transpose this kernel computes");
    }
    const Tensor* expand = ctx.input(4);
    if (expand != nullptr &&
        Dims(*expand) != std::vector<int64_t>{g.batch, g.kv_heads, rep, len, g.head_dim}) {
      return node_.InvalidArgument("the Expand of the cache is not a repeat of its heads");
    }
    if (expand == nullptr && rep != 1) {
      return node_.InvalidArgument("heads differ from the cache's kv_heads without a repeat");
    }
    const int64_t inner = transpose_b_ ? g.head_dim : len;
    if (as[3] != inner) {
      return node_.InvalidArgument(
          absl::StrCat("A ", as.ToString(), " has ", as[3], " columns, the cache gives ", inner));
    }
    const int64_t cols = transpose_b_ ? len : g.head_dim;
    INFERD_ASSIGN_OR_RETURN(
        Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{g.batch, heads, q, cols}));
    const float* ad = a->data<float>();
    const float* kv = block->data<float>();
    float* yd = y->mutable_data<float>();
    const float scale = scale_;
    const int64_t rows = g.batch * heads * q;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, cols * inner)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  const int64_t bh = r / q;
                                  const int64_t b = bh / heads, h = bh % heads;
                                  const float* arow = ad + r * inner;
                                  const float* cache =
                                      kv + ((b * g.kv_heads + h / rep) * g.capacity) * g.head_dim;
                                  float* yrow = yd + r * cols;
                                  if (transpose_b_) {
                                    for (int64_t j = 0; j < len; ++j) {
                                      const float* k = cache + j * g.head_dim;
                                      float acc = 0.f;
#pragma omp simd reduction(+ : acc)
                                      for (int64_t d = 0; d < g.head_dim; ++d)
                                        acc += arow[d] * (k[d] * scale);
                                      yrow[j] = acc;
                                    }
                                  } else {
                                    std::fill(yrow, yrow + g.head_dim, 0.f);
                                    for (int64_t j = 0; j < len; ++j) {
                                      const float w = arow[j];
                                      const float* v = cache + j * g.head_dim;
#pragma omp simd
                                      for (int64_t d = 0; d < g.head_dim; ++d)
                                        yrow[d] += w * (v[d] * scale);
                                    }
                                  }
                                }
                              });
    return absl::OkStatus();
  }

 private:
  explicit KvCacheMatMul(const KernelInfo& info)
      : node_(info),
        transpose_b_(info.GetInt("transpose_b", 0) != 0),
        scale_(info.GetFloat("scale", 1.f)) {}
  const NodeLabel node_;
  const bool transpose_b_;
  const float scale_;
};

class KvCacheShape final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<KvCacheShape>> Create(const KernelInfo& info) {
    std::unique_ptr<KvCacheShape> k(new KvCacheShape(info));
    static const char* const kKinds[] = {"past",      "Unsqueeze", "Expand", "Reshape",
                                         "Transpose", "Mul",       "Shape"};
    if (std::find(std::begin(kKinds), std::end(kKinds), k->of_) == std::end(kKinds)) {
      return info.Error(absl::StrCat("unknown KvCacheShape kind '", k->of_, "'"));
    }
    return k;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0, node_));
    if (of_ == "past") {
      INFERD_ASSIGN_OR_RETURN(BlockGeometry g, BlockOf(*in, node_));
      INFERD_ASSIGN_OR_RETURN(const Tensor* past_t, RequiredInput(ctx, 1, node_));
      INFERD_ASSIGN_OR_RETURN(const int64_t past, ScalarInt(*past_t, 1, node_));
      if (past < 0 || past > g.capacity) {
        return node_.InvalidArgument(absl::StrCat("past length ", past, " is outside the block"));
      }
      return WriteShape(ctx, {g.batch, g.kv_heads, past, g.head_dim});
    }
    INFERD_RETURN_IF_ERROR(CheckType(*in, DataType::kInt64, 0, node_));
    std::vector<int64_t> s = Dims(*in);
    const Tensor* operand = ctx.input(1);
    if (of_ == "Unsqueeze") {
      std::vector<int64_t> axes = axes_;
      if (operand != nullptr) axes = Dims(*operand);
      const int64_t rank = static_cast<int64_t>(s.size() + axes.size());
      for (int64_t& ax : axes) ax = ax < 0 ? ax + rank : ax;
      std::sort(axes.begin(), axes.end());
      for (int64_t ax : axes) {
        if (ax < 0 || ax > static_cast<int64_t>(s.size())) {
          return node_.InvalidArgument("Unsqueeze axis out of range");
        }
        s.insert(s.begin() + ax, 1);
      }
    } else if (of_ == "Expand" || of_ == "Mul") {
      if (operand == nullptr) return node_.InvalidArgument("missing the second operand");
      const std::vector<int64_t> t = of_ == "Expand"
                                         ? Dims(*operand)
                                         : std::vector<int64_t>(operand->shape().dims().begin(),
                                                                operand->shape().dims().end());
      INFERD_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(Shape(s), Shape(t), node_));
      s.assign(out.dims().begin(), out.dims().end());
    } else if (of_ == "Reshape") {
      if (operand == nullptr) return node_.InvalidArgument("missing the shape operand");
      INFERD_ASSIGN_OR_RETURN(s, Reshaped(s, Dims(*operand)));
    } else if (of_ == "Transpose") {
      std::vector<int64_t> perm = perm_;
      if (perm.empty()) {
        for (size_t i = s.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      }
      if (perm.size() != s.size()) return node_.InvalidArgument("Transpose perm rank mismatch");
      std::vector<int64_t> t(s.size());
      for (size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(s.size())) {
          return node_.InvalidArgument("Transpose perm out of range");
        }
        t[i] = s[perm[i]];
      }
      s = std::move(t);
    } else if (of_ == "Shape") {
      const int64_t rank = static_cast<int64_t>(s.size());
      int64_t b = start_ < 0 ? start_ + rank : start_;
      int64_t e = end_ < 0 ? end_ + rank : std::min(end_, rank);
      b = std::clamp<int64_t>(b, 0, rank);
      e = std::clamp<int64_t>(e, 0, rank);
      s = std::vector<int64_t>(s.begin() + b, s.begin() + std::max(b, e));
    }
    return WriteShape(ctx, s);
  }

 private:
  explicit KvCacheShape(const KernelInfo& info)
      : node_(info),
        of_(info.GetString("of", "")),
        axes_(info.GetInts("axes")),
        perm_(info.GetInts("perm")),
        allowzero_(info.GetInt("allowzero", 0) != 0),
        start_(info.GetInt("start", 0)),
        end_(info.GetInt("end", INT64_MAX)) {}

  // ONNX Reshape's rules: 0 copies the input dim (unless allowzero), one -1 is inferred.
  absl::StatusOr<std::vector<int64_t>> Reshaped(const std::vector<int64_t>& in,
                                                std::vector<int64_t> target) const {
    int64_t total = 1, known = 1;
    for (int64_t d : in) total *= d;
    int infer = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && !allowzero_) {
        if (i >= in.size()) return node_.InvalidArgument("Reshape 0 past the input's rank");
        target[i] = in[i];
      }
      if (target[i] == -1) {
        if (infer >= 0) return node_.InvalidArgument("Reshape with two -1");
        infer = static_cast<int>(i);
      } else if (target[i] < 0) {
        return node_.InvalidArgument("Reshape with a negative dim");
      } else {
        known *= target[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return node_.InvalidArgument("Reshape cannot infer");
      target[infer] = total / known;
    } else if (known != total) {
      return node_.InvalidArgument("Reshape changes the element count");
    }
    return target;
  }

  const NodeLabel node_;
  const std::string of_;
  const std::vector<int64_t> axes_, perm_;
  const bool allowzero_;
  const int64_t start_, end_;
};

}  // namespace

std::vector<engine::KernelDef> KvCacheKernelDefs() {
  std::vector<engine::KernelDef> defs;
  defs.push_back(CpuDef(engine::kInferdDomain, "KvCacheAppend", 1, INT_MAX, {DataType::kFloat32},
                        FactoryOf<KvCacheAppend>(),
                        [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; }));
  defs.push_back(CpuDef(engine::kInferdDomain, "KvCacheMatMul", 1, INT_MAX, {DataType::kFloat32},
                        FactoryOf<KvCacheMatMul>(),
                        [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; }));
  defs.push_back(CpuDef(engine::kInferdDomain, "KvCacheShape", 1, INT_MAX, {},
                        FactoryOf<KvCacheShape>(),
                        [](const KernelInfo&) -> absl::StatusOr<size_t> { return 0; }));
  return defs;
}

}  // namespace inferd::kernels::cpu

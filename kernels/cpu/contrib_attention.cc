// ONNX Runtime's fused attention operators (com.microsoft, version 1), float32, own code on
// oneDNN's sgemm:
//   Attention(input [B, S, H], weights [H, Dq + Dk + Dv], bias?, mask_index?, past?,
//             attention_bias?) -> output [B, S, Dv], present? [2, B, N, P + S, Dk / N]
//   MultiHeadAttention(query [B, S, Dq], key [B, L, Dk], value [B, L, Dv], bias?,
//             key_padding_mask?, attention_bias?, past_key?, past_value?)
//             -> output [B, S, Dv], present_key?, present_value? [B, N, P + L, head size]
// Per (batch, head), with T = P + L keys: scores = scale * Q K^T (sgemm) + mask + attention_bias,
// softmax over the T keys, output = scores V (sgemm) written straight into its [B, S, N * h]
// place. Masks are ORT's: an additive mask_filter_value (-10000 by default) where the mask
// says 0 (2-D [B, T], 3-D [B, S, T]) or past a key length (1-D [B]) or outside [start, end)
// (1-D [2B]); `unidirectional` adds it again for keys after the query's position (P + s).
// Attention's Q/K/V projection is one sgemm over all B * S rows; the projection and the scores
// live in the declared workspace (no allocation per run). Parallel over (batch, head).
// Refused (UNIMPLEMENTED): float16, 4-D (Megatron) masks, do_rotary, past_present_share_buffer,
// past_sequence_length, MultiHeadAttention's packed QKV / KV and 4-D key/value forms, its qk
// output and cache_indirection.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "dnnl.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kAlign = 64;  // bytes; workspace regions start on cache lines

// A per-(batch, head) matrix inside a buffer: rows of `ld` floats.
struct Operand {
  const float* base = nullptr;
  int64_t batch_stride = 0, head_stride = 0, ld = 0;
  const float* At(int64_t b, int64_t h) const { return base + b * batch_stride + h * head_stride; }
};

enum class MaskKind { kNone, kKeyLength, kEndStart, k2D, k3D };

// Everything the scaled-dot-product core needs, sizes first.
struct Core {
  int64_t batch = 0, seq = 0, total = 0, past = 0, heads = 0, qk_head = 0, v_head = 0;
  float scale = 1.0f, filter = -10000.0f;
  bool unidirectional = false;
  MaskKind mask_kind = MaskKind::kNone;
  const int32_t* mask = nullptr;
  const float* attn_bias = nullptr;  // [B or 1, N or 1, S, T]
  int64_t attn_bias_b = 0, attn_bias_h = 0;
  Operand q, k, v;
  float* out = nullptr;     // [B, S, N * v_head]
  float* scores = nullptr;  // [B * N, S, T]
};

// The mask of batch row b as (kind, validated): sets `c.mask_kind` from the mask's shape.
absl::Status ClassifyMask(const Tensor* mask, Core& c, const NodeLabel& node) {
  if (mask == nullptr) return absl::OkStatus();
  INFERD_RETURN_IF_ERROR(CheckType(*mask, DataType::kInt32, 0, node));
  const Shape& m = mask->shape();
  if (m.rank() == 1 && m[0] == c.batch) {
    c.mask_kind = MaskKind::kKeyLength;
  } else if (m.rank() == 1 && m[0] == 2 * c.batch) {
    c.mask_kind = MaskKind::kEndStart;
  } else if (m.rank() == 2 && m[0] == c.batch && m[1] == c.total) {
    c.mask_kind = MaskKind::k2D;
  } else if (m.rank() == 3 && m[0] == c.batch && m[1] == c.seq && m[2] == c.total) {
    c.mask_kind = MaskKind::k3D;
  } else if (m.rank() == 4) {
    return node.Unimplemented(
        absl::StrCat("4-D (Megatron) masks are not supported (ONNX Runtime's CPU kernel refuses "
                     "them too), got ",
                     m.ToString()));
  } else {
    return node.InvalidArgument(absl::StrCat(
        "mask must be [B] key lengths, [2B] end and start positions, [B, T] or [B, S, T] with "
        "B = ",
        c.batch, ", S = ", c.seq, ", T = ", c.total, "; got ", m.ToString()));
  }
  c.mask = mask->data<int32_t>();
  return absl::OkStatus();
}

absl::Status ClassifyAttentionBias(const Tensor* bias, Core& c, const NodeLabel& node) {
  if (bias == nullptr) return absl::OkStatus();
  INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 0, node));
  const Shape& s = bias->shape();
  if (s.rank() != 4 || (s[0] != c.batch && s[0] != 1) || (s[1] != c.heads && s[1] != 1) ||
      s[2] != c.seq || s[3] != c.total) {
    return node.InvalidArgument(absl::StrCat("attention_bias must be [B or 1, N or 1, S, T] = [",
                                             c.batch, ", ", c.heads, ", ", c.seq, ", ", c.total,
                                             "], got ", s.ToString()));
  }
  c.attn_bias = bias->data<float>();
  const int64_t st = c.seq * c.total;
  c.attn_bias_h = s[1] == 1 ? 0 : st;
  c.attn_bias_b = s[0] == 1 ? 0 : s[1] * st;
  return absl::OkStatus();
}

// Softmax of one row in place.
inline void SoftmaxRow(float* x, int64_t n) {
  float m = x[0];
  for (int64_t j = 1; j < n; ++j) m = std::max(m, x[j]);
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    x[j] = FastExp(x[j] - m);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

// Runs the core over every (batch, head).
absl::Status RunCore(const Core& c, engine::ThreadPool& pool, const NodeLabel& node) {
  if (c.total == 0) return node.InvalidArgument("there are no keys to attend to (T = 0)");
  const int64_t items = c.batch * c.heads, s_len = c.seq, t_len = c.total;
  const int64_t out_ld = c.heads * c.v_head;
  std::mutex mu;
  dnnl_status_t failed = dnnl_success;
  pool.ParallelFor(items, 1, [&](int64_t begin, int64_t end) {
    ScopedOmpThreads one(1);
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / c.heads, h = i % c.heads;
      float* p = c.scores + i * s_len * t_len;
      dnnl_status_t st = dnnl_sgemm('N', 'T', s_len, t_len, c.qk_head, c.scale, c.q.At(b, h),
                                    c.q.ld, c.k.At(b, h), c.k.ld, 0.0f, p, t_len);
      for (int64_t s = 0; st == dnnl_success && s < s_len; ++s) {
        float* row = p + s * t_len;
        switch (c.mask_kind) {
          case MaskKind::kNone:
            break;
          case MaskKind::kKeyLength:
          case MaskKind::kEndStart: {
            const int64_t valid_end = std::clamp<int64_t>(c.mask[b], 0, t_len);
            const int64_t valid_start = c.mask_kind == MaskKind::kEndStart
                                            ? std::clamp<int64_t>(c.mask[b + c.batch], 0, t_len)
                                            : 0;
            for (int64_t j = 0; j < t_len; ++j) {
              if (j >= valid_end || j < valid_start) row[j] += c.filter;
            }
            break;
          }
          case MaskKind::k2D:
          case MaskKind::k3D: {
            const int32_t* m = c.mask_kind == MaskKind::k2D ? c.mask + b * t_len
                                                            : c.mask + (b * s_len + s) * t_len;
            for (int64_t j = 0; j < t_len; ++j) {
              if (m[j] <= 0) row[j] += c.filter;
            }
            break;
          }
        }
        if (c.unidirectional) {
          for (int64_t j = c.past + s + 1; j < t_len; ++j) row[j] += c.filter;
        }
        if (c.attn_bias != nullptr) {
          const float* ab = c.attn_bias + b * c.attn_bias_b + h * c.attn_bias_h + s * t_len;
#pragma omp simd
          for (int64_t j = 0; j < t_len; ++j) row[j] += ab[j];
        }
        SoftmaxRow(row, t_len);
      }
      if (st == dnnl_success) {
        st = dnnl_sgemm('N', 'N', s_len, c.v_head, t_len, 1.0f, p, t_len, c.v.At(b, h), c.v.ld,
                        0.0f, c.out + b * s_len * out_ld + h * c.v_head, out_ld);
      }
      if (st != dnnl_success) {
        std::lock_guard<std::mutex> lock(mu);
        failed = st;
        return;
      }
    }
  });
  if (failed != dnnl_success) {
    return node.Internal(absl::StrCat("dnnl_sgemm failed (status ", static_cast<int>(failed), ")"));
  }
  return absl::OkStatus();
}

// Workspace regions: byte offsets of each (64-byte aligned) and the total.
class Layout {
 public:
  // Adds a region of `floats` floats; false on overflow.
  bool Add(int64_t floats, int64_t* offset) {
    std::optional<int64_t> bytes = CheckedMul<int64_t>(floats, sizeof(float));
    if (!bytes) return false;
    std::optional<uint64_t> rounded = CheckedRoundUp(static_cast<uint64_t>(*bytes), kAlign);
    if (!rounded) return false;
    *offset = total_;
    std::optional<int64_t> t = CheckedAdd<int64_t>(total_, static_cast<int64_t>(*rounded));
    if (!t) return false;
    total_ = *t;
    return true;
  }
  int64_t total() const { return total_; }

 private:
  int64_t total_ = 0;
};

std::optional<int64_t> Product(std::initializer_list<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) {
    std::optional<int64_t> q = CheckedMul<int64_t>(p, x);
    if (!q) return std::nullopt;
    p = *q;
  }
  return p;
}

std::vector<engine::WorkspaceRequirement> One(int64_t bytes) {
  if (bytes <= 0) return {};
  return {{0, static_cast<size_t>(bytes)}};
}

float ScaleOf(const KernelInfo& info) { return info.GetFloat("scale", 0.0f); }

// --- Attention -----------------------------------------------------------------------------

class AttentionKernel final : public engine::OpKernel {
 public:
  enum Input { kInput, kWeights, kBias, kMask, kPast, kAttnBias, kPastSeqLen };

  static absl::StatusOr<std::unique_ptr<AttentionKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t heads, info.RequireInt("num_heads"));
    if (heads < 1) return info.Error(absl::StrCat("num_heads must be >= 1, got ", heads));
    const NodeLabel node(info);
    if (info.GetInt("do_rotary", 0) != 0) return node.Unimplemented("do_rotary is not supported");
    if (info.GetInt("past_present_share_buffer", 0) != 0) {
      return node.Unimplemented("past_present_share_buffer is not supported");
    }
    if (info.input_present(kPastSeqLen)) {
      return node.Unimplemented("the past_sequence_length input is not supported");
    }
    std::vector<int64_t> sizes = info.GetInts("qkv_hidden_sizes");
    if (!sizes.empty()) {
      if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0 ||
          sizes[0] % heads != 0 || sizes[2] % heads != 0) {
        return info.Error(
            "qkv_hidden_sizes must be 3 positive sizes, Q's equal to K's, each a multiple of "
            "num_heads");
      }
    }
    const float scale = ScaleOf(info);
    if (!std::isfinite(scale) || scale < 0) return info.Error("scale must be finite and >= 0");
    return std::unique_ptr<AttentionKernel>(
        new AttentionKernel(info, heads, std::move(sizes), scale));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    absl::StatusOr<Geometry> g = Plan(shapes);
    return g.ok() ? One(g->workspace) : std::vector<engine::WorkspaceRequirement>{};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, kInput, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, kWeights, node_));
    const Tensor* bias = ctx.input(kBias);
    const Tensor* past = ctx.input(kPast);
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, kInput, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*w, DataType::kFloat32, kWeights, node_));
    if (bias != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, kBias, node_));
    if (past != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*past, DataType::kFloat32, kPast, node_));
    std::vector<Shape> shapes(ctx.num_inputs());
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i) != nullptr) shapes[i] = ctx.input(i)->shape();
    }
    INFERD_ASSIGN_OR_RETURN(Geometry g, Plan(shapes));
    INFERD_ASSIGN_OR_RETURN(
        Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{g.batch, g.seq, g.dv}));
    const bool want_present = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    Tensor* present = nullptr;
    if (want_present) {
      INFERD_ASSIGN_OR_RETURN(
          present, ctx.MakeOutputTensor(1, DataType::kFloat32,
                                        Shape{2, g.batch, heads_, g.past + g.seq, g.qk_head}));
    }
    if (y->NumElements() == 0) return absl::OkStatus();
    float* ws = nullptr;
    if (g.workspace > 0) {
      INFERD_ASSIGN_OR_RETURN(void* p, ctx.GetWorkspace(0));
      ws = static_cast<float*>(p);
    }
    float* qkv = ws + g.qkv_offset / sizeof(float);
    const int64_t cols = g.dq + g.dq + g.dv, rows = g.batch * g.seq;

    // pass 1: qkv [B * S, Dq + Dk + Dv] = input x weights + bias (one sgemm, all threads).
    if (g.hidden == 0) {
      std::fill(qkv, qkv + rows * cols, 0.0f);
    } else {
      ScopedOmpThreads threads(ctx.threads().num_threads());
      const dnnl_status_t st = dnnl_sgemm('N', 'N', rows, cols, g.hidden, 1.0f, x->data<float>(),
                                          g.hidden, w->data<float>(), cols, 0.0f, qkv, cols);
      if (st != dnnl_success) return node_.Internal("dnnl_sgemm failed in the QKV projection");
    }
    if (bias != nullptr) {
      const float* b = bias->data<float>();
      ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 16384 / cols),
                                [&](int64_t r0, int64_t r1) {
                                  for (int64_t r = r0; r < r1; ++r) {
                                    float* row = qkv + r * cols;
#pragma omp simd
                                    for (int64_t j = 0; j < cols; ++j) row[j] += b[j];
                                  }
                                });
    }

    Core c;
    c.batch = g.batch;
    c.seq = g.seq;
    c.past = g.past;
    c.total = g.past + g.seq;
    c.heads = heads_;
    c.qk_head = g.qk_head;
    c.v_head = g.dv / heads_;
    c.scale = scale_ > 0 ? scale_ : 1.0f / std::sqrt(static_cast<float>(g.qk_head));
    c.filter = filter_;
    c.unidirectional = unidirectional_;
    INFERD_RETURN_IF_ERROR(ClassifyMask(ctx.input(kMask), c, node_));
    INFERD_RETURN_IF_ERROR(ClassifyAttentionBias(ctx.input(kAttnBias), c, node_));
    c.q = {qkv, g.seq * cols, g.qk_head, cols};
    c.k = {qkv + g.dq, g.seq * cols, g.qk_head, cols};
    c.v = {qkv + 2 * g.dq, g.seq * cols, c.v_head, cols};
    // pass 2: present = [past; new K], [past; new V] per (batch, head); the core reads it.
    if (present != nullptr) {
      float* pk = present->mutable_data<float>();
      const int64_t hd = g.qk_head, t = c.total, half = g.batch * heads_ * t * hd;
      const float* pp = past != nullptr ? past->data<float>() : nullptr;
      const int64_t past_half = g.batch * heads_ * g.past * hd;
      ctx.threads().ParallelFor(g.batch * heads_, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t b = i / heads_, h = i % heads_;
          for (int kv = 0; kv < 2; ++kv) {
            float* dst = pk + kv * half + i * t * hd;
            if (pp != nullptr && g.past > 0) {
              std::memcpy(dst, pp + kv * past_half + i * g.past * hd, sizeof(float) * g.past * hd);
            }
            const Operand& src = kv == 0 ? c.k : c.v;
            for (int64_t s = 0; s < g.seq; ++s) {
              std::memcpy(dst + (g.past + s) * hd, src.At(b, h) + s * src.ld, sizeof(float) * hd);
            }
          }
        }
      });
      c.k = {pk, heads_ * t * hd, t * hd, hd};
      c.v = {pk + half, heads_ * t * hd, t * hd, hd};
    } else if (past != nullptr && g.past > 0) {
      return node_.InvalidArgument("a past input needs the present output");
    }
    c.out = y->mutable_data<float>();
    c.scores = ws + g.scores_offset / sizeof(float);
    return RunCore(c, ctx.threads(), node_);
  }

 private:
  struct Geometry {
    int64_t batch = 0, seq = 0, hidden = 0, past = 0, dq = 0, dv = 0, qk_head = 0;
    int64_t qkv_offset = 0, scores_offset = 0, workspace = 0;
  };

  AttentionKernel(const KernelInfo& info, int64_t heads, std::vector<int64_t> sizes, float scale)
      : node_(info),
        heads_(heads),
        sizes_(std::move(sizes)),
        scale_(scale),
        filter_(info.GetFloat("mask_filter_value", -10000.0f)),
        unidirectional_(info.GetInt("unidirectional", 0) != 0) {}

  absl::StatusOr<Geometry> Plan(absl::Span<const Shape> shapes) const {
    // Absent inputs have rank 0, which no present input of these may have.
    auto shape = [&](int i) -> const Shape* {
      return i < static_cast<int>(shapes.size()) && shapes[i].rank() > 0 ? &shapes[i] : nullptr;
    };
    if (shape(kInput) == nullptr || shape(kWeights) == nullptr || shape(kInput)->rank() != 3) {
      return node_.InvalidArgument("input must be [B, S, H] and weights [H, Dq + Dk + Dv]");
    }
    const Shape& x = *shape(kInput);
    const Shape& w = *shape(kWeights);
    Geometry g;
    g.batch = x[0];
    g.seq = x[1];
    g.hidden = x[2];
    if (w.rank() != 2 || w[0] != g.hidden) {
      return node_.InvalidArgument(
          absl::StrCat("weights must be [", g.hidden, ", Dq + Dk + Dv], got ", w.ToString()));
    }
    if (sizes_.empty()) {
      if (w[1] % (3 * heads_) != 0) {
        return node_.InvalidArgument(absl::StrCat(
            "weights' ", w[1], " columns are not 3 * a multiple of num_heads ", heads_));
      }
      g.dq = g.dv = w[1] / 3;
    } else {
      g.dq = sizes_[0];
      g.dv = sizes_[2];
      if (w[1] != 2 * g.dq + g.dv) {
        return node_.InvalidArgument(absl::StrCat("weights must have ", 2 * g.dq + g.dv,
                                                  " columns (qkv_hidden_sizes), got ", w[1]));
      }
    }
    if (g.dq == 0) return node_.InvalidArgument("the Q/K hidden size is 0");
    g.qk_head = g.dq / heads_;
    const Shape* bias = shape(kBias);
    if (bias != nullptr && (bias->rank() != 1 || (*bias)[0] != w[1])) {
      return node_.InvalidArgument(
          absl::StrCat("bias must be [", w[1], "], got ", bias->ToString()));
    }
    const Shape* past = shape(kPast);
    if (past != nullptr) {
      if (g.dq != g.dv) {
        return node_.InvalidArgument("past needs equal K and V hidden sizes");
      }
      if (past->rank() != 5 || (*past)[0] != 2 || (*past)[1] != g.batch || (*past)[2] != heads_ ||
          (*past)[4] != g.qk_head) {
        return node_.InvalidArgument(absl::StrCat("past must be [2, ", g.batch, ", ", heads_,
                                                  ", P, ", g.qk_head, "], got ", past->ToString()));
      }
      g.past = (*past)[3];
    }
    Layout layout;
    const std::optional<int64_t> qkv = Product({g.batch, g.seq, w[1]});
    const std::optional<int64_t> scores = Product({g.batch, heads_, g.seq, g.past + g.seq});
    if (!qkv || !scores || !layout.Add(*qkv, &g.qkv_offset) ||
        !layout.Add(*scores, &g.scores_offset)) {
      return node_.InvalidArgument("the attention's sizes overflow");
    }
    g.workspace = layout.total();
    return g;
  }

  const NodeLabel node_;
  const int64_t heads_;
  const std::vector<int64_t> sizes_;
  const float scale_;  // 0: 1 / sqrt(head size)
  const float filter_;
  const bool unidirectional_;
};

// --- MultiHeadAttention ----------------------------------------------------------------------

class MultiHeadAttentionKernel final : public engine::OpKernel {
 public:
  enum Input {
    kQuery,
    kKey,
    kValue,
    kBias,
    kMask,
    kAttnBias,
    kPastKey,
    kPastValue,
    kPastSeqLen,
    kCacheIndirection
  };

  static absl::StatusOr<std::unique_ptr<MultiHeadAttentionKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t heads, info.RequireInt("num_heads"));
    if (heads < 1) return info.Error(absl::StrCat("num_heads must be >= 1, got ", heads));
    const NodeLabel node(info);
    if (!info.input_present(kKey) || !info.input_present(kValue)) {
      return node.Unimplemented(
          "packed QKV / packed KV forms (no key or value input) are not supported; give query, "
          "key and value as [B, S, D] tensors");
    }
    if (info.input_present(kPastSeqLen) || info.input_present(kCacheIndirection)) {
      return node.Unimplemented("past_sequence_length / cache_indirection are not supported");
    }
    if (info.input_present(kPastKey) != info.input_present(kPastValue)) {
      return info.Error("past_key and past_value come together");
    }
    if (info.num_outputs() > 3 && !info.output(3).name.empty()) {
      return node.Unimplemented("the qk output is not supported");
    }
    const float scale = ScaleOf(info);
    if (!std::isfinite(scale) || scale < 0) return info.Error("scale must be finite and >= 0");
    return std::unique_ptr<MultiHeadAttentionKernel>(
        new MultiHeadAttentionKernel(info, heads, scale));
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    absl::StatusOr<Geometry> g = Plan(shapes);
    return g.ok() ? One(g->workspace) : std::vector<engine::WorkspaceRequirement>{};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    std::vector<Shape> shapes(ctx.num_inputs());
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i) != nullptr) shapes[i] = ctx.input(i)->shape();
    }
    INFERD_ASSIGN_OR_RETURN(const Tensor* q, RequiredInput(ctx, kQuery, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* k, RequiredInput(ctx, kKey, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* v, RequiredInput(ctx, kValue, node_));
    const Tensor* bias = ctx.input(kBias);
    const Tensor* past_k = ctx.input(kPastKey);
    const Tensor* past_v = ctx.input(kPastValue);
    for (const auto& [t, i] :
         {std::pair{q, kQuery}, std::pair{k, kKey}, std::pair{v, kValue}, std::pair{bias, kBias},
          std::pair{past_k, kPastKey}, std::pair{past_v, kPastValue}}) {
      if (t != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kFloat32, i, node_));
    }
    INFERD_ASSIGN_OR_RETURN(Geometry g, Plan(shapes));
    const int64_t n = heads_, hk = g.dq / n, hv = g.dv / n, t = g.past + g.kv_seq;
    INFERD_ASSIGN_OR_RETURN(
        Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{g.batch, g.seq, g.dv}));
    Tensor* present[2] = {nullptr, nullptr};
    for (int o = 1; o <= 2; ++o) {
      if (ctx.num_outputs() > o && ctx.output_wanted(o)) {
        INFERD_ASSIGN_OR_RETURN(
            present[o - 1],
            ctx.MakeOutputTensor(o, DataType::kFloat32, Shape{g.batch, n, t, o == 1 ? hk : hv}));
      }
    }
    if (y->NumElements() == 0) return absl::OkStatus();
    float* ws = nullptr;
    if (g.workspace > 0) {
      INFERD_ASSIGN_OR_RETURN(void* p, ctx.GetWorkspace(0));
      ws = static_cast<float*>(p);
    }
    const float* b = bias != nullptr ? bias->data<float>() : nullptr;
    Core c;
    c.batch = g.batch;
    c.seq = g.seq;
    c.past = g.past;
    c.total = t;
    c.heads = n;
    c.qk_head = hk;
    c.v_head = hv;
    c.scale = scale_ > 0 ? scale_ : 1.0f / std::sqrt(static_cast<float>(hk));
    c.filter = filter_;
    c.unidirectional = unidirectional_;
    INFERD_RETURN_IF_ERROR(ClassifyMask(ctx.input(kMask), c, node_));
    INFERD_RETURN_IF_ERROR(ClassifyAttentionBias(ctx.input(kAttnBias), c, node_));
    // pass 1: Q (+ its bias) in place or in the workspace.
    c.q = {q->data<float>(), g.seq * g.dq, hk, g.dq};
    if (b != nullptr) {
      float* qb = ws + g.q_offset / sizeof(float);
      const float* src = q->data<float>();
      const int64_t dq = g.dq;
      ctx.threads().ParallelFor(g.batch * g.seq, std::max<int64_t>(1, 16384 / dq),
                                [&](int64_t r0, int64_t r1) {
                                  for (int64_t r = r0; r < r1; ++r) {
#pragma omp simd
                                    for (int64_t j = 0; j < dq; ++j) {
                                      qb[r * dq + j] = src[r * dq + j] + b[j];
                                    }
                                  }
                                });
      c.q.base = qb;
    }
    // pass 2: K and V (+ bias) as [B, N, P + L, h] after the past, in the present outputs or
    // the workspace, when there is a bias, a past or a wanted present; else read in place.
    const bool gather = g.kv_buffers;
    const Tensor* kv_in[2] = {k, v};
    const Tensor* kv_past[2] = {past_k, past_v};
    for (int kv = 0; kv < 2; ++kv) {
      const int64_t d = kv == 0 ? g.dq : g.dv, hd = kv == 0 ? hk : hv;
      Operand& op = kv == 0 ? c.k : c.v;
      if (!gather && present[kv] == nullptr) {
        op = {kv_in[kv]->data<float>(), g.kv_seq * d, hd, d};
        continue;
      }
      float* dst = present[kv] != nullptr ? present[kv]->mutable_data<float>()
                                          : ws + g.kv_offset[kv] / sizeof(float);
      const float* src = kv_in[kv]->data<float>();
      const float* pp = kv_past[kv] != nullptr ? kv_past[kv]->data<float>() : nullptr;
      const float* kb = b != nullptr ? b + g.dq + (kv == 0 ? 0 : g.dq) : nullptr;
      const int64_t past = g.past, len = g.kv_seq;
      ctx.threads().ParallelFor(g.batch * n, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t bi = i / n, h = i % n;
          float* out = dst + i * t * hd;
          if (pp != nullptr && past > 0) {
            std::memcpy(out, pp + i * past * hd, sizeof(float) * past * hd);
          }
          for (int64_t s = 0; s < len; ++s) {
            const float* row = src + (bi * len + s) * d + h * hd;
            float* o = out + (past + s) * hd;
            if (kb != nullptr) {
#pragma omp simd
              for (int64_t j = 0; j < hd; ++j) o[j] = row[j] + kb[h * hd + j];
            } else {
              std::memcpy(o, row, sizeof(float) * hd);
            }
          }
        }
      });
      op = {dst, n * t * hd, t * hd, hd};
    }
    c.out = y->mutable_data<float>();
    c.scores = ws + g.scores_offset / sizeof(float);
    return RunCore(c, ctx.threads(), node_);
  }

 private:
  struct Geometry {
    int64_t batch = 0, seq = 0, kv_seq = 0, past = 0, dq = 0, dv = 0;
    bool kv_buffers = false;  // K and V are gathered (bias or past)
    int64_t q_offset = 0, kv_offset[2] = {0, 0}, scores_offset = 0, workspace = 0;
  };

  MultiHeadAttentionKernel(const KernelInfo& info, int64_t heads, float scale)
      : node_(info),
        heads_(heads),
        scale_(scale),
        filter_(info.GetFloat("mask_filter_value", -10000.0f)),
        unidirectional_(info.GetInt("unidirectional", 0) != 0) {}

  absl::StatusOr<Geometry> Plan(absl::Span<const Shape> shapes) const {
    auto shape = [&](int i) -> const Shape* {
      return i < static_cast<int>(shapes.size()) && shapes[i].rank() > 0 ? &shapes[i] : nullptr;
    };
    const Shape* q = shape(kQuery);
    const Shape* k = shape(kKey);
    const Shape* v = shape(kValue);
    if (q == nullptr || k == nullptr || v == nullptr || q->rank() != 3 || k->rank() != 3 ||
        v->rank() != 3) {
      return node_.Unimplemented(absl::StrCat(
          "query, key and value must be [B, S, D], [B, L, D], [B, L, Dv] (other forms are not "
          "supported), got ",
          q ? q->ToString() : "none", ", ", k ? k->ToString() : "none", ", ",
          v ? v->ToString() : "none"));
    }
    Geometry g;
    g.batch = (*q)[0];
    g.seq = (*q)[1];
    g.dq = (*q)[2];
    g.kv_seq = (*k)[1];
    g.dv = (*v)[2];
    if ((*k)[0] != g.batch || (*k)[2] != g.dq || (*v)[0] != g.batch || (*v)[1] != g.kv_seq) {
      return node_.InvalidArgument(absl::StrCat("key must be [", g.batch, ", L, ", g.dq,
                                                "] and value [", g.batch, ", L, Dv], got ",
                                                k->ToString(), " and ", v->ToString()));
    }
    if (g.dq % heads_ != 0 || g.dv % heads_ != 0 || g.dq == 0) {
      return node_.InvalidArgument(absl::StrCat("hidden sizes ", g.dq, " and ", g.dv,
                                                " must be positive multiples of num_heads ",
                                                heads_));
    }
    const Shape* bias = shape(kBias);
    if (bias != nullptr && (bias->rank() != 1 || (*bias)[0] != 2 * g.dq + g.dv)) {
      return node_.InvalidArgument(
          absl::StrCat("bias must be [", 2 * g.dq + g.dv, "], got ", bias->ToString()));
    }
    const Shape* pk = shape(kPastKey);
    const Shape* pv = shape(kPastValue);
    if (pk != nullptr && pv != nullptr) {
      if (pk->rank() != 4 || pv->rank() != 4 || (*pk)[0] != g.batch || (*pk)[1] != heads_ ||
          (*pk)[3] != g.dq / heads_ || (*pv)[0] != g.batch || (*pv)[1] != heads_ ||
          (*pv)[2] != (*pk)[2] || (*pv)[3] != g.dv / heads_) {
        return node_.InvalidArgument(absl::StrCat("past_key / past_value must be [", g.batch, ", ",
                                                  heads_, ", P, head size], got ", pk->ToString(),
                                                  " and ", pv->ToString()));
      }
      g.past = (*pk)[2];
    }
    g.kv_buffers = bias != nullptr || pk != nullptr;
    Layout layout;
    const std::optional<int64_t> qn = Product({g.batch, g.seq, g.dq});
    const std::optional<int64_t> kn = Product({g.batch, g.past + g.kv_seq, g.dq});
    const std::optional<int64_t> vn = Product({g.batch, g.past + g.kv_seq, g.dv});
    const std::optional<int64_t> sn = Product({g.batch, heads_, g.seq, g.past + g.kv_seq});
    bool ok = qn && kn && vn && sn;
    ok = ok && layout.Add(bias != nullptr ? *qn : 0, &g.q_offset);
    ok = ok && layout.Add(g.kv_buffers ? *kn : 0, &g.kv_offset[0]);
    ok = ok && layout.Add(g.kv_buffers ? *vn : 0, &g.kv_offset[1]);
    ok = ok && layout.Add(*sn, &g.scores_offset);
    if (!ok) return node_.InvalidArgument("the attention's sizes overflow");
    g.workspace = layout.total();
    return g;
  }

  const NodeLabel node_;
  const int64_t heads_;
  const float scale_;
  const float filter_;
  const bool unidirectional_;
};

}  // namespace

std::vector<engine::KernelDef> ContribAttentionKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "Attention", 1, 1, {DataType::kFloat32},
                 FactoryOf<AttentionKernel>()),
          CpuDef(engine::kMicrosoftDomain, "MultiHeadAttention", 1, 1, {DataType::kFloat32},
                 FactoryOf<MultiHeadAttentionKernel>())};
}

}  // namespace inferd::kernels::cpu

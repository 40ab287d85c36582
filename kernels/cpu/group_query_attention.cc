// com.microsoft GroupQueryAttention (version 1, ONNX Runtime's contrib op as the onnxruntime-genai
// model builder writes it), float32, causal, prefill and decode (docs/genai-ops.md):
//
//   query [B, S, N * H] (or packed Q|K|V [B, S, (N + 2 * KV) * H] with key and value absent),
//   key / value [B, S, KV * H], past_key / past_value [B, KV, P, H] (optional), seqlens_k int32
//   [B] (each sequence's total length - 1), total_sequence_length int32 scalar, cos_cache /
//   sin_cache [max_positions, rotary_dim / 2] (with do_rotary=1).
//   Outputs: output [B, S, N * H], present_key / present_value [B, KV, max(T, P), H].
//
// Per sequence b: total_b = seqlens_k[b] + 1; on the first prompt (S == T > 1) past_b = 0,
// otherwise past_b = total_b - S. The new keys (rotated) and values are written at
// [past_b, past_b + S) of present; the past's first past_b positions are carried over. When
// present has past's shape (ORT's past_present_share_buffer: one buffer of the maximum length),
// present is made as an alias of past, so the cache is updated in place without a copy where the
// plan lets the buffers be one: only on a node the generation loop's binding marked
// (engine::kSharedKvBufferAttribute, engine/kv_cache_rewrite.h); elsewhere the runtime copies past
// into a present of its own, so a caller's past input is never written to. Query s (position past_b
// + s) attends keys [start, past_b + s], start = past_b + s - local_window_size when
// local_window_size > 0 (else 0). Scores are q.k * scale (default 1/sqrt(H)), then softcap * tanh(x
// / softcap) when softcap > 0; softmax (smooth_softmax adds an exp(0) term to the denominator, a
// zero logit "sink"); then the mix of values. Head h reads KV head h / (N / KV). First-prompt rows
// past a sequence's total length (right padding) are written as zeros.
//
// Refused: position_ids, attention_bias, head_sink inputs; qk_output; types other than float32.
// Work is split over (batch, head, query) by the intra-op pool; each thread's rotated query
// and score row live in a declared workspace.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/rotary.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int kScratch = 0;

enum Input {
  kQuery = 0,
  kKey,
  kValue,
  kPastKey,
  kPastValue,
  kSeqlensK,
  kTotalSeqLen,
  kCos,
  kSin,
  kPositionIds,
  kAttentionBias,
  kHeadSink
};

class GroupQueryAttentionKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GroupQueryAttentionKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(const int64_t heads, info.RequireInt("num_heads"));
    INFERD_ASSIGN_OR_RETURN(const int64_t kv_heads, info.RequireInt("kv_num_heads"));
    if (heads < 1 || kv_heads < 1 || heads % kv_heads != 0) {
      return info.Error(absl::StrCat("num_heads (", heads, ") must be a positive multiple of ",
                                     "kv_num_heads (", kv_heads, ")"));
    }
    for (int i : {kPositionIds, kAttentionBias, kHeadSink}) {
      if (info.input_present(i)) {
        return info.Error(
            "the position_ids, attention_bias and head_sink inputs are not "
            "supported");
      }
    }
    if (info.GetInt("qk_output", 0) != 0 ||
        (info.num_outputs() > 3 && !info.output(3).name.empty())) {
      return info.Error("the output_qk output (qk_output) is not supported");
    }
    const bool rotary = info.GetInt("do_rotary", 0) != 0;
    if (rotary && (!info.input_present(kCos) || !info.input_present(kSin))) {
      return info.Error("do_rotary=1 needs cos_cache and sin_cache");
    }
    const float softcap = info.GetFloat("softcap", 0.0f);
    if (softcap < 0 || !std::isfinite(softcap)) return info.Error("softcap must be >= 0");
    auto k = std::unique_ptr<GroupQueryAttentionKernel>(new GroupQueryAttentionKernel(info));
    k->heads_ = heads;
    k->kv_heads_ = kv_heads;
    k->scale_ = info.GetFloat("scale", 0.0f);
    k->softcap_ = softcap;
    k->window_ = info.GetInt("local_window_size", -1);
    k->rotary_ = rotary;
    k->interleaved_ = info.GetInt("rotary_interleaved", 0) != 0;
    k->smooth_ = info.GetInt("smooth_softmax", -1) == 1;
    k->threads_ = std::max(1, info.intra_op_threads());
    k->shared_buffer_ = info.GetInt(engine::kSharedKvBufferAttribute, 0) != 0;
    return k;
  }

  // The generation loop's binding (engine/kv_cache_rewrite.h) marks the node: past is the
  // sequence's KV block, so present may be written into it. Unmarked, present never shares
  // past's buffer (a caller's input is not written to); the runtime copies past over instead.
  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (!shared_buffer_) return {};
    return {{1, kPastKey}, {2, kPastValue}};
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> shapes) const override {
    if (shapes.empty() || shapes[0].rank() != 3) return {};
    const int64_t s = shapes[0][1];
    const int64_t h = HeadSize(shapes[0], shapes.size() > kKey && shapes[kKey].rank() == 3);
    const int64_t p =
        shapes.size() > kPastKey && shapes[kPastKey].rank() == 4 ? shapes[kPastKey][2] : 0;
    if (h <= 0 || s < 0 || p < 0) return {};
    return {{kScratch, static_cast<size_t>(threads_ * (h + p + s)) * sizeof(float)}};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    auto in = [&](int i) { return ctx.num_inputs() > i ? ctx.input(i) : nullptr; };
    INFERD_ASSIGN_OR_RETURN(const Tensor* query, RequiredInput(ctx, kQuery, node_));
    const Tensor *key = in(kKey), *value = in(kValue), *past_k = in(kPastKey),
                 *past_v = in(kPastValue), *cos = in(kCos), *sin = in(kSin);
    INFERD_ASSIGN_OR_RETURN(const Tensor* seqlens, RequiredInput(ctx, kSeqlensK, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* total_t, RequiredInput(ctx, kTotalSeqLen, node_));
    for (const Tensor* t : {query, key, value, past_k, past_v, cos, sin}) {
      if (t != nullptr && t->dtype() != DataType::kFloat32) {
        return node_.InvalidArgument("query, key, value, past and caches must be float32");
      }
    }
    INFERD_RETURN_IF_ERROR(CheckType(*seqlens, DataType::kInt32, kSeqlensK, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*total_t, DataType::kInt32, kTotalSeqLen, node_));
    // Shapes.
    const Shape& qs = query->shape();
    if (qs.rank() != 3) {
      return node_.InvalidArgument(absl::StrCat("query must be 3-D, got ", qs.ToString()));
    }
    const bool packed = key == nullptr;
    if (packed != (value == nullptr)) {
      return node_.InvalidArgument("key and value must be both present or both absent");
    }
    const int64_t b = qs[0], s = qs[1], h = HeadSize(qs, !packed);
    if (h <= 0) {
      return node_.InvalidArgument(
          absl::StrCat("query's last dim ", qs[2], " does not split into ",
                       packed ? "(num_heads + 2 * kv_num_heads)" : "num_heads", " heads"));
    }
    const int64_t kv_hidden = kv_heads_ * h;
    if (!packed && (key->shape() != Shape{b, s, kv_hidden} || value->shape() != key->shape())) {
      return node_.InvalidArgument(absl::StrCat("key and value must be [", b, ", ", s, ", ",
                                                kv_hidden, "], got ", key->shape().ToString(),
                                                " and ", value->shape().ToString()));
    }
    if ((past_k == nullptr) != (past_v == nullptr)) {
      return node_.InvalidArgument("past_key and past_value must be both present or absent");
    }
    int64_t p = 0;
    if (past_k != nullptr) {
      p = past_k->shape().rank() == 4 ? past_k->shape()[2] : -1;
      if (p < 0 || past_k->shape() != Shape{b, kv_heads_, p, h} ||
          past_v->shape() != past_k->shape()) {
        return node_.InvalidArgument(absl::StrCat(
            "past_key and past_value must be [", b, ", ", kv_heads_, ", past, ", h, "], got ",
            past_k->shape().ToString(), " and ", past_v->shape().ToString()));
      }
    }
    if (seqlens->NumElements() != b || total_t->NumElements() != 1) {
      return node_.InvalidArgument(
          absl::StrCat("seqlens_k must have batch = ", b, " values and total_sequence_length one"));
    }
    const int64_t total = total_t->data<int32_t>()[0];
    if (total < s || total < 1) {
      return node_.InvalidArgument(
          absl::StrCat("total_sequence_length ", total, " is less than the sequence length ", s));
    }
    const bool first_prompt = s > 1 && s == total;
    const int64_t present_len = std::max(total, p);
    const int32_t* sk = seqlens->data<int32_t>();
    for (int64_t i = 0; i < b; ++i) {
      const int64_t tb = int64_t{sk[i]} + 1;
      const int64_t past_b = first_prompt ? 0 : tb - s;
      if (tb < 1 || tb > total || past_b < 0 || past_b > p || past_b + s > present_len) {
        return node_.InvalidArgument(absl::StrCat("seqlens_k[", i, "] = ", sk[i],
                                                  " does not fit sequence length ", s, ", past ", p,
                                                  " and total_sequence_length ", total));
      }
    }
    int64_t rotary_dim = 0, max_pos = 0;
    if (rotary_) {
      if (cos->shape().rank() != 2 || cos->shape() != sin->shape() || 2 * cos->shape()[1] > h) {
        return node_.InvalidArgument(absl::StrCat("cos_cache and sin_cache must be [positions, ",
                                                  "rotary_dim / 2] with rotary_dim <= ", h));
      }
      rotary_dim = 2 * cos->shape()[1];
      max_pos = cos->shape()[0];
      if (total > max_pos) {
        return node_.InvalidArgument(absl::StrCat("total_sequence_length ", total,
                                                  " exceeds the caches' ", max_pos, " positions"));
      }
    }
    // Outputs: present is past's buffer when the shapes agree (shared buffer).
    INFERD_ASSIGN_OR_RETURN(Tensor * out,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{b, s, heads_ * h}));
    const Shape present_shape{b, kv_heads_, present_len, h};
    Tensor* pk = nullptr;
    Tensor* pv = nullptr;
    const bool shared = past_k != nullptr && p == present_len;
    if (shared) {
      INFERD_ASSIGN_OR_RETURN(pk, ctx.MakeOutputAlias(1, kPastKey, present_shape));
      INFERD_ASSIGN_OR_RETURN(pv, ctx.MakeOutputAlias(2, kPastValue, present_shape));
    } else {
      INFERD_ASSIGN_OR_RETURN(pk, ctx.MakeOutputTensor(1, DataType::kFloat32, present_shape));
      INFERD_ASSIGN_OR_RETURN(pv, ctx.MakeOutputTensor(2, DataType::kFloat32, present_shape));
    }
    INFERD_ASSIGN_OR_RETURN(void* ws, ctx.GetWorkspace(kScratch));
    float* scratch = static_cast<float*>(ws);
    const int64_t scratch_per_thread = h + p + s;
    if (ctx.threads().num_threads() > threads_) return node_.Internal("thread count changed");

    const int64_t q_stride = packed ? (heads_ + 2 * kv_heads_) * h : heads_ * h;
    const int64_t kv_stride = packed ? q_stride : kv_hidden;
    const float* qv = query->data<float>();
    const float* kin = packed ? qv + heads_ * h : key->data<float>();
    const float* vin = packed ? qv + (heads_ + kv_heads_) * h : value->data<float>();
    float* kc = pk->mutable_data<float>();
    float* vc = pv->mutable_data<float>();
    const float* cv = rotary_ ? cos->data<float>() : nullptr;
    const float* sv = rotary_ ? sin->data<float>() : nullptr;
    auto past_of = [&](int64_t i) -> int64_t { return first_prompt ? 0 : int64_t{sk[i]} + 1 - s; };

    // pass 1: carry the past over (when present is a new buffer) and write the new keys
    // (rotated) and values, per (batch, kv head).
    ctx.threads().ParallelFor(b * kv_heads_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bk = begin; bk < end; ++bk) {
        const int64_t i = bk / kv_heads_, kh = bk % kv_heads_;
        const int64_t past_b = past_of(i);
        float* kdst = kc + bk * present_len * h;
        float* vdst = vc + bk * present_len * h;
        if (!shared && past_k != nullptr && past_b > 0) {
          std::memcpy(kdst, past_k->data<float>() + bk * p * h, past_b * h * sizeof(float));
          std::memcpy(vdst, past_v->data<float>() + bk * p * h, past_b * h * sizeof(float));
        }
        for (int64_t t = 0; t < s; ++t) {
          const int64_t row = (i * s + t) * kv_stride + kh * h;
          const int64_t pos = past_b + t;
          float* kd = kdst + pos * h;
          if (rotary_) {
            RotateHead(kin + row, cv + pos * (rotary_dim / 2), sv + pos * (rotary_dim / 2), h,
                       rotary_dim, interleaved_, kd);
          } else {
            std::memcpy(kd, kin + row, h * sizeof(float));
          }
          std::memcpy(vdst + pos * h, vin + row, h * sizeof(float));
        }
      }
    });

    // pass 2: attention per (batch, head, query).
    const float scale = scale_ > 0 ? scale_ : 1.0f / std::sqrt(static_cast<float>(h));
    const int64_t group = heads_ / kv_heads_;
    float* ov = out->mutable_data<float>();
    // The work is cut into one static range per thread, so that each has its own scratch.
    const int64_t work = b * heads_ * s;
    const int64_t parts = std::min<int64_t>(ctx.threads().num_threads(), work);
    ctx.threads().ParallelFor(parts, 1, [&](int64_t part_begin, int64_t part_end) {
      for (int64_t part = part_begin; part < part_end; ++part) {
        float* qbuf = scratch + part * scratch_per_thread;
        float* scores = qbuf + h;
        for (int64_t w = part * work / parts; w < (part + 1) * work / parts; ++w) {
          const int64_t t = w % s, hd = (w / s) % heads_, i = w / (s * heads_);
          float* o = ov + (i * s + t) * heads_ * h + hd * h;
          const int64_t past_b = past_of(i), tb = int64_t{sk[i]} + 1;
          const int64_t pos = past_b + t;
          if (pos >= tb) {  // right padding of a first prompt
            std::fill(o, o + h, 0.0f);
            continue;
          }
          const float* q = qv + (i * s + t) * q_stride + hd * h;
          if (rotary_) {
            RotateHead(q, cv + pos * (rotary_dim / 2), sv + pos * (rotary_dim / 2), h, rotary_dim,
                       interleaved_, qbuf);
            q = qbuf;
          }
          const int64_t kvh = hd / group;
          const float* kbase = kc + (i * kv_heads_ + kvh) * present_len * h;
          const float* vbase = vc + (i * kv_heads_ + kvh) * present_len * h;
          const int64_t start = window_ > 0 ? std::max<int64_t>(0, pos - window_) : 0;
          const int64_t n = pos + 1 - start;
          float mx = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            const float* kr = kbase + (start + j) * h;
            float d = 0;
#pragma omp simd reduction(+ : d)
            for (int64_t e = 0; e < h; ++e) d += q[e] * kr[e];
            d *= scale;
            if (softcap_ > 0) d = softcap_ * std::tanh(d / softcap_);
            scores[j] = d;
            mx = std::max(mx, d);
          }
          if (smooth_) mx = std::max(mx, 0.0f);
          float sum = smooth_ ? std::exp(-mx) : 0.0f;
          for (int64_t j = 0; j < n; ++j) {
            scores[j] = std::exp(scores[j] - mx);
            sum += scores[j];
          }
          const float inv = 1.0f / sum;
          std::fill(o, o + h, 0.0f);
          for (int64_t j = 0; j < n; ++j) {
            const float wgt = scores[j] * inv;
            const float* vr = vbase + (start + j) * h;
#pragma omp simd
            for (int64_t e = 0; e < h; ++e) o[e] += wgt * vr[e];
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  explicit GroupQueryAttentionKernel(const KernelInfo& info) : node_(info) {}

  // Head size from query's shape ([B, S, N * H], or packed [B, S, (N + 2 KV) * H]); 0 when the
  // last dim does not divide.
  int64_t HeadSize(const Shape& q, bool separate_kv) const {
    const int64_t parts = separate_kv ? heads_ : heads_ + 2 * kv_heads_;
    const int64_t d = q[2];
    return d > 0 && d % parts == 0 ? d / parts : 0;
  }

  const NodeLabel node_;
  int64_t heads_ = 0, kv_heads_ = 0, window_ = -1;
  float scale_ = 0, softcap_ = 0;
  bool rotary_ = false, interleaved_ = false, smooth_ = false;
  bool shared_buffer_ = false;  // kSharedKvBufferAttribute: present may be past's buffer
  int threads_ = 1;
};

}  // namespace

std::vector<engine::KernelDef> GroupQueryAttentionKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "GroupQueryAttention", 1, kMaxOpset,
                 {DataType::kFloat32}, FactoryOf<GroupQueryAttentionKernel>())};
}

}  // namespace inferd::kernels::cpu

// com.microsoft RotaryEmbedding (version 1, ONNX Runtime's contrib op), float32:
//   input [B, S, hidden] or [B, num_heads, S, head_size]; position_ids int64 [B, S], or [1]
//   (a start offset: position = offset + s); cos_cache, sin_cache [max_positions, rotary_dim/2].
//   Attributes: interleaved (0), rotary_embedding_dim (0: the head size, taken from the caches
//   when num_heads is not given), num_heads (needed for 3-D input with a partial rotary dim),
//   scale (accepted; ORT's CPU kernel does not apply it either), is_packed_batching (refused).
// Each head vector is rotated at its position (rotary.h); dims past rotary_dim pass through.
// Positions outside the caches are INVALID_ARGUMENT.
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

class RotaryEmbeddingKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<RotaryEmbeddingKernel>> Create(const KernelInfo& info) {
    if (info.GetInt("is_packed_batching", 0) != 0) {
      return info.Error("is_packed_batching=1 is not supported");
    }
    const int64_t heads = info.GetInt("num_heads", 0);
    const int64_t rotary = info.GetInt("rotary_embedding_dim", 0);
    if (heads < 0 || rotary < 0 || (rotary % 2) != 0) {
      return info.Error("num_heads must be >= 0 and rotary_embedding_dim even and >= 0");
    }
    const engine::ShapeInfo& xs = info.input(0).shape;
    if (rotary > 0 && heads == 0 && xs.rank_known && xs.dims.size() == 3) {
      return info.Error("num_heads is required with rotary_embedding_dim and 3-D input");
    }
    return std::unique_ptr<RotaryEmbeddingKernel>(
        new RotaryEmbeddingKernel(info, heads, rotary, info.GetInt("interleaved", 0) != 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* pos, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* cos, RequiredInput(ctx, 2, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* sin, RequiredInput(ctx, 3, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*pos, DataType::kInt64, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*cos, DataType::kFloat32, 2, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*sin, DataType::kFloat32, 3, node_));
    const Shape& s = x->shape();
    if (cos->shape().rank() != 2 || cos->shape() != sin->shape()) {
      return node_.InvalidArgument(absl::StrCat(
          "cos_cache and sin_cache must both be ", "[max_positions, rotary_dim / 2], got ",
          cos->shape().ToString(), " and ", sin->shape().ToString()));
    }
    const int64_t max_pos = cos->shape()[0], half = cos->shape()[1];
    int64_t batch = 0, seq = 0, heads = 0, head_size = 0;
    bool bnsh = false;
    if (s.rank() == 4) {  // [B, N, S, H]
      batch = s[0], heads = s[1], seq = s[2], head_size = s[3];
      bnsh = true;
    } else if (s.rank() == 3) {  // [B, S, hidden]
      batch = s[0], seq = s[1];
      head_size = heads_ > 0 ? s[2] / heads_ : 2 * half;
      heads = head_size > 0 ? s[2] / head_size : 0;
      if (head_size <= 0 || heads * head_size != s[2]) {
        return node_.InvalidArgument(absl::StrCat("hidden size ", s[2], " is not num_heads x ",
                                                  "head_size (head_size ", head_size, ")"));
      }
    } else {
      return node_.InvalidArgument(
          absl::StrCat("input must be [batch, seq, hidden] or [batch, heads, seq, head_size], got ",
                       s.ToString()));
    }
    const int64_t rotary = rotary_ > 0 ? rotary_ : head_size;
    if (rotary > head_size || rotary != 2 * half) {
      return node_.InvalidArgument(absl::StrCat("rotary dim ", rotary, " must be <= head_size ",
                                                head_size, " and twice the caches' last dim ",
                                                half));
    }
    const bool offset_form =
        pos->NumElements() == 1 && !(batch == 1 && seq == 1 && pos->shape().rank() == 2);
    if (!offset_form && pos->shape() != Shape{batch, seq}) {
      return node_.InvalidArgument(absl::StrCat("position_ids must be [batch, seq] = [", batch,
                                                ", ", seq, "] or [1], got ",
                                                pos->shape().ToString()));
    }
    const int64_t* pv = pos->data<int64_t>();
    const int64_t positions = offset_form ? 1 : batch * seq;
    for (int64_t i = 0; i < positions; ++i) {
      const int64_t last = offset_form ? pv[0] + seq - 1 : pv[i];
      if (pv[i] < 0 || last >= max_pos) {
        return node_.InvalidArgument(absl::StrCat(
            "position ", std::max(pv[i], last), " is outside the caches' ", max_pos, " positions"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, s));
    const float* xv = x->data<float>();
    const float* cv = cos->data<float>();
    const float* sv = sin->data<float>();
    float* yv = y->mutable_data<float>();
    const int64_t vectors = batch * seq * heads;
    ctx.threads().ParallelFor(vectors, 64, [&](int64_t b, int64_t e) {
      for (int64_t v = b; v < e; ++v) {
        // v enumerates (batch, seq, head); the memory offset depends on the layout.
        const int64_t h = v % heads, t = (v / heads) % seq, n = v / (heads * seq);
        const int64_t p = offset_form ? pv[0] + t : pv[n * seq + t];
        const int64_t off = bnsh ? ((n * heads + h) * seq + t) * head_size
                                 : ((n * seq + t) * heads + h) * head_size;
        RotateHead(xv + off, cv + p * half, sv + p * half, head_size, rotary, interleaved_,
                   yv + off);
      }
    });
    return absl::OkStatus();
  }

 private:
  RotaryEmbeddingKernel(const KernelInfo& info, int64_t heads, int64_t rotary, bool interleaved)
      : node_(info), heads_(heads), rotary_(rotary), interleaved_(interleaved) {}

  const NodeLabel node_;
  const int64_t heads_, rotary_;
  const bool interleaved_;
};

}  // namespace

std::vector<engine::KernelDef> RotaryEmbeddingKernelDefs() {
  return {CpuDef(engine::kMicrosoftDomain, "RotaryEmbedding", 1, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<RotaryEmbeddingKernel>())};
}

}  // namespace inferd::kernels::cpu

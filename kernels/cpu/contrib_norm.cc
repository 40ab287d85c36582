// ONNX Runtime's fused normalizations, float32, own code (one pass to sum, one to normalize per
// row of the hidden size H, statistics in double), parallel over rows:
//   com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?): s = input + skip +
//     bias; output = (s - mean) / sqrt(var + epsilon) * gamma + beta; optional outputs mean,
//     inv_std_var ([..., 1], float32) and input_skip_bias_sum (s).
//   com.microsoft SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the same with
//     RMS normalization, s / sqrt(mean(s^2) + epsilon) * gamma (mean output: not produced).
//   SimplifiedLayerNormalization (the default domain, as ORT registers it): RMS normalization of
//     X over the dims from `axis` on, times scale; optional inv_std_var.
//   com.microsoft EmbedLayerNormalization: word + position (+ segment) embeddings of int32 ids,
//     layer-normalized; mask_index [B] = the number of non-zero mask values per batch row (0s
//     without a mask); optional embedding_sum. Ids out of a table's range are an error.
#include <algorithm>
#include <cmath>
#include <memory>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
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

constexpr int64_t kGrain = 16 * 1024;  // elements per thread, at least

// Normalizes row `s` (length d) into `y` (which may alias `s`): LayerNorm when `simplified` is
// false, RMSNorm otherwise. Returns mean (0 for RMS) and the inverse standard deviation.
inline void NormalizeRow(const float* s, const float* gamma, const float* beta, float* y, int64_t d,
                         float epsilon, bool simplified, float* mean_out, float* inv_out) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < d; ++i) {
    sum += s[i];
    sq += static_cast<double>(s[i]) * s[i];
  }
  const double n = static_cast<double>(d);
  double mean = simplified ? 0.0 : sum / n;
  double var = simplified ? sq / n : std::max(0.0, sq / n - mean * mean);
  if (!simplified) {  // a second pass for the variance, exact for rows with a large mean
    double acc = 0;
    for (int64_t i = 0; i < d; ++i) {
      const double c = s[i] - mean;
      acc += c * c;
    }
    var = acc / n;
  }
  const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
  const float m = static_cast<float>(mean);
  if (beta != nullptr) {
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) y[i] = (s[i] - m) * inv * gamma[i] + beta[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) y[i] = (s[i] - m) * inv * gamma[i];
  }
  if (mean_out != nullptr) *mean_out = m;
  if (inv_out != nullptr) *inv_out = inv;
}

// A [d] vector input (gamma, beta, bias) or INVALID_ARGUMENT.
absl::Status CheckVector(const Tensor& t, int64_t d, int index, const char* what,
                         const NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(CheckType(t, DataType::kFloat32, index, node));
  if (t.NumElements() != d || t.shape().rank() < 1 || t.shape()[t.shape().rank() - 1] != d) {
    return node.InvalidArgument(
        absl::StrCat(what, " must be [", d, "] (the hidden size), got ", t.shape().ToString()));
  }
  return absl::OkStatus();
}

class SkipNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SkipNormKernel>> Create(const KernelInfo& info) {
    const float epsilon = info.GetFloat("epsilon", 1e-12f);
    if (!(epsilon >= 0)) return info.Error("epsilon must be >= 0");
    return std::unique_ptr<SkipNormKernel>(new SkipNormKernel(info, epsilon));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* skip, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* gamma, RequiredInput(ctx, 2, node_));
    const Tensor* beta = simplified_ ? nullptr : ctx.input(3);
    const Tensor* bias = ctx.input(simplified_ ? 3 : 4);
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*skip, DataType::kFloat32, 1, node_));
    const Shape& shape = x->shape();
    if (shape.rank() != 2 && shape.rank() != 3) {
      return node_.InvalidArgument(
          absl::StrCat("input must be [B, S, H] or [N, H], got ", shape.ToString()));
    }
    const int64_t d = shape[shape.rank() - 1], rows = shape.SizeBetween(0, shape.rank() - 1);
    // skip: the input's shape, or (leading 1s aside) a suffix of it, broadcast over the leading
    // dims ([S, H] or [1, S, H] for [B, S, H]).
    const Shape& ss = skip->shape();
    size_t lead = 0;
    while (lead + 1 < ss.rank() && ss[lead] == 1) ++lead;
    bool skip_ok = ss.rank() >= 1 && ss.rank() - lead <= shape.rank();
    for (size_t i = lead; skip_ok && i < ss.rank(); ++i) {
      skip_ok = ss[i] == shape[shape.rank() - ss.rank() + i];
    }
    if (!skip_ok) {
      return node_.InvalidArgument(
          absl::StrCat("skip must have the input's shape ", shape.ToString(),
                       " or broadcast over its leading dims, got ", ss.ToString()));
    }
    INFERD_RETURN_IF_ERROR(CheckVector(*gamma, d, 2, "gamma", node_));
    if (beta != nullptr) INFERD_RETURN_IF_ERROR(CheckVector(*beta, d, 3, "beta", node_));
    if (bias != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckVector(*bias, d, simplified_ ? 3 : 4, "bias", node_));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    Shape stats_shape = shape;
    stats_shape[shape.rank() - 1] = 1;
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    float* sum_out = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kFloat32, stats_shape));
      mean_out = t->mutable_data<float>();
    }
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(2, DataType::kFloat32, stats_shape));
      inv_out = t->mutable_data<float>();
    }
    if (ctx.num_outputs() > 3 && ctx.output_wanted(3)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(3, DataType::kFloat32, shape));
      sum_out = t->mutable_data<float>();
    }
    if (rows == 0 || d == 0) return absl::OkStatus();
    const float* in = x->data<float>();
    const float* sk = skip->data<float>();
    const int64_t skip_rows = skip->NumElements() / d;
    const float* g = gamma->data<float>();
    const float* be = beta != nullptr ? beta->data<float>() : nullptr;
    const float* bi = bias != nullptr ? bias->data<float>() : nullptr;
    float* out = y->mutable_data<float>();
    const bool simplified = simplified_;
    const float epsilon = epsilon_;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = in + r * d;
        const float* sr = sk + (r % skip_rows) * d;
        float* s = sum_out != nullptr ? sum_out + r * d : out + r * d;
        if (bi != nullptr) {
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) s[i] = xr[i] + sr[i] + bi[i];
        } else {
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) s[i] = xr[i] + sr[i];
        }
        NormalizeRow(s, g, be, out + r * d, d, epsilon, simplified,
                     mean_out != nullptr ? mean_out + r : nullptr,
                     inv_out != nullptr ? inv_out + r : nullptr);
      }
    });
    return absl::OkStatus();
  }

 private:
  SkipNormKernel(const KernelInfo& info, float epsilon)
      : node_(info),
        epsilon_(epsilon),
        simplified_(info.op_type() == "SkipSimplifiedLayerNormalization") {}

  const NodeLabel node_;
  const float epsilon_;
  const bool simplified_;
};

class SimplifiedNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SimplifiedNormKernel>> Create(const KernelInfo& info) {
    const float epsilon = info.GetFloat("epsilon", 1e-5f);
    if (!(epsilon >= 0)) return info.Error("epsilon must be >= 0");
    if (const int64_t stash = info.GetInt("stash_type", 1); stash != 1) {
      return NodeLabel(info).Unimplemented(
          absl::StrCat("stash_type ", stash, " (only 1, float32, is supported)"));
    }
    return std::unique_ptr<SimplifiedNormKernel>(new SimplifiedNormKernel(info, epsilon));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& shape = x->shape();
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, shape.rank(), node_));
    const int64_t rows = shape.SizeBetween(0, axis), d = shape.SizeFrom(axis);
    INFERD_RETURN_IF_ERROR(CheckType(*scale, DataType::kFloat32, 1, node_));
    if (scale->NumElements() != d) {
      return node_.InvalidArgument(absl::StrCat("scale must have ", d,
                                                " elements (the normalized size), got ",
                                                scale->shape().ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    float* inv_out = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      Shape stats = shape;
      for (size_t i = axis; i < shape.rank(); ++i) stats[i] = 1;
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kFloat32, stats));
      inv_out = t->mutable_data<float>();
    }
    if (rows == 0 || d == 0) return absl::OkStatus();
    const float* in = x->data<float>();
    const float* g = scale->data<float>();
    float* out = y->mutable_data<float>();
    const float epsilon = epsilon_;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        NormalizeRow(in + r * d, g, nullptr, out + r * d, d, epsilon, /*simplified=*/true, nullptr,
                     inv_out != nullptr ? inv_out + r : nullptr);
      }
    });
    return absl::OkStatus();
  }

 private:
  SimplifiedNormKernel(const KernelInfo& info, float epsilon)
      : node_(info), axis_(info.GetInt("axis", -1)), epsilon_(epsilon) {}

  const NodeLabel node_;
  const int64_t axis_;
  const float epsilon_;
};

class EmbedLayerNormKernel final : public engine::OpKernel {
 public:
  enum Input { kIds, kSegmentIds, kWord, kPosition, kSegment, kGamma, kBeta, kMask, kPositionIds };

  static absl::StatusOr<std::unique_ptr<EmbedLayerNormKernel>> Create(const KernelInfo& info) {
    const float epsilon = info.GetFloat("epsilon", 1e-12f);
    if (!(epsilon >= 0)) return info.Error("epsilon must be >= 0");
    return std::unique_ptr<EmbedLayerNormKernel>(new EmbedLayerNormKernel(info, epsilon));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* ids, RequiredInput(ctx, kIds, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* word, RequiredInput(ctx, kWord, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* pos, RequiredInput(ctx, kPosition, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* gamma, RequiredInput(ctx, kGamma, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* beta, RequiredInput(ctx, kBeta, node_));
    const Tensor* seg_ids = ctx.input(kSegmentIds);
    const Tensor* seg = ctx.input(kSegment);
    const Tensor* mask = ctx.input(kMask);
    const Tensor* pos_ids = ctx.input(kPositionIds);
    INFERD_RETURN_IF_ERROR(CheckType(*ids, DataType::kInt32, kIds, node_));
    if (ids->shape().rank() != 2) {
      return node_.InvalidArgument(
          absl::StrCat("input_ids must be [B, S], got ", ids->shape().ToString()));
    }
    const int64_t batch = ids->shape()[0], seq = ids->shape()[1];
    if ((seg_ids == nullptr) != (seg == nullptr)) {
      return node_.InvalidArgument("segment_ids and segment_embedding come together");
    }
    for (const auto& [t, index, what] :
         {std::tuple{seg_ids, kSegmentIds, "segment_ids"}, std::tuple{mask, kMask, "mask"}}) {
      if (t == nullptr) continue;
      INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kInt32, index, node_));
      if (t->shape() != ids->shape()) {
        return node_.InvalidArgument(absl::StrCat(what, " must have input_ids' shape ",
                                                  ids->shape().ToString(), ", got ",
                                                  t->shape().ToString()));
      }
    }
    if (pos_ids != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*pos_ids, DataType::kInt32, kPositionIds, node_));
      const Shape& ps = pos_ids->shape();
      if (ps.rank() != 2 || (ps[0] != batch && ps[0] != 1) || ps[1] != seq) {
        return node_.InvalidArgument(
            absl::StrCat("position_ids must be [B, S] or [1, S], got ", ps.ToString()));
      }
    }
    for (const auto& [t, index, what] : {std::tuple{word, kWord, "word_embedding"},
                                         std::tuple{pos, kPosition, "position_embedding"},
                                         std::tuple{seg, kSegment, "segment_embedding"}}) {
      if (t == nullptr) continue;
      INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kFloat32, index, node_));
      if (t->shape().rank() != 2 || t->shape()[1] != word->shape()[word->shape().rank() - 1]) {
        return node_.InvalidArgument(
            absl::StrCat(what, " must be [rows, hidden], got ", t->shape().ToString()));
      }
    }
    const int64_t d = word->shape()[1];
    INFERD_RETURN_IF_ERROR(CheckVector(*gamma, d, kGamma, "gamma", node_));
    INFERD_RETURN_IF_ERROR(CheckVector(*beta, d, kBeta, "beta", node_));
    if (pos_ids == nullptr && seq > pos->shape()[0]) {
      return node_.InvalidArgument(absl::StrCat("sequence length ", seq, " exceeds the ",
                                                pos->shape()[0], " rows of position_embedding"));
    }

    const Shape out_shape{batch, seq, d};
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, out_shape));
    int32_t* mask_index = nullptr;
    float* sum_out = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kInt32, Shape{batch}));
      mask_index = t->mutable_data<int32_t>();
    }
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(2, DataType::kFloat32, out_shape));
      sum_out = t->mutable_data<float>();
    }
    // pass 1: every id in range (before any row is written).
    const int32_t* id = ids->data<int32_t>();
    const int32_t* sid = seg_ids != nullptr ? seg_ids->data<int32_t>() : nullptr;
    const int32_t* pid = pos_ids != nullptr ? pos_ids->data<int32_t>() : nullptr;
    const int64_t n = batch * seq;
    const int64_t pid_count = pos_ids != nullptr ? pos_ids->NumElements() : 0;
    for (int64_t i = 0; i < n; ++i) {
      if (id[i] < 0 || id[i] >= word->shape()[0]) {
        return node_.InvalidArgument(absl::StrCat("input_ids[", i, "] = ", id[i],
                                                  " is out of range [0, ", word->shape()[0], ")"));
      }
      if (sid != nullptr && (sid[i] < 0 || sid[i] >= seg->shape()[0])) {
        return node_.InvalidArgument(absl::StrCat("segment_ids[", i, "] = ", sid[i],
                                                  " is out of range [0, ", seg->shape()[0], ")"));
      }
    }
    for (int64_t i = 0; i < pid_count; ++i) {
      if (pid[i] < 0 || pid[i] >= pos->shape()[0]) {
        return node_.InvalidArgument(absl::StrCat("position_ids[", i, "] = ", pid[i],
                                                  " is out of range [0, ", pos->shape()[0], ")"));
      }
    }
    // pass 2: mask_index.
    if (mask_index != nullptr) {
      const int32_t* m = mask != nullptr ? mask->data<int32_t>() : nullptr;
      for (int64_t b = 0; b < batch; ++b) {
        int32_t count = 0;
        for (int64_t s = 0; m != nullptr && s < seq; ++s) count += m[b * seq + s] != 0;
        mask_index[b] = count;
      }
    }
    if (n == 0 || d == 0) return absl::OkStatus();
    // pass 3: rows.
    const float* wt = word->data<float>();
    const float* pt = pos->data<float>();
    const float* st = seg != nullptr ? seg->data<float>() : nullptr;
    const float* g = gamma->data<float>();
    const float* be = beta->data<float>();
    float* out = y->mutable_data<float>();
    const float epsilon = epsilon_;
    ctx.threads().ParallelFor(n, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t s_index = r % seq;
        const int64_t p = pid == nullptr ? s_index : pid[pid_count == seq ? s_index : r];
        const float* w = wt + static_cast<int64_t>(id[r]) * d;
        const float* pe = pt + p * d;
        float* s = sum_out != nullptr ? sum_out + r * d : out + r * d;
        if (st != nullptr) {
          const float* se = st + static_cast<int64_t>(sid[r]) * d;
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) s[i] = w[i] + pe[i] + se[i];
        } else {
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) s[i] = w[i] + pe[i];
        }
        NormalizeRow(s, g, be, out + r * d, d, epsilon, /*simplified=*/false, nullptr, nullptr);
      }
    });
    return absl::OkStatus();
  }

 private:
  EmbedLayerNormKernel(const KernelInfo& info, float epsilon) : node_(info), epsilon_(epsilon) {}

  const NodeLabel node_;
  const float epsilon_;
};

}  // namespace

std::vector<engine::KernelDef> ContribNormKernelDefs() {
  const std::vector<DataType> f32 = {DataType::kFloat32};
  std::vector<engine::KernelDef> defs = {
      CpuDef(engine::kMicrosoftDomain, "SkipLayerNormalization", 1, 1, f32,
             FactoryOf<SkipNormKernel>()),
      CpuDef(engine::kMicrosoftDomain, "SkipSimplifiedLayerNormalization", 1, 1, f32,
             FactoryOf<SkipNormKernel>()),
      CpuDef(engine::kOnnxDomain, "SimplifiedLayerNormalization", 1, kMaxOpset, f32,
             FactoryOf<SimplifiedNormKernel>()),
  };
  engine::KernelDef embed = CpuDef(engine::kMicrosoftDomain, "EmbedLayerNormalization", 1, 1, f32,
                                   FactoryOf<EmbedLayerNormKernel>());
  embed.type_input = EmbedLayerNormKernel::kWord;  // input 0 is the int32 ids
  defs.push_back(std::move(embed));
  return defs;
}

}  // namespace inferd::kernels::cpu

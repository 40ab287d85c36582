// RMS normalization as ONNX Runtime registers it (docs/genai-ops.md):
//   SimplifiedLayerNormalization (default domain, version 1, as ORT has it):
//     Y = X / sqrt(mean(X^2 over axis..end) + epsilon) * scale; optional inv_std_var output
//     (X's shape with the normalized dims 1). axis default -1, epsilon 1e-5; stash_type must be
//     1 (float32 statistics).
//   SkipSimplifiedLayerNormalization (com.microsoft, version 1): s = input + skip (+ bias),
//     output = RMSNorm(s over the last dim) * gamma; optional outputs inv_std_var ([..., 1]) and
//     input_skip_bias_sum (s). skip is input's shape or its trailing dims (repeated over the
//     leading ones, e.g. [1, S, H] or [S, H] for [B, S, H]). epsilon default 1e-12 as in ORT.
//     The `mean` output slot (ORT's schema keeps it from SkipLayerNormalization) has no meaning
//     for RMS normalization and is refused when a graph uses it.
// float32 only. Own code: one pass for the sum of squares, one for the scaled output, per row;
// rows split over the intra-op pool.
#include <cmath>
#include <memory>

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

// One row: y = x * inv_rms * gamma; returns inv_rms.
inline float NormalizeRow(const float* x, const float* gamma, int64_t d, float epsilon, float* y) {
  float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
  for (int64_t i = 0; i < d; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + epsilon);
#pragma omp simd
  for (int64_t i = 0; i < d; ++i) y[i] = x[i] * inv * gamma[i];
  return inv;
}

class SimplifiedLayerNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SimplifiedLayerNormKernel>> Create(const KernelInfo& info) {
    const int64_t stash = info.GetInt("stash_type", 1);
    if (stash != 1) {
      return info.Error(absl::StrCat("stash_type ", stash, " is not supported (only 1, float)"));
    }
    return std::unique_ptr<SimplifiedLayerNormKernel>(new SimplifiedLayerNormKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scale, DataType::kFloat32, 1, node_));
    const Shape& s = x->shape();
    if (s.rank() < 1) return node_.InvalidArgument("X must have rank >= 1");
    INFERD_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(axis_, s.rank(), node_));
    const int64_t rows = s.SizeBetween(0, axis), d = s.SizeFrom(axis);
    if (scale->NumElements() != d) {
      return node_.InvalidArgument(absl::StrCat("scale must have ", d, " values (the dims from ",
                                                "axis ", axis, " of ", s.ToString(), "), got ",
                                                scale->shape().ToString()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, s));
    float* inv = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      Shape stats = s;
      for (size_t i = axis; i < s.rank(); ++i) stats[i] = 1;
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kFloat32, stats));
      inv = t->mutable_data<float>();
    }
    if (rows == 0 || d == 0) return absl::OkStatus();
    const float* xv = x->data<float>();
    const float* g = scale->data<float>();
    float* yv = y->mutable_data<float>();
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 16384 / d), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float v = NormalizeRow(xv + r * d, g, d, epsilon_, yv + r * d);
        if (inv != nullptr) inv[r] = v;
      }
    });
    return absl::OkStatus();
  }

 private:
  explicit SimplifiedLayerNormKernel(const KernelInfo& info)
      : node_(info), axis_(info.GetInt("axis", -1)), epsilon_(info.GetFloat("epsilon", 1e-5f)) {}

  const NodeLabel node_;
  const int64_t axis_;
  const float epsilon_;
};

class SkipSimplifiedLayerNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SkipSimplifiedLayerNormKernel>> Create(
      const KernelInfo& info) {
    if (info.num_outputs() > 1 && !info.output(1).name.empty()) {
      return info.Error(
          "output 'mean' is not produced: RMS normalization has no mean (use inv_std_var)");
    }
    return std::unique_ptr<SkipSimplifiedLayerNormKernel>(new SkipSimplifiedLayerNormKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* skip, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* gamma, RequiredInput(ctx, 2, node_));
    const Tensor* bias = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*skip, DataType::kFloat32, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*gamma, DataType::kFloat32, 2, node_));
    const Shape& s = x->shape();
    if (s.rank() < 2 || s.rank() > 3) {
      return node_.InvalidArgument(absl::StrCat(
          "input must be [batch, sequence, hidden] or [rows, hidden], got ", s.ToString()));
    }
    const int64_t d = s[s.rank() - 1], total = s.NumElements();
    // skip: input's shape, or (after leading 1s) its trailing dims.
    const Shape& ks = skip->shape();
    size_t lead = 0;
    while (lead < ks.rank() && ks[lead] == 1 && ks.rank() - lead > 1) ++lead;
    bool skip_ok = ks.rank() - lead <= s.rank() && ks.rank() >= 1;
    for (size_t i = lead; skip_ok && i < ks.rank(); ++i) {
      skip_ok = ks[i] == s[s.rank() - (ks.rank() - i)];
    }
    if (!skip_ok || ks[ks.rank() - 1] != d) {
      return node_.InvalidArgument(absl::StrCat("skip ", ks.ToString(), " must be input's shape ",
                                                s.ToString(), " or its trailing dims"));
    }
    const int64_t skip_size = ks.NumElements();
    if (gamma->NumElements() != d) {
      return node_.InvalidArgument(absl::StrCat("gamma must have hidden = ", d, " values"));
    }
    if (bias != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 3, node_));
      if (bias->NumElements() != d) {
        return node_.InvalidArgument(absl::StrCat("bias must have hidden = ", d, " values"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, s));
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      return node_.Unimplemented("output 'mean' is not produced by RMS normalization");
    }
    float* inv = nullptr;
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      Shape stats = s;
      stats[s.rank() - 1] = 1;
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(2, DataType::kFloat32, stats));
      inv = t->mutable_data<float>();
    }
    float* sum = nullptr;
    if (ctx.num_outputs() > 3 && ctx.output_wanted(3)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(3, DataType::kFloat32, s));
      sum = t->mutable_data<float>();
    }
    if (total == 0 || d == 0) return absl::OkStatus();
    const float* xv = x->data<float>();
    const float* kv = skip->data<float>();
    const float* gv = gamma->data<float>();
    const float* bv = bias != nullptr ? bias->data<float>() : nullptr;
    float* yv = y->mutable_data<float>();
    const int64_t rows = total / d;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 8192 / d), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const float* xr = xv + r * d;
        const float* kr = kv + (r * d) % skip_size;
        // The sum goes to input_skip_bias_sum when wanted, else through y (overwritten below).
        float* sr = sum != nullptr ? sum + r * d : yv + r * d;
        if (bv != nullptr) {
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) sr[i] = xr[i] + kr[i] + bv[i];
        } else {
#pragma omp simd
          for (int64_t i = 0; i < d; ++i) sr[i] = xr[i] + kr[i];
        }
        const float v = NormalizeRow(sr, gv, d, epsilon_, yv + r * d);
        if (inv != nullptr) inv[r] = v;
      }
    });
    return absl::OkStatus();
  }

 private:
  explicit SkipSimplifiedLayerNormKernel(const KernelInfo& info)
      : node_(info), epsilon_(info.GetFloat("epsilon", 1e-12f)) {}

  const NodeLabel node_;
  const float epsilon_;
};

}  // namespace

std::vector<engine::KernelDef> SimplifiedLayerNormKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "SimplifiedLayerNormalization", 1, kMaxOpset,
                 {DataType::kFloat32}, FactoryOf<SimplifiedLayerNormKernel>()),
          CpuDef(engine::kMicrosoftDomain, "SkipSimplifiedLayerNormalization", 1, kMaxOpset,
                 {DataType::kFloat32}, FactoryOf<SkipSimplifiedLayerNormKernel>())};
}

}  // namespace inferd::kernels::cpu

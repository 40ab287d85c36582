// LayerNormalization (opset 17, float32): each row of X flattened to [prod(dims[:axis]),
// prod(dims[axis:])] is normalized as (x - mean) / sqrt(var + epsilon) * Scale + B, with Scale
// and the optional B broadcast to the normalized shape. Optional outputs Mean and InvStdDev
// have X's shape with 1s from `axis` on. Own code (two passes per row), parallel over rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/container/inlined_vector.h"
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

constexpr int64_t kGrain = 16 * 1024;  // elements per thread, at least

class LayerNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LayerNormKernel>> Create(const KernelInfo& info) {
    // stash_type: the type of the statistics (Mean, InvStdDev outputs and the computation);
    // float32 (1, the default) is the one supported.
    if (const int64_t stash = info.GetInt("stash_type", 1); stash != 1) {
      return NodeLabel(info).Unimplemented(
          absl::StrCat("stash_type ", stash, " (only 1, float32, is supported)"));
    }
    return std::unique_ptr<LayerNormKernel>(new LayerNormKernel(info));
  }

  // No workspace in the static plan: Scale and B are read in place when they have as many
  // elements as the normalized shape. Broadcast ones are expanded by Compute into temporaries
  // taken beside the plan's block, which a workspace estimate does not describe: no estimate
  // then (the partitioner charges its heuristic).
  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info) {
    NodeLabel node(info);
    const std::optional<Shape> x = StaticInputShape(info, 0);
    if (!x) return node.InvalidArgument("input shapes are not static");
    const int64_t rank = static_cast<int64_t>(x->rank());
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(info.GetInt("axis", -1), rank, node));
    const int64_t normalized = x->SizeBetween(axis, rank);
    for (int input : {1, 2}) {
      if (!info.input_present(input)) continue;
      const std::optional<Shape> s = StaticInputShape(info, input);
      if (!s) return node.InvalidArgument("input shapes are not static");
      if (s->NumElements() != normalized) {
        return node.InvalidArgument(
            absl::StrCat("input ", input, " is broadcast: Compute expands it into a temporary"));
      }
    }
    return size_t{0};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    const Tensor* bias = ctx.input(2);
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*scale, DataType::kFloat32, 1, node_));
    if (bias != nullptr) INFERD_RETURN_IF_ERROR(CheckType(*bias, DataType::kFloat32, 2, node_));
    const Shape& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, rank, node_));
    const Shape normalized(shape.dims().subspan(axis));
    const int64_t rows = shape.SizeBetween(0, axis), d = normalized.NumElements();

    // Scale and B as d contiguous values (expanded into a temporary when they broadcast).
    Tensor scale_tmp, bias_tmp;
    INFERD_ASSIGN_OR_RETURN(const float* gamma, Expand(*scale, normalized, 1, ctx, scale_tmp));
    const float* beta = nullptr;
    if (bias != nullptr) {
      INFERD_ASSIGN_OR_RETURN(beta, Expand(*bias, normalized, 2, ctx, bias_tmp));
    }

    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    Shape stats_shape = shape;
    for (int64_t i = axis; i < rank; ++i) stats_shape[i] = 1;
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(1, DataType::kFloat32, stats_shape));
      mean_out = t->mutable_data<float>();
    }
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(2, DataType::kFloat32, stats_shape));
      inv_out = t->mutable_data<float>();
    }
    if (rows == 0) return absl::OkStatus();
    const float* in = x->data<float>();
    float* out = y->mutable_data<float>();
    const float epsilon = epsilon_;
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(d, 1)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  const float* xr = in + r * d;
                                  float* yr = out + r * d;
                                  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
                                  for (int64_t i = 0; i < d; ++i) sum += xr[i];
                                  const float mean = d > 0 ? sum / static_cast<float>(d) : 0.0f;
                                  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
                                  for (int64_t i = 0; i < d; ++i)
                                    sq += (xr[i] - mean) * (xr[i] - mean);
                                  const float var = d > 0 ? sq / static_cast<float>(d) : 0.0f;
                                  const float inv = 1.0f / std::sqrt(var + epsilon);
                                  if (beta != nullptr) {
#pragma omp simd
                                    for (int64_t i = 0; i < d; ++i)
                                      yr[i] = (xr[i] - mean) * inv * gamma[i] + beta[i];
                                  } else {
#pragma omp simd
                                    for (int64_t i = 0; i < d; ++i)
                                      yr[i] = (xr[i] - mean) * inv * gamma[i];
                                  }
                                  if (mean_out != nullptr) mean_out[r] = mean;
                                  if (inv_out != nullptr) inv_out[r] = inv;
                                }
                              });
    return absl::OkStatus();
  }

 private:
  explicit LayerNormKernel(const KernelInfo& info)
      : node_(info), axis_(info.GetInt("axis", -1)), epsilon_(info.GetFloat("epsilon", 1e-5f)) {}

  // `t` (input `index`) broadcast to `normalized` as contiguous values: its own data when it
  // already has that many elements, else an expanded copy in `tmp`.
  absl::StatusOr<const float*> Expand(const Tensor& t, const Shape& normalized, int index,
                                      KernelContext& ctx, Tensor& tmp) const {
    const Shape& s = t.shape();
    bool ok = s.rank() <= normalized.rank();
    for (size_t i = 0; ok && i < s.rank(); ++i) {
      const int64_t dim = normalized[normalized.rank() - s.rank() + i];
      ok = s[i] == dim || s[i] == 1;
    }
    if (!ok) {
      return node_.InvalidArgument(absl::StrCat("input ", index, " has shape ", s.ToString(),
                                                ", which does not broadcast to the normalized "
                                                "shape ",
                                                normalized.ToString()));
    }
    if (t.NumElements() == normalized.NumElements()) return t.data<float>();
    INFERD_ASSIGN_OR_RETURN(tmp, ctx.MakeTemporaryTensor(DataType::kFloat32, normalized));
    float* dst = tmp.mutable_data<float>();
    const float* src = t.data<float>();
    const size_t rank = normalized.rank(), lead = rank - s.rank();
    absl::InlinedVector<int64_t, 8> src_strides(rank, 0);
    for (size_t i = rank, stride = 1; i-- > lead;) {
      const int64_t dim = s[i - lead];
      src_strides[i] = dim == 1 ? 0 : static_cast<int64_t>(stride);
      stride *= dim;
    }
    const int64_t n = normalized.NumElements();
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t rest = flat, offset = 0;
      for (size_t i = rank; i-- > 0;) {
        offset += (rest % normalized[i]) * src_strides[i];
        rest /= normalized[i];
      }
      dst[flat] = src[offset];
    }
    return static_cast<const float*>(dst);
  }

  const NodeLabel node_;
  const int64_t axis_;
  const float epsilon_;
};

}  // namespace

std::vector<engine::KernelDef> LayerNormKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "LayerNormalization", 17, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<LayerNormKernel>(), &LayerNormKernel::EstimateWorkspace)};
}

}  // namespace inferd::kernels::cpu

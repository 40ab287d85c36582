// BatchNormalization (inference) and InstanceNormalization (float32), X of shape [N, C, D...].
//
// BatchNormalization: Y = (X - mean) / sqrt(var + epsilon) * scale + B with per-channel [C]
// parameters, folded into Y = X * a[c] + b[c] per (n, c) plane. Opsets 6-8 also take `spatial`
// = 0 with parameters of shape [C, D...] (one per element of a sample). training_mode = 1
// (opsets 14+) normalizes with the batch's own per-channel mean and biased variance (over N and
// D...) and writes the optional outputs running_mean = input_mean * momentum + mean * (1 -
// momentum), running_var likewise with the variance; the running-statistics outputs of opsets
// before 14 (training with is_test / consumed_inputs) are UNIMPLEMENTED.
// InstanceNormalization: each (n, c) plane normalized by its own mean and variance, then
// scale[c] and B[c].
// Own code: parallel over (n, c) planes, vectorized within a plane.
#include <algorithm>
#include <cmath>
#include <memory>

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

// Inputs [1, count) are float32 with `expected` elements each.
absl::Status CheckParams(const KernelContext& ctx, int count, int64_t expected,
                         const char* expected_text, const NodeLabel& node) {
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < count; ++i) {
    INFERD_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, node));
    INFERD_RETURN_IF_ERROR(CheckType(*t, DataType::kFloat32, i, node));
    if (t->NumElements() != expected) {
      return node.InvalidArgument(absl::StrCat(kNames[i], " (input ", i, ") has shape ",
                                               t->shape().ToString(), ", expected ", expected,
                                               " values (", expected_text, ")"));
    }
  }
  return absl::OkStatus();
}

// X (input 0, named `name` in errors): float32 [N, C, D...], seen as N * C planes of D...
// elements each.
struct Planes {
  const Tensor* tensor;
  int64_t n, c, plane;

  static absl::StatusOr<Planes> Read(const KernelContext& ctx, const char* name,
                                     const NodeLabel& node) {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node));
    const Shape& shape = x->shape();
    if (shape.rank() < 2) {
      return node.InvalidArgument(
          absl::StrCat(name, " must have shape [N, C, ...], got ", shape.ToString()));
    }
    return Planes{x, shape[0], shape[1], shape.SizeFrom(2)};
  }

  // Calls f(channel, x_plane, y_plane) for every (n, c) plane, in parallel; y has X's shape.
  template <typename F>
  void ForEach(engine::ThreadPool& pool, Tensor& y, const F& f) const {
    const float* in = tensor->data<float>();
    float* out = y.mutable_data<float>();
    pool.ParallelFor(n * c, std::max<int64_t>(1, kGrain / std::max<int64_t>(plane, 1)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t nc = begin; nc < end; ++nc) {
                         f(nc % c, in + nc * plane, out + nc * plane);
                       }
                     });
  }
};

class BatchNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BatchNormKernel>> Create(const KernelInfo& info) {
    const bool training = info.opset() >= 14 && info.GetInt("training_mode", 0) != 0;
    for (int i = training ? 3 : 1; i < info.num_outputs(); ++i) {
      if (info.output(i).present) {
        return NodeLabel(info).Unimplemented(absl::StrCat(
            "output ", i, " (running or saved statistics, training only) is not supported"));
      }
    }
    return std::unique_ptr<BatchNormKernel>(new BatchNormKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Planes x, Planes::Read(ctx, "X", node_));
    if (training_) return ComputeTraining(ctx, x);
    const int64_t c = x.c, plane = x.plane;
    // spatial = 0 (opsets 6-8): parameters per element of a sample, unless they have C values.
    const Tensor* scale_t = ctx.input(1);
    const bool per_element = !spatial_ && scale_t != nullptr && scale_t->NumElements() != c;
    if (per_element) {
      INFERD_RETURN_IF_ERROR(CheckParams(ctx, 5, c * plane, "[C, D...] with spatial = 0", node_));
    } else {
      INFERD_RETURN_IF_ERROR(CheckParams(ctx, 5, c, "[C]", node_));
    }
    const float* scale = ctx.input(1)->data<float>();
    const float* bias = ctx.input(2)->data<float>();
    const float* mean = ctx.input(3)->data<float>();
    const float* var = ctx.input(4)->data<float>();
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, x.tensor->shape()));
    if (y->NumElements() == 0) return absl::OkStatus();
    const float epsilon = epsilon_;
    x.ForEach(ctx.threads(), *y, [&](int64_t ch, const float* xp, float* yp) {
      if (per_element) {
        const int64_t p0 = ch * plane;
#pragma omp simd
        for (int64_t i = 0; i < plane; ++i) {
          const float a = scale[p0 + i] / std::sqrt(var[p0 + i] + epsilon);
          yp[i] = (xp[i] - mean[p0 + i]) * a + bias[p0 + i];
        }
      } else {
        const float a = scale[ch] / std::sqrt(var[ch] + epsilon);
        const float b = bias[ch] - mean[ch] * a;
#pragma omp simd
        for (int64_t i = 0; i < plane; ++i) yp[i] = xp[i] * a + b;
      }
    });
    return absl::OkStatus();
  }

 private:
  explicit BatchNormKernel(const KernelInfo& info)
      : node_(info),
        epsilon_(info.GetFloat("epsilon", 1e-5f)),
        momentum_(info.GetFloat("momentum", 0.9f)),
        spatial_(info.opset() >= 9 || info.GetInt("spatial", 1) != 0),
        training_(info.opset() >= 14 && info.GetInt("training_mode", 0) != 0) {}

  // training_mode = 1: the batch's statistics per channel (parallel over channels; two passes
  // with double accumulators), then Y and the running statistics.
  absl::Status ComputeTraining(KernelContext& ctx, const Planes& x) const {
    const int64_t n = x.n, c = x.c, plane = x.plane;
    INFERD_RETURN_IF_ERROR(CheckParams(ctx, 5, c, "[C]", node_));
    const float* scale = ctx.input(1)->data<float>();
    const float* bias = ctx.input(2)->data<float>();
    const float* in_mean = ctx.input(3)->data<float>();
    const float* in_var = ctx.input(4)->data<float>();
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, x.tensor->shape()));
    Tensor* running[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i) {
      if (ctx.num_outputs() > i + 1 && ctx.output_wanted(i + 1)) {
        INFERD_ASSIGN_OR_RETURN(running[i], ctx.MakeOutputTensor(i + 1, DataType::kFloat32, {c}));
      }
    }
    const int64_t count = n * plane;
    if (count == 0) {
      return node_.InvalidArgument(absl::StrCat("training_mode = 1 needs a non-empty batch, got X ",
                                                x.tensor->shape().ToString()));
    }
    const float* in = x.tensor->data<float>();
    float* out = y->mutable_data<float>();
    const float epsilon = epsilon_, momentum = momentum_;
    ctx.threads().ParallelFor(c, std::max<int64_t>(1, kGrain / count), [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const float* p = in + (i * c + ch) * plane;
#pragma omp simd reduction(+ : sum)
          for (int64_t j = 0; j < plane; ++j) sum += p[j];
        }
        const double mean = sum / static_cast<double>(count);
        double sq = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const float* p = in + (i * c + ch) * plane;
#pragma omp simd reduction(+ : sq)
          for (int64_t j = 0; j < plane; ++j) sq += (p[j] - mean) * (p[j] - mean);
        }
        const double var = sq / static_cast<double>(count);
        const float a = static_cast<float>(scale[ch] / std::sqrt(var + epsilon));
        const float shift = static_cast<float>(bias[ch] - mean * a);
        for (int64_t i = 0; i < n; ++i) {
          const float* p = in + (i * c + ch) * plane;
          float* q = out + (i * c + ch) * plane;
#pragma omp simd
          for (int64_t j = 0; j < plane; ++j) q[j] = p[j] * a + shift;
        }
        if (running[0] != nullptr) {
          running[0]->mutable_data<float>()[ch] =
              static_cast<float>(in_mean[ch] * momentum + mean * (1.0 - momentum));
        }
        if (running[1] != nullptr) {
          running[1]->mutable_data<float>()[ch] =
              static_cast<float>(in_var[ch] * momentum + var * (1.0 - momentum));
        }
      }
    });
    return absl::OkStatus();
  }

  const NodeLabel node_;
  const float epsilon_;
  const float momentum_;  // training_mode: the running statistics' weight of the old values
  const bool spatial_;
  const bool training_;  // opset 14+ training_mode = 1
};

class InstanceNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<InstanceNormKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<InstanceNormKernel>(new InstanceNormKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Planes x, Planes::Read(ctx, "input", node_));
    const int64_t plane = x.plane;
    INFERD_RETURN_IF_ERROR(CheckParams(ctx, 3, x.c, "[C]", node_));
    const float* scale = ctx.input(1)->data<float>();
    const float* bias = ctx.input(2)->data<float>();
    INFERD_ASSIGN_OR_RETURN(Tensor * y,
                            ctx.MakeOutputTensor(0, DataType::kFloat32, x.tensor->shape()));
    if (y->NumElements() == 0) return absl::OkStatus();
    const float epsilon = epsilon_;
    x.ForEach(ctx.threads(), *y, [&](int64_t ch, const float* xp, float* yp) {
      // Two passes (mean, then centred squares) for accuracy; double accumulators.
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < plane; ++i) sum += xp[i];
      const float mean = static_cast<float>(sum / static_cast<double>(plane));
      double sq = 0.0;
#pragma omp simd reduction(+ : sq)
      for (int64_t i = 0; i < plane; ++i) {
        const float d = xp[i] - mean;
        sq += d * d;
      }
      const float var = static_cast<float>(sq / static_cast<double>(plane));
      const float a = scale[ch] / std::sqrt(var + epsilon);
      const float b = bias[ch] - mean * a;
#pragma omp simd
      for (int64_t i = 0; i < plane; ++i) yp[i] = xp[i] * a + b;
    });
    return absl::OkStatus();
  }

 private:
  explicit InstanceNormKernel(const KernelInfo& info)
      : node_(info), epsilon_(info.GetFloat("epsilon", 1e-5f)) {}

  const NodeLabel node_;
  const float epsilon_;
};

}  // namespace

std::vector<engine::KernelDef> NormKernelDefs() {
  const std::vector<DataType> f32 = {DataType::kFloat32};
  return {
      // 1-8: `spatial` (1 also has consumed_inputs, 6 is_test: both irrelevant to inference);
      // 9-13: per-channel only; 14+: training_mode; 15: split types.
      CpuDef(engine::kOnnxDomain, "BatchNormalization", 1, 8, f32, FactoryOf<BatchNormKernel>()),
      CpuDef(engine::kOnnxDomain, "BatchNormalization", 9, 13, f32, FactoryOf<BatchNormKernel>()),
      CpuDef(engine::kOnnxDomain, "BatchNormalization", 14, kMaxOpset, f32,
             FactoryOf<BatchNormKernel>()),
      // 1 (consumed_inputs, ignored) and 6 compute the same.
      CpuDef(engine::kOnnxDomain, "InstanceNormalization", 1, kMaxOpset, f32,
             FactoryOf<InstanceNormKernel>())};
}

}  // namespace inferd::kernels::cpu

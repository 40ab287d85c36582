// Softmax (float32). Opsets 1-12: the input is coerced to 2-D at `axis` (default 1) and each row
// of the flattened [prod(dims[:axis]), prod(dims[axis:])] matrix is normalized. Opset 13+: along
// the single dimension `axis` (default -1). Own code, parallel over rows.
#include <algorithm>
#include <cmath>
#include <limits>
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

// Softmax of n contiguous values.
void SoftmaxRow(const float* x, float* y, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  const float scale = 1.0f / sum;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= scale;
}

class SoftmaxKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SoftmaxKernel>> Create(const KernelInfo& info) {
    const bool coerce_2d = info.opset() < 13;
    return std::unique_ptr<SoftmaxKernel>(
        new SoftmaxKernel(info, info.GetInt("axis", coerce_2d ? 1 : -1), coerce_2d));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, DataType::kFloat32, 0, node_));
    const Shape& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    // Opset < 13 accepts axis == rank (a flattened row of one element per value); and a
    // scalar is a single value either way.
    int axis = 0;
    if (rank > 0) {
      if (coerce_2d_ && axis_ == rank) {
        axis = static_cast<int>(rank);
      } else {
        INFERD_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis_, rank, node_));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, DataType::kFloat32, shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    const float* in = x->data<float>();
    float* out = y->mutable_data<float>();
    const int64_t outer = shape.SizeBetween(0, axis);
    const int64_t n = coerce_2d_ ? shape.SizeFrom(axis) : (rank == 0 ? 1 : shape[axis]);
    const int64_t inner = coerce_2d_ || rank == 0 ? 1 : shape.SizeFrom(axis + 1);
    if (inner == 1) {
      ctx.threads().ParallelFor(outer, std::max<int64_t>(1, kGrain / n),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t r = begin; r < end; ++r) {
                                    SoftmaxRow(in + r * n, out + r * n, n);
                                  }
                                });
      return absl::OkStatus();
    }
    // Strided: per outer index, a [n, inner] block normalized along n, cut into column tiles.
    constexpr int64_t kTile = 256;
    const int64_t tiles = (inner + kTile - 1) / kTile;
    ctx.threads().ParallelFor(
        outer * tiles, std::max<int64_t>(1, kGrain / (n * kTile)), [&](int64_t begin, int64_t end) {
          float scratch[2 * kTile];
          for (int64_t t = begin; t < end; ++t) {
            const int64_t o = t / tiles, col = (t % tiles) * kTile;
            const int64_t offset = o * n * inner + col;
            const int64_t width = std::min(kTile, inner - col);
            SoftmaxStrided(in + offset, out + offset, n, inner, width, scratch);
          }
        });
    return absl::OkStatus();
  }

 private:
  SoftmaxKernel(const KernelInfo& info, int64_t axis, bool coerce_2d)
      : node_(info), axis_(axis), coerce_2d_(coerce_2d) {}

  // `width` columns of an [n, row_stride] block.
  static void SoftmaxStrided(const float* x, float* y, int64_t n, int64_t row_stride, int64_t width,
                             float* scratch) {
    float* max = scratch;
    float* sum = scratch + width;
    std::copy(x, x + width, max);
    for (int64_t i = 1; i < n; ++i) {
      const float* row = x + i * row_stride;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) max[j] = std::max(max[j], row[j]);
    }
    std::fill(sum, sum + width, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      const float* a = x + i * row_stride;
      float* b = y + i * row_stride;
      for (int64_t j = 0; j < width; ++j) {
        b[j] = std::exp(a[j] - max[j]);
        sum[j] += b[j];
      }
    }
    for (int64_t j = 0; j < width; ++j) sum[j] = 1.0f / sum[j];
    for (int64_t i = 0; i < n; ++i) {
      float* b = y + i * row_stride;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) b[j] *= sum[j];
    }
  }

  const NodeLabel node_;
  const int64_t axis_;
  const bool coerce_2d_;  // opset < 13
};

}  // namespace

absl::Status RegisterSoftmaxKernels(engine::KernelRegistry& registry) {
  // One kernel class; the opset (read at creation) selects the semantics.
  return RegisterAll(registry, {CpuDef(engine::kOnnxDomain, "Softmax", 1, 12, {DataType::kFloat32},
                                       FactoryOf<SoftmaxKernel>()),
                                CpuDef(engine::kOnnxDomain, "Softmax", 13, kMaxOpset,
                                       {DataType::kFloat32}, FactoryOf<SoftmaxKernel>())});
}

}  // namespace inferd::kernels::cpu

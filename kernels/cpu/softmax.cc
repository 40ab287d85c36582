// Softmax, LogSoftmax and Hardmax (float32), one kernel class. Opsets 1-12: the input is coerced
// to 2-D at `axis` (default 1) and each row of the flattened [prod(dims[:axis]),
// prod(dims[axis:])] matrix is normalized. Opset 13+: along the single dimension `axis` (default
// -1). Own code: contiguous rows use the vectorized max / exp / sum of vec_math.h; a non-last axis
// is processed in column tiles (vectorized across columns). Parallel over rows or tiles.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/vec_math.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

constexpr int64_t kGrain = 16 * 1024;  // elements per thread, at least
constexpr int64_t kTile = 256;         // columns per tile of the strided path

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

// One row of n contiguous values.
void Row(Mode mode, const float* x, float* y, int64_t n) {
  switch (mode) {
    case Mode::kSoftmax: {
      const float m = vec::Max(x, n);
      const float sum = vec::ExpShiftStore(x, y, n, m);
      vec::Scale(y, y, n, 1.0f / sum);
      return;
    }
    case Mode::kLogSoftmax: {
      const float m = vec::Max(x, n);
      const float c = m + std::log(vec::ExpShiftSum(x, n, m));
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] - c;
      return;
    }
    case Mode::kHardmax: {
      // The first maximum wins (numpy argmax).
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i) {
        if (x[i] > x[best]) best = i;
      }
      std::fill(y, y + n, 0.0f);
      y[best] = 1.0f;
      return;
    }
  }
}

// `width` columns of an [n, stride] block, normalized along n. `scratch` holds 2 * kTile floats.
void Columns(Mode mode, const float* x, float* y, int64_t n, int64_t stride, int64_t width,
             float* scratch) {
  float* max = scratch;
  float* sum = scratch + kTile;
  if (mode == Mode::kHardmax) {
    int64_t best[kTile] = {};  // row of each column's first maximum
    std::copy(x, x + width, max);
    for (int64_t i = 1; i < n; ++i) {
      const float* row = x + i * stride;
      for (int64_t j = 0; j < width; ++j) {
        if (row[j] > max[j]) {
          max[j] = row[j];
          best[j] = i;
        }
      }
    }
    for (int64_t i = 0; i < n; ++i) std::fill(y + i * stride, y + i * stride + width, 0.0f);
    for (int64_t j = 0; j < width; ++j) y[best[j] * stride + j] = 1.0f;
    return;
  }
  std::copy(x, x + width, max);
  for (int64_t i = 1; i < n; ++i) {
    const float* row = x + i * stride;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) max[j] = std::max(max[j], row[j]);
  }
  std::fill(sum, sum + width, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    float* b = y + i * stride;
    vec::ExpShiftColumns(x + i * stride, max, b, width);
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) sum[j] += b[j];
  }
  if (mode == Mode::kSoftmax) {
    for (int64_t j = 0; j < width; ++j) sum[j] = 1.0f / sum[j];
    for (int64_t i = 0; i < n; ++i) {
      float* b = y + i * stride;
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) b[j] *= sum[j];
    }
    return;
  }
  for (int64_t j = 0; j < width; ++j) sum[j] = max[j] + std::log(sum[j]);
  for (int64_t i = 0; i < n; ++i) {
    const float* a = x + i * stride;
    float* b = y + i * stride;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) b[j] = a[j] - sum[j];
  }
}

class SoftmaxKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SoftmaxKernel>> Create(const KernelInfo& info) {
    const bool coerce_2d = info.opset() < 13;
    Mode mode = Mode::kSoftmax;
    if (info.op_type() == "LogSoftmax") mode = Mode::kLogSoftmax;
    if (info.op_type() == "Hardmax") mode = Mode::kHardmax;
    return std::unique_ptr<SoftmaxKernel>(
        new SoftmaxKernel(info, mode, info.GetInt("axis", coerce_2d ? 1 : -1), coerce_2d));
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
    const Mode mode = mode_;
    if (inner == 1) {
      ctx.threads().ParallelFor(outer, std::max<int64_t>(1, kGrain / n),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t r = begin; r < end; ++r) {
                                    Row(mode, in + r * n, out + r * n, n);
                                  }
                                });
      return absl::OkStatus();
    }
    // Strided: per outer index, an [n, inner] block normalized along n, cut into column tiles.
    const int64_t tiles = (inner + kTile - 1) / kTile;
    ctx.threads().ParallelFor(
        outer * tiles, std::max<int64_t>(1, kGrain / (n * kTile)), [&](int64_t begin, int64_t end) {
          float scratch[2 * kTile];
          int64_t o = begin / tiles, t = begin % tiles;  // one division per chunk
          for (int64_t w = begin; w < end; ++w) {
            const int64_t col = t * kTile;
            const int64_t offset = o * n * inner + col;
            Columns(mode, in + offset, out + offset, n, inner, std::min(kTile, inner - col),
                    scratch);
            if (++t == tiles) t = 0, ++o;
          }
        });
    return absl::OkStatus();
  }

 private:
  SoftmaxKernel(const KernelInfo& info, Mode mode, int64_t axis, bool coerce_2d)
      : node_(info), mode_(mode), axis_(axis), coerce_2d_(coerce_2d) {}

  const NodeLabel node_;
  const Mode mode_;
  const int64_t axis_;
  const bool coerce_2d_;  // opset < 13
};

}  // namespace

std::vector<engine::KernelDef> SoftmaxKernelDefs() {
  // One kernel class; the op type and the opset (read at creation) select the semantics.
  std::vector<engine::KernelDef> defs;
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    defs.push_back(
        CpuDef(engine::kOnnxDomain, op, 1, 12, {DataType::kFloat32}, FactoryOf<SoftmaxKernel>()));
    defs.push_back(CpuDef(engine::kOnnxDomain, op, 13, kMaxOpset, {DataType::kFloat32},
                          FactoryOf<SoftmaxKernel>()));
  }
  return defs;
}

}  // namespace inferd::kernels::cpu

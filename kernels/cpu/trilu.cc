// Trilu (opset 14+), any fixed-size element type: keeps the upper (upper=1, default: j - i >= k)
// or lower (upper=0: j - i <= k) triangle of each matrix in the last two dims and zeroes the rest;
// k is the optional int64 scalar input 1 (default 0). Each row is one memcpy plus one memset,
// parallel over rows.
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class TriluKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TriluKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<TriluKernel>(new TriluKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    const Shape& s = x->shape();
    if (s.rank() < 2) {
      return node_.InvalidArgument(
          absl::StrCat("the input must have rank >= 2, got ", s.ToString()));
    }
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      INFERD_RETURN_IF_ERROR(CheckType(*kt, DataType::kInt64, 1, node_));
      if (kt->NumElements() != 1) {
        return node_.InvalidArgument(
            absl::StrCat("k must be a scalar, got ", kt->shape().ToString()));
      }
      k = *kt->data<int64_t>();
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), s));
    if (y->NumElements() == 0) return absl::OkStatus();
    const int64_t n = s[s.rank() - 2], m = s[s.rank() - 1];
    const int64_t rows = s.SizeBetween(0, s.rank() - 1);
    const size_t row_bytes = static_cast<size_t>(m) * elem;
    const auto* src = static_cast<const unsigned char*>(x->raw_data());
    auto* dst = static_cast<unsigned char*>(y->raw_mutable_data());
    // Clamp k so that i + k cannot overflow.
    k = std::clamp<int64_t>(k, -n - 1, m + 1);
    ctx.threads().ParallelFor(
        rows, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(row_bytes, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t i = r % n;
            const unsigned char* in = src + r * row_bytes;
            unsigned char* out = dst + r * row_bytes;
            if (upper_) {  // keep columns [i + k, m)
              const size_t from = static_cast<size_t>(std::clamp<int64_t>(i + k, 0, m)) * elem;
              std::memset(out, 0, from);
              std::memcpy(out + from, in + from, row_bytes - from);
            } else {  // keep columns [0, i + k]
              const size_t to = static_cast<size_t>(std::clamp<int64_t>(i + k + 1, 0, m)) * elem;
              std::memcpy(out, in, to);
              std::memset(out + to, 0, row_bytes - to);
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  explicit TriluKernel(const KernelInfo& info)
      : node_(info), upper_(info.GetInt("upper", 1) != 0) {}

  const NodeLabel node_;
  const bool upper_;
};

}  // namespace

std::vector<engine::KernelDef> TriluKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Trilu", 14, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<TriluKernel>())};
}

}  // namespace inferd::kernels::cpu

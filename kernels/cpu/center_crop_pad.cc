// CenterCropPad (opset 18), any fixed-size element type: each dim listed in `axes` (default
// all) becomes the size the `shape` input gives it, cropped around the centre when smaller
// than the input (the extra element, when the difference is odd, is taken from the end) or
// zero-padded around it when larger (the extra padding element at the end).
// How: the output is written row by row along the innermost dim; each row is zeros or one
// memcpy of the overlapping input run plus zero fills. Parallel over rows.
#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class CenterCropPadKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<CenterCropPadKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<CenterCropPadKernel>(new CenterCropPadKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 1, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    const Shape& in = x->shape();
    const size_t rank = in.rank();
    if (rank == 0) return node_.InvalidArgument("the input must have rank >= 1");
    Dims sizes;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*shape_t, "shape", node_, &sizes));
    Dims axes;
    if (axes_.empty()) {
      for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
    } else {
      for (int64_t a : axes_) {
        INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank, node_, "axes value"));
        axes.push_back(axis);
      }
    }
    if (sizes.size() != axes.size()) {
      return node_.InvalidArgument(absl::StrCat("shape [", absl::StrJoin(sizes, ","), "] needs ",
                                                axes.size(), " values, one per axis"));
    }
    // Per dim: the output size and the input index the output's index 0 reads (negative: the
    // output starts with padding).
    Shape out = in;
    Dims shift(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t d = axes[i];
      if (sizes[i] < 0) {
        return node_.InvalidArgument(absl::StrCat("shape value ", sizes[i], " is negative"));
      }
      out[d] = sizes[i];
      shift[d] = in[d] >= sizes[i] ? (in[d] - sizes[i]) / 2 : -((sizes[i] - in[d]) / 2);
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out));
    if (y->NumElements() == 0) return absl::OkStatus();
    Copy(*x, shift, elem, *y, ctx.threads());
    return absl::OkStatus();
  }

 private:
  explicit CenterCropPadKernel(const KernelInfo& info) : node_(info), axes_(info.GetInts("axes")) {}

  void Copy(const Tensor& x, const Dims& shift, size_t elem, Tensor& y,
            engine::ThreadPool& pool) const {
    const Shape& in = x.shape();
    const Shape& out = y.shape();
    const size_t rank = in.rank();
    const int64_t len = out[rank - 1];
    const int64_t rows = out.SizeBetween(0, rank - 1);
    const Dims strides = StridesOf(in);
    const auto* src = static_cast<const unsigned char*>(x.raw_data());
    auto* dst = static_cast<unsigned char*>(y.raw_mutable_data());
    // The innermost dim's overlap: output [lo, hi) reads input from lo + shift.
    const int64_t s = shift[rank - 1];
    const int64_t lo = std::clamp<int64_t>(-s, 0, len);
    const int64_t hi = std::clamp<int64_t>(in[rank - 1] - s, lo, len);
    const size_t row_bytes = static_cast<size_t>(len) * elem;
    pool.ParallelFor(rows, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(1, row_bytes)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t r = begin; r < end; ++r) {
                         unsigned char* row = dst + r * row_bytes;
                         std::memset(row, 0, row_bytes);
                         int64_t offset = 0, rest = r;
                         bool inside = true;
                         for (size_t d = rank - 1; d-- > 0;) {
                           const int64_t i = rest % out[d] + shift[d];
                           rest /= out[d];
                           inside = inside && i >= 0 && i < in[d];
                           offset += i * strides[d];
                         }
                         if (!inside || hi <= lo) continue;
                         std::memcpy(row + lo * elem, src + (offset + lo + s) * elem,
                                     static_cast<size_t>(hi - lo) * elem);
                       }
                     });
  }

  const NodeLabel node_;
  const std::vector<int64_t> axes_;
};

}  // namespace

std::vector<engine::KernelDef> CenterCropPadKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "CenterCropPad", 18, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<CenterCropPadKernel>())};
}

}  // namespace inferd::kernels::cpu

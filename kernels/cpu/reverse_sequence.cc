// ReverseSequence (opset 10), own code, every fixed-size element type: for each batch entry b,
// the first sequence_lens[b] steps along time_axis come out in reverse order and the rest as
// they are. time_axis and batch_axis are 0 and 1 in either order; X has rank >= 2; each length
// must be in [0, steps]. Rows (everything after the first two dims) move as bytes, split over
// the (batch, step) pairs. Immutable after creation: thread-safe.
#include <algorithm>
#include <cstdint>
#include <cstring>
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

class ReverseSequenceKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ReverseSequenceKernel>> Create(const KernelInfo& info) {
    const int64_t time_axis = info.GetInt("time_axis", 0);
    const int64_t batch_axis = info.GetInt("batch_axis", 1);
    if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
      return info.Error(absl::StrCat("time_axis and batch_axis must be 0 and 1 (either order), ",
                                     "got ", time_axis, " and ", batch_axis));
    }
    return std::unique_ptr<ReverseSequenceKernel>(new ReverseSequenceKernel(info, time_axis == 0));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* lens, RequiredInput(ctx, 1, node_));
    const Shape& s = x->shape();
    if (s.rank() < 2) {
      return node_.InvalidArgument(absl::StrCat("X must have rank >= 2, got ", s.ToString()));
    }
    const int64_t steps = time_first_ ? s[0] : s[1];
    const int64_t batch = time_first_ ? s[1] : s[0];
    INFERD_RETURN_IF_ERROR(CheckType(*lens, DataType::kInt64, 1, node_));
    if (lens->shape().rank() != 1 || lens->shape()[0] != batch) {
      return node_.InvalidArgument(
          absl::StrCat("sequence_lens must be [", batch, "], got ", lens->shape().ToString()));
    }
    const int64_t* len = lens->data<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (len[b] < 0 || len[b] > steps) {
        return node_.InvalidArgument(
            absl::StrCat("sequence_lens[", b, "] = ", len[b], " is outside [0, ", steps, "]"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), s));
    if (y->NumElements() == 0) return absl::OkStatus();
    const size_t row = static_cast<size_t>(s.SizeFrom(2)) * engine::ElementSize(x->dtype());
    const char* xd = static_cast<const char*>(x->raw_data());
    char* yd = static_cast<char*>(y->raw_mutable_data());
    // The byte offset of (batch b, step t).
    auto at = [&](int64_t b, int64_t t) {
      return static_cast<size_t>(time_first_ ? t * batch + b : b * steps + t) * row;
    };
    ctx.threads().ParallelFor(
        batch * steps, std::max<int64_t>(1, 65536 / static_cast<int64_t>(std::max<size_t>(row, 1))),
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / steps, t = i % steps;
            const int64_t src = t < len[b] ? len[b] - 1 - t : t;
            std::memcpy(yd + at(b, t), xd + at(b, src), row);
          }
        });
    return absl::OkStatus();
  }

 private:
  ReverseSequenceKernel(const KernelInfo& info, bool time_first)
      : node_(info), time_first_(time_first) {}

  const NodeLabel node_;
  const bool time_first_;
};

}  // namespace

std::vector<engine::KernelDef> ReverseSequenceKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "ReverseSequence", 10, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<ReverseSequenceKernel>())};
}

}  // namespace inferd::kernels::cpu

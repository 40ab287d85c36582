// Split: the input cut along `axis` (negative from opset 11) into one part per output, for any
// fixed-size element type. Part sizes come from the `split` attribute (opsets 1-12; opset 1 also
// takes them as input 1) or the optional int64 input 1 (opset 13+); without them the parts are
// equal (the axis must divide evenly), or, with `num_outputs` (opset 18), ceil(dim / n) each and
// the last one smaller. Each part is copied as contiguous blocks, one per index
// before the axis, in parallel; a single output is an alias of the input.
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

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

class SplitKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<SplitKernel>> Create(const KernelInfo& info) {
    if (info.num_outputs() < 1) return info.Error("at least one output is required");
    return std::unique_ptr<SplitKernel>(new SplitKernel(info));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (num_outputs_ == 1) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0) return UnsupportedType(x->dtype(), node_);
    const Shape& in = x->shape();
    if (in.rank() == 0) return node_.InvalidArgument("the input must have rank >= 1");
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_, in.rank(), node_));
    const int n = ctx.num_outputs();
    Dims split;
    if (split_input_ && ctx.input(1) != nullptr) {
      INFERD_RETURN_IF_ERROR(ReadIndexVector(*ctx.input(1), "split", node_, &split));
    } else {
      split.assign(split_attr_.begin(), split_attr_.end());
    }
    const int64_t dim = in[axis];
    INFERD_RETURN_IF_ERROR(SplitSizes(axis, dim, n, num_outputs_attr_, node_, &split));
    if (n == 1) return ctx.MakeOutputAlias(0, 0, in).status();

    absl::InlinedVector<unsigned char*, 8> outs(n, nullptr);
    for (int k = 0; k < n; ++k) {
      if (!ctx.output_wanted(k)) continue;
      Shape s = in;
      s[axis] = split[k];
      INFERD_ASSIGN_OR_RETURN(Tensor * t, ctx.MakeOutputTensor(k, x->dtype(), s));
      outs[k] = static_cast<unsigned char*>(t->raw_mutable_data());
    }
    const int64_t outer = in.SizeBetween(0, axis);
    const size_t inner = static_cast<size_t>(in.SizeFrom(axis + 1)) * elem;
    const size_t row = static_cast<size_t>(dim) * inner;
    if (outer == 0 || row == 0) return absl::OkStatus();
    const auto* src = static_cast<const unsigned char*>(x->raw_data());
    ctx.threads().ParallelFor(
        outer, std::max<int64_t>(1, kMoveGrainBytes / static_cast<int64_t>(row)),
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o) {
            size_t start = 0;
            for (int k = 0; k < n; ++k) {
              const size_t block = static_cast<size_t>(split[k]) * inner;
              if (outs[k] != nullptr && block > 0) {
                std::memcpy(outs[k] + o * block, src + o * row + start, block);
              }
              start += block;
            }
          }
        });
    return absl::OkStatus();
  }

 private:
  explicit SplitKernel(const KernelInfo& info)
      : node_(info),
        axis_(info.GetInt("axis", 0)),
        split_input_(info.opset() >= 13 || info.opset() == 1),
        split_attr_(info.GetInts("split")),
        num_outputs_attr_(info.opset() >= 18 ? info.GetInt("num_outputs", 0) : 0),
        num_outputs_(info.num_outputs()) {}

  const NodeLabel node_;
  const int64_t axis_;
  const bool split_input_;
  const std::vector<int64_t> split_attr_;
  const int64_t num_outputs_attr_;  // opset 18; 0 when absent
  const int num_outputs_;
};

}  // namespace

std::vector<engine::KernelDef> SplitKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "Split", 1, 1, types, FactoryOf<SplitKernel>()),
          CpuDef(engine::kOnnxDomain, "Split", 2, 12, types, FactoryOf<SplitKernel>()),
          CpuDef(engine::kOnnxDomain, "Split", 13, 17, types, FactoryOf<SplitKernel>()),
          CpuDef(engine::kOnnxDomain, "Split", 18, kMaxOpset, types, FactoryOf<SplitKernel>())};
}

}  // namespace inferd::kernels::cpu

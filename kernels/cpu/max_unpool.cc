// MaxUnpool (opsets 9 and 11), own code, every fixed-size element type: the partial inverse of
// MaxPool. The indices I (MaxPool's Indices output) count over the whole of the unpooled shape
//   (in - 1) * stride - pad_begin - pad_end + kernel   per spatial dim;
// that tensor is zero everywhere but at I, where it takes X: U.flat[I[i]] = X.flat[i]. Y is U,
// or, when output_shape (the optional third input) is given, U in the leading corner of a
// zero tensor of that shape (each dim at least U's), as the ONNX reference and its node test do.
// Indices outside U are refused. Elements are moved as bytes, so one loop serves every type.
// Immutable after creation: thread-safe.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/checked_math.h"
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

class MaxUnpoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<MaxUnpoolKernel>> Create(const KernelInfo& info) {
    std::vector<int64_t> kernel = info.GetInts("kernel_shape");
    if (kernel.empty()) return info.Error("kernel_shape is required");
    const size_t k = kernel.size();
    std::vector<int64_t> pads = info.GetInts("pads");
    std::vector<int64_t> strides = info.GetInts("strides");
    if (pads.empty()) pads.assign(2 * k, 0);
    if (strides.empty()) strides.assign(k, 1);
    if (pads.size() != 2 * k || strides.size() != k) {
      return info.Error(absl::StrCat("pads must hold ", 2 * k, " values and strides ", k,
                                     " (kernel_shape has ", k, "), got ", pads.size(), " and ",
                                     strides.size()));
    }
    for (size_t i = 0; i < k; ++i) {
      if (kernel[i] <= 0 || strides[i] <= 0 || pads[i] < 0 || pads[i + k] < 0) {
        return info.Error(absl::StrCat(
            "kernel_shape and strides must be > 0 and pads >= 0, got [", absl::StrJoin(kernel, ","),
            "], [", absl::StrJoin(strides, ","), "], [", absl::StrJoin(pads, ","), "]"));
      }
    }
    return std::unique_ptr<MaxUnpoolKernel>(
        new MaxUnpoolKernel(info, std::move(kernel), std::move(pads), std::move(strides)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* ind, RequiredInput(ctx, 1, node_));
    const Shape& xs = x->shape();
    const size_t k = kernel_.size();
    if (xs.rank() != k + 2) {
      return node_.InvalidArgument(
          absl::StrCat("X must be [N, C, ", k, " spatial dims], got ", xs.ToString()));
    }
    if (ind->shape() != xs) {
      return node_.InvalidArgument(
          absl::StrCat("I must have X's shape ", xs.ToString(), ", got ", ind->shape().ToString()));
    }
    INFERD_RETURN_IF_ERROR(CheckType(*ind, DataType::kInt64, 1, node_));
    // The unpooled shape the indices count over.
    std::vector<int64_t> unpooled(xs.dims().begin(), xs.dims().end());
    for (size_t i = 0; i < k; ++i) {
      // (in - 1) * stride - pads + kernel, overflow-checked.
      const std::optional<int64_t> a = inferd::CheckedMul<int64_t>(xs[i + 2] - 1, strides_[i]);
      const std::optional<int64_t> b =
          a ? inferd::CheckedAdd<int64_t>(*a, kernel_[i] - pads_[i] - pads_[i + k]) : std::nullopt;
      if (!b) return node_.InvalidArgument("the output size overflows");
      if (*b < 0) {
        return node_.InvalidArgument(
            absl::StrCat("spatial dim ", i, " of the output would be ", *b, " (< 0)"));
      }
      unpooled[i + 2] = xs[i + 2] == 0 ? 0 : *b;
    }
    std::vector<int64_t> out = unpooled;
    const Tensor* shape_in = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr;
    if (shape_in != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*shape_in, DataType::kInt64, 2, node_));
      if (shape_in->NumElements() != static_cast<int64_t>(k + 2)) {
        return node_.InvalidArgument(absl::StrCat("output_shape must hold ", k + 2, " values, got ",
                                                  shape_in->NumElements()));
      }
      const int64_t* s = shape_in->data<int64_t>();
      if (s[0] != xs[0] || s[1] != xs[1]) {
        return node_.InvalidArgument("output_shape must keep X's N and C");
      }
      for (size_t i = 2; i < k + 2; ++i) {
        if (s[i] < unpooled[i]) {
          return node_.InvalidArgument(
              absl::StrCat("output_shape ", Shape(absl::MakeConstSpan(s, k + 2)).ToString(),
                           " is smaller than the unpooled shape ", Shape(unpooled).ToString()));
        }
        out[i] = s[i];
      }
    }
    const std::optional<int64_t> total = inferd::CheckedProduct(out);
    if (!total || !inferd::CheckedMul<int64_t>(*total, 16)) {
      return node_.InvalidArgument("the output size overflows");
    }
    const int64_t limit = *inferd::CheckedProduct(unpooled);
    const int64_t* id = ind->data<int64_t>();
    const int64_t n = x->NumElements();
    for (int64_t i = 0; i < n; ++i) {
      if (id[i] < 0 || id[i] >= limit) {
        return node_.InvalidArgument(
            absl::StrCat("I[", i, "] = ", id[i], " is outside the unpooled tensor (", limit,
                         " elements, shape ", Shape(unpooled).ToString(), ")"));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), Shape(out)));
    const size_t es = engine::ElementSize(x->dtype());
    char* yd = static_cast<char*>(y->raw_mutable_data());
    const char* xd = static_cast<const char*>(x->raw_data());
    if (y->bytes() > 0) std::memset(yd, 0, y->bytes());
    const bool same = out == unpooled;
    for (int64_t i = 0; i < n; ++i) {
      int64_t at = id[i];
      if (!same) {
        // Re-encode the index's coordinates in the unpooled shape into Y's.
        int64_t rest = id[i], stride = 1;
        at = 0;
        for (size_t d = out.size(); d-- > 0;) {
          at += (rest % unpooled[d]) * stride;
          rest /= unpooled[d];
          stride *= out[d];
        }
      }
      std::memcpy(yd + at * es, xd + i * es, es);
    }
    return absl::OkStatus();
  }

 private:
  MaxUnpoolKernel(const KernelInfo& info, std::vector<int64_t> kernel, std::vector<int64_t> pads,
                  std::vector<int64_t> strides)
      : node_(info),
        kernel_(std::move(kernel)),
        pads_(std::move(pads)),
        strides_(std::move(strides)) {}

  const NodeLabel node_;
  const std::vector<int64_t> kernel_, pads_, strides_;
};

}  // namespace

std::vector<engine::KernelDef> MaxUnpoolKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "MaxUnpool", 9, kMaxOpset, FixedSizeTypes(),
                 FactoryOf<MaxUnpoolKernel>())};
}

}  // namespace inferd::kernels::cpu

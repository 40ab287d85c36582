// The classification losses (own code), float and double, opsets 12 on:
//   NegativeLogLikelihoodLoss(input [N, C, d...], target [N, d...] int32/int64, weight [C]?)
//     loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
//   SoftmaxCrossEntropyLoss(scores [N, C, d...], labels [N, d...], weights [C]?)
//     the same on log_softmax(scores) over C; optional second output log_prob (scores' shape).
// Attributes: reduction "none" (output shaped like target), "sum", "mean" (default: the sum
// divided by the sum of the applied weights, 1 each without `weight`); ignore_index: positions
// whose target equals it add 0 and weigh 0. A target outside [0, C) that is not ignore_index is
// an INVALID_ARGUMENT. Sums are accumulated in double; log-softmax is computed per position
// across C on the fly (max, then log of the sum of exponentials), so nothing is allocated beyond
// the outputs. Immutable after creation: thread-safe.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using LossTypes = TypeList<float, double>;

enum class Reduction { kNone, kSum, kMean };

class LossKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<LossKernel>> Create(const KernelInfo& info) {
    const std::string reduction = info.GetString("reduction", "mean");
    Reduction r;
    if (reduction == "none") {
      r = Reduction::kNone;
    } else if (reduction == "sum") {
      r = Reduction::kSum;
    } else if (reduction == "mean") {
      r = Reduction::kMean;
    } else {
      return info.Error(
          absl::StrCat("reduction must be 'none', 'sum' or 'mean', got '", reduction, "'"));
    }
    std::optional<int64_t> ignore;
    if (info.HasAttribute("ignore_index")) ignore = info.GetInt("ignore_index", 0);
    const bool softmax = info.op_type() == "SoftmaxCrossEntropyLoss";
    return std::unique_ptr<LossKernel>(new LossKernel(info, r, ignore, softmax));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* target, RequiredInput(ctx, 1, node_));
    const Tensor* weight = ctx.num_inputs() > 2 ? ctx.input(2) : nullptr;
    const Shape& xs = x->shape();
    if (xs.rank() < 2) {
      return node_.InvalidArgument(
          absl::StrCat("input must be [N, C, d1, ...], got ", xs.ToString()));
    }
    // target is x's shape without axis 1.
    std::vector<int64_t> tdims{xs[0]};
    for (int i = 2; i < xs.rank(); ++i) tdims.push_back(xs[i]);
    const Shape expected_target(tdims);
    if (target->shape() != expected_target) {
      return node_.InvalidArgument(
          absl::StrCat("target must have shape ", expected_target.ToString(), " for input ",
                       xs.ToString(), ", got ", target->shape().ToString()));
    }
    if (target->dtype() != DataType::kInt32 && target->dtype() != DataType::kInt64) {
      return node_.InvalidArgument(absl::StrCat("target must be int32 or int64, got ",
                                                engine::DataTypeName(target->dtype())));
    }
    const int64_t classes = xs[1];
    if (weight != nullptr) {
      INFERD_RETURN_IF_ERROR(CheckType(*weight, x->dtype(), 2, node_));
      if (weight->shape().rank() != 1 || weight->shape()[0] != classes) {
        return node_.InvalidArgument(absl::StrCat("weight must have shape [", classes, "], got ",
                                                  weight->shape().ToString()));
      }
    }
    const Shape out_shape = reduction_ == Reduction::kNone ? expected_target : Shape({});
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    Tensor* log_prob = nullptr;
    if (softmax_ && ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(log_prob, ctx.MakeOutputTensor(1, x->dtype(), xs));
    }
    return Dispatch(LossTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (target->dtype() == DataType::kInt32) {
        return Run<T, int32_t>(*x, *target, weight, *out, log_prob);
      }
      return Run<T, int64_t>(*x, *target, weight, *out, log_prob);
    });
  }

 private:
  LossKernel(const KernelInfo& info, Reduction reduction, std::optional<int64_t> ignore,
             bool softmax)
      : node_(info), reduction_(reduction), ignore_(ignore), softmax_(softmax) {}

  template <typename T, typename I>
  absl::Status Run(const Tensor& x, const Tensor& target, const Tensor* weight, Tensor& out,
                   Tensor* log_prob) const {
    const Shape& xs = x.shape();
    const int64_t n = xs[0], classes = xs[1], inner = xs.SizeFrom(2);
    const T* in = x.data<T>();
    const I* t = target.data<I>();
    const T* w = weight != nullptr ? weight->data<T>() : nullptr;
    T* lp = log_prob != nullptr ? log_prob->mutable_data<T>() : nullptr;
    T* y = out.mutable_data<T>();
    // pass 1 (SoftmaxCrossEntropyLoss with log_prob wanted): the whole log_softmax.
    if (lp != nullptr) {
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t d = 0; d < inner; ++d) {
          const T* row = in + b * classes * inner + d;
          const double lse = LogSumExp(row, classes, inner);
          T* dst = lp + b * classes * inner + d;
          for (int64_t c = 0; c < classes; ++c) {
            dst[c * inner] = static_cast<T>(static_cast<double>(row[c * inner]) - lse);
          }
        }
      }
    }
    // pass 2: per position loss, then the reduction.
    double sum = 0, weight_sum = 0;
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t d = 0; d < inner; ++d) {
        const int64_t pos = b * inner + d;
        const int64_t label = static_cast<int64_t>(t[pos]);
        double loss = 0, wt = 0;
        if (!(ignore_.has_value() && label == *ignore_)) {
          if (label < 0 || label >= classes) {
            return node_.InvalidArgument(absl::StrCat("target ", label, " at position ", pos,
                                                      " is outside [0, ", classes, ")"));
          }
          wt = w != nullptr ? static_cast<double>(w[label]) : 1.0;
          const T* row = in + b * classes * inner + d;
          double value = static_cast<double>(row[label * inner]);
          if (softmax_) value -= LogSumExp(row, classes, inner);
          loss = -value * wt;
        }
        if (reduction_ == Reduction::kNone) {
          y[pos] = static_cast<T>(loss);
        } else {
          sum += loss;
          weight_sum += wt;
        }
      }
    }
    if (reduction_ == Reduction::kSum) y[0] = static_cast<T>(sum);
    if (reduction_ == Reduction::kMean) {
      // Without weights or ignore_index the divisor is the number of positions, as in numpy's
      // mean; with them, the sum of the applied weights (0 / 0 is NaN, as in the reference).
      y[0] = static_cast<T>(sum / weight_sum);
    }
    return absl::OkStatus();
  }

  // log(sum_c e^row[c * stride]), stable.
  template <typename T>
  static double LogSumExp(const T* row, int64_t classes, int64_t stride) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) max = std::max(max, static_cast<double>(row[c * stride]));
    double s = 0;
    for (int64_t c = 0; c < classes; ++c) s += std::exp(static_cast<double>(row[c * stride]) - max);
    return max + std::log(s);
  }

  const NodeLabel node_;
  const Reduction reduction_;
  const std::optional<int64_t> ignore_;
  const bool softmax_;
};

}  // namespace

std::vector<engine::KernelDef> LossKernelDefs() {
  const auto types = TypesOf(LossTypes{});
  return {CpuDef(engine::kOnnxDomain, "NegativeLogLikelihoodLoss", 12, kMaxOpset, types,
                 FactoryOf<LossKernel>()),
          CpuDef(engine::kOnnxDomain, "SoftmaxCrossEntropyLoss", 12, kMaxOpset, types,
                 FactoryOf<LossKernel>())};
}

}  // namespace inferd::kernels::cpu

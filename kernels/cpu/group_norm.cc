// GroupNormalization (opsets 18 and 21), float32 and float64: X [N, C, spatial...] in num_groups
// groups of C / num_groups channels; each (n, group) is normalized by its own mean and variance
// (over its channels and spatial positions, computed in double), then scaled and shifted.
// Opset 18 has one scale and bias per group ([num_groups]); opset 21 one per channel ([C]), and
// stash_type (the precision of the statistics: always at least float32 here, so it only has to
// be 1, its default, or the input's own float type).
// Parallel over (n, group); each pass over a group reads it twice (statistics, then output).
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
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

using GroupNormTypes = TypeList<float, double>;

class GroupNormKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<GroupNormKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t groups, info.RequireInt("num_groups"));
    if (groups < 1) return info.Error(absl::StrCat("num_groups must be >= 1, got ", groups));
    const float epsilon = info.GetFloat("epsilon", 1e-5f);
    if (!(epsilon >= 0)) return info.Error("epsilon must be >= 0");
    return std::unique_ptr<GroupNormKernel>(new GroupNormKernel(info, groups, epsilon));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* scale, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* bias, RequiredInput(ctx, 2, node_));
    const Shape& shape = x->shape();
    if (shape.rank() < 2) {
      return node_.InvalidArgument(absl::StrCat("X must be [N, C, ...], got ", shape.ToString()));
    }
    const int64_t channels = shape[1];
    if (channels % groups_ != 0) {
      return node_.InvalidArgument(
          absl::StrCat("C = ", channels, " is not a multiple of num_groups ", groups_));
    }
    const int64_t per_param = per_channel_ ? channels : groups_;
    for (const Tensor* t : {scale, bias}) {
      INFERD_RETURN_IF_ERROR(CheckType(*t, x->dtype(), t == scale ? 1 : 2, node_));
      if (t->NumElements() != per_param || t->shape().rank() != 1) {
        return node_.InvalidArgument(
            absl::StrCat(t == scale ? "scale" : "bias", " must have shape [", per_param, "] (",
                         per_channel_ ? "one per channel, opset 21" : "one per group, opset 18",
                         "), got ", t->shape().ToString()));
      }
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(GroupNormTypes{}, x->dtype(), node_, [&](auto tag) {
      Run<typename decltype(tag)::type>(*x, *scale, *bias, *y, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  GroupNormKernel(const KernelInfo& info, int64_t groups, float epsilon)
      : node_(info), groups_(groups), epsilon_(epsilon), per_channel_(info.opset() >= 21) {}

  template <typename T>
  void Run(const Tensor& x, const Tensor& scale, const Tensor& bias, Tensor& y,
           engine::ThreadPool& pool) const {
    const Shape& shape = x.shape();
    const int64_t channels = shape[1], per_group = channels / groups_;
    const int64_t spatial = shape.SizeFrom(2), group_size = per_group * spatial;
    const T* in = x.data<T>();
    const T* s = scale.data<T>();
    const T* b = bias.data<T>();
    T* out = y.mutable_data<T>();
    pool.ParallelFor(shape[0] * groups_,
                     std::max<int64_t>(1, 16384 / std::max<int64_t>(1, group_size)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t ng = begin; ng < end; ++ng) {
                         const int64_t g = ng % groups_;
                         const T* src = in + ng * group_size;
                         T* dst = out + ng * group_size;
                         double sum = 0, sq = 0;
                         for (int64_t i = 0; i < group_size; ++i) sum += src[i];
                         const double mean = sum / static_cast<double>(group_size);
                         for (int64_t i = 0; i < group_size; ++i) {
                           const double d = src[i] - mean;
                           sq += d * d;
                         }
                         const double inv = 1.0 / std::sqrt(sq / static_cast<double>(group_size) +
                                                            static_cast<double>(epsilon_));
                         for (int64_t c = 0; c < per_group; ++c) {
                           const int64_t k = per_channel_ ? g * per_group + c : g;
                           const T a = static_cast<T>(inv * static_cast<double>(s[k]));
                           const T shift = static_cast<T>(static_cast<double>(b[k]) -
                                                          mean * inv * static_cast<double>(s[k]));
                           const T* xs = src + c * spatial;
                           T* ys = dst + c * spatial;
#pragma omp simd
                           for (int64_t i = 0; i < spatial; ++i) ys[i] = xs[i] * a + shift;
                         }
                       }
                     });
  }

  const NodeLabel node_;
  const int64_t groups_;
  const float epsilon_;
  const bool per_channel_;  // opset 21: scale and bias per channel
};

}  // namespace

std::vector<engine::KernelDef> GroupNormKernelDefs() {
  const std::vector<DataType> types = TypesOf(GroupNormTypes{});
  return {CpuDef(engine::kOnnxDomain, "GroupNormalization", 18, 20, types,
                 FactoryOf<GroupNormKernel>()),
          CpuDef(engine::kOnnxDomain, "GroupNormalization", 21, kMaxOpset, types,
                 FactoryOf<GroupNormKernel>())};
}

}  // namespace inferd::kernels::cpu

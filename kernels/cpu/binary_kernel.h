// BinaryKernel<Op, Types, Out>: the kernel of the plain binary elementwise operators (Add, Sub,
// Mul, Div; Equal, Less, ..., And, Or, Xor): out = Op(a, b) with numpy broadcasting (broadcast.h),
// opsets 1-6's broadcast/axis attributes included (LegacyBroadcast). a and b have one type T from
// Types; out has type T, or Out when Out is not void (bool for comparisons). Internal to
// //kernels/cpu. Immutable after creation; Compute is thread-safe.
//
// Example:
//   FactoryOf<BinaryKernel<AddOp, NumericTypes>>()
//   FactoryOf<BinaryKernel<LessOp, CompareTypes, bool>>()
#ifndef INFERD_KERNELS_CPU_BINARY_KERNEL_H_
#define INFERD_KERNELS_CPU_BINARY_KERNEL_H_

#include <memory>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

template <typename Op, typename Types, typename Out = void>
class BinaryKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BinaryKernel>> Create(const engine::KernelInfo& info) {
    return std::unique_ptr<BinaryKernel>(new BinaryKernel(info, LegacyBroadcast::FromInfo(info)));
  }

  absl::Status Compute(engine::KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* a, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* b, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*b, a->dtype(), 1, node_));
    INFERD_ASSIGN_OR_RETURN(engine::Shape b_shape, legacy_.BShape(a->shape(), b->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(engine::Shape out_shape, BroadcastShapes(a->shape(), b_shape, node_));
    engine::DataType out_type = a->dtype();
    if constexpr (!std::is_void_v<Out>) out_type = kTypeOf<Out>;
    INFERD_ASSIGN_OR_RETURN(engine::Tensor * out, ctx.MakeOutputTensor(0, out_type, out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Types{}, a->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using O = std::conditional_t<std::is_void_v<Out>, T, Out>;
      BinaryBroadcast(a->data<T>(), a->shape(), b->data<T>(), b_shape, out->mutable_data<O>(),
                      out_shape, ctx.threads(), Op());
      return absl::OkStatus();
    });
  }

 private:
  BinaryKernel(const engine::KernelInfo& info, LegacyBroadcast legacy)
      : node_(info), legacy_(legacy) {}

  const NodeLabel node_;
  const LegacyBroadcast legacy_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_BINARY_KERNEL_H_

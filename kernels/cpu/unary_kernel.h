// The kernel template behind the unary elementwise ops (internal to //kernels/cpu:unary_kernels):
// y = f(x) elementwise, same shape, one vectorized loop per thread chunk. An op is a functor
//   struct Fn {
//     template <typename T> using Out = T;          // output element type for input type T
//     static absl::StatusOr<Fn> FromInfo(const KernelInfo&);  // attributes
//     template <typename T> Out<T> operator()(T x) const;
//   };
// used as UnaryKernel<Fn, TypeList<...>>. Kernels are immutable after creation: thread-safe.
#ifndef INFERD_KERNELS_CPU_UNARY_KERNEL_H_
#define INFERD_KERNELS_CPU_UNARY_KERNEL_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {

// Base of functors without attributes whose output type is the input type.
template <typename Self>
struct SimpleUnary {
  template <typename T>
  using Out = T;
  static absl::StatusOr<Self> FromInfo(const engine::KernelInfo&) { return Self(); }
};

template <typename Fn, typename Types>
class UnaryKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<UnaryKernel>> Create(const engine::KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(Fn fn, Fn::FromInfo(info));
    return std::unique_ptr<UnaryKernel>(new UnaryKernel(info, fn));
  }

  absl::Status Compute(engine::KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const engine::Tensor* x, RequiredInput(ctx, 0, node_));
    return Dispatch(Types{}, x->dtype(), node_, [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using O = typename Fn::template Out<T>;
      INFERD_ASSIGN_OR_RETURN(engine::Tensor * y, ctx.MakeOutputTensor(0, kTypeOf<O>, x->shape()));
      UnaryMap(x->data<T>(), y->mutable_data<O>(), x->NumElements(), ctx.threads(), fn_);
      return absl::OkStatus();
    });
  }

 private:
  UnaryKernel(const engine::KernelInfo& info, Fn fn) : node_(info), fn_(fn) {}

  const NodeLabel node_;
  const Fn fn_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_UNARY_KERNEL_H_

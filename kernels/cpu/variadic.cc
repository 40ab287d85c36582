// Variadic elementwise ops over one or more inputs with numpy multidirectional broadcasting:
//   Sum, Mean   float, double, float16 (float16 computed in float, rounded per step as numpy does)
//   Max, Min    float, double, float16 and every integer type; NaN propagates (numpy.maximum)
// Opsets 1 (equal shapes before 8, a special case of broadcasting) to 17. The first two inputs make
// the output in one pass; each further input is folded in place. One input is an alias of it.
#include <cstdint>
#include <memory>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using SumTypes = TypeList<float, double, Float16>;
using MinMaxTypes = TypeList<float, double, Float16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                             uint16_t, uint32_t, uint64_t>;

struct SumOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, Float16>) {
      return Float16::From(x.ToFloat() + y.ToFloat());
    } else {
      return x + y;
    }
  }
};

struct MaxOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, Float16>) {
      const float a = x.ToFloat(), b = y.ToFloat();
      return (a > b || a != a) ? x : y;
    } else {
      return (x > y || x != x) ? x : y;  // NaN in either input gives NaN
    }
  }
};

struct MinOp {
  template <typename T>
  T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, Float16>) {
      const float a = x.ToFloat(), b = y.ToFloat();
      return (a < b || a != a) ? x : y;
    } else {
      return (x < y || x != x) ? x : y;
    }
  }
};

template <typename Op, typename Types, bool kMean = false>
class VariadicKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<VariadicKernel>> Create(const KernelInfo& info) {
    if (info.num_inputs() < 1) return info.Error("at least one input is required");
    return std::unique_ptr<VariadicKernel>(new VariadicKernel(info, info.num_inputs() == 1));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (single_) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    const int n = ctx.num_inputs();
    if (n < 1) return node_.InvalidArgument("at least one input is required");
    absl::InlinedVector<const Tensor*, 4> in(n);
    INFERD_ASSIGN_OR_RETURN(in[0], RequiredInput(ctx, 0, node_));
    Shape out_shape = in[0]->shape();
    for (int i = 1; i < n; ++i) {
      INFERD_ASSIGN_OR_RETURN(in[i], RequiredInput(ctx, i, node_));
      INFERD_RETURN_IF_ERROR(CheckType(*in[i], in[0]->dtype(), i, node_));
      INFERD_ASSIGN_OR_RETURN(out_shape, BroadcastShapes(out_shape, in[i]->shape(), node_));
    }
    if (n == 1 && single_) return ctx.MakeOutputAlias(0, 0, out_shape).status();
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, in[0]->dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Types{}, in[0]->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = out->mutable_data<T>();
      engine::ThreadPool& pool = ctx.threads();
      if (n == 1) {
        UnaryMap(in[0]->data<T>(), y, out->NumElements(), pool, [](T v) { return v; });
      } else {
        BinaryBroadcast(in[0]->data<T>(), in[0]->shape(), in[1]->data<T>(), in[1]->shape(), y,
                        out_shape, pool, Op());
      }
      for (int i = 2; i < n; ++i) {  // in place: element k reads and writes y[k] only
        BinaryBroadcast(static_cast<const T*>(y), out_shape, in[i]->data<T>(), in[i]->shape(), y,
                        out_shape, pool, Op());
      }
      if constexpr (kMean) {
        if (n > 1) {
          if constexpr (std::is_same_v<T, Float16>) {
            const float count = static_cast<float>(n);
            UnaryMap(static_cast<const T*>(y), y, out->NumElements(), pool,
                     [=](T v) { return Float16::From(v.ToFloat() / count); });
          } else {
            const T count = static_cast<T>(n);
            UnaryMap(static_cast<const T*>(y), y, out->NumElements(), pool,
                     [=](T v) { return v / count; });
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  VariadicKernel(const KernelInfo& info, bool single) : node_(info), single_(single) {}

  const NodeLabel node_;
  const bool single_;  // one input at load: the output is an alias of it
};

}  // namespace

std::vector<engine::KernelDef> VariadicKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Sum", 1, kMaxOpset, TypesOf(SumTypes{}),
                 FactoryOf<VariadicKernel<SumOp, SumTypes>>()),
          CpuDef(engine::kOnnxDomain, "Mean", 1, kMaxOpset, TypesOf(SumTypes{}),
                 FactoryOf<VariadicKernel<SumOp, SumTypes, true>>()),
          CpuDef(engine::kOnnxDomain, "Max", 1, kMaxOpset, TypesOf(MinMaxTypes{}),
                 FactoryOf<VariadicKernel<MaxOp, MinMaxTypes>>()),
          CpuDef(engine::kOnnxDomain, "Min", 1, kMaxOpset, TypesOf(MinMaxTypes{}),
                 FactoryOf<VariadicKernel<MinOp, MinMaxTypes>>())};
}

}  // namespace inferd::kernels::cpu

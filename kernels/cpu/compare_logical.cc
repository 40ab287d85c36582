// Comparison, logic and selection with numpy multidirectional broadcasting (broadcast.h):
//   Equal, Less, LessOrEqual, Greater, GreaterOrEqual  float, double, every integer type and bool
//                                                      -> bool (NaN compares unequal)
//   And, Or, Xor                                       bool -> bool
//   Where(cond, X, Y)                                  cond bool; X, Y any fixed-size type,
//                                                      selected by element size; three-way
//                                                      broadcasting
// Opsets 1 (LessOrEqual/GreaterOrEqual 12, Where 9) to 17; later versions only added types;
// opsets 1-6 take the legacy broadcast/axis attributes (LegacyBroadcast, broadcast.h).
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/kernel.h"
#include "kernels/cpu/binary_kernel.h"
#include "kernels/cpu/broadcast.h"
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

using CompareTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                              uint32_t, uint64_t, bool>;
using BoolTypes = TypeList<bool>;

struct EqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x == y;
  }
};
struct LessOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x < y;
  }
};
struct LessOrEqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x <= y;
  }
};
struct GreaterOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x > y;
  }
};
struct GreaterOrEqualOp {
  template <typename T>
  bool operator()(T x, T y) const {
    return x >= y;
  }
};
struct AndOp {
  bool operator()(bool x, bool y) const { return x && y; }
};
struct OrOp {
  bool operator()(bool x, bool y) const { return x || y; }
};
struct XorOp {
  bool operator()(bool x, bool y) const { return x != y; }
};

// ---- Where ----

// out[k] = c[k] ? x[k] : y[k] over one run, each input advancing (true) or repeating (false).
template <bool kC, bool kX, bool kY, typename T>
void WhereRun(const bool* c, const T* x, const T* y, T* out, int64_t n) {
#pragma omp simd
  for (int64_t k = 0; k < n; ++k) out[k] = c[kC ? k : 0] ? x[kX ? k : 0] : y[kY ? k : 0];
}

template <typename T>
void WhereBroadcast(const BroadcastPlan<3>& plan, const bool* c, const T* x, const T* y, T* out,
                    engine::ThreadPool& pool) {
  using RunFn = void (*)(const bool*, const T*, const T*, T*, int64_t);
  static constexpr RunFn kRuns[8] = {
      WhereRun<false, false, false, T>, WhereRun<false, false, true, T>,
      WhereRun<false, true, false, T>,  WhereRun<false, true, true, T>,
      WhereRun<true, false, false, T>,  WhereRun<true, false, true, T>,
      WhereRun<true, true, false, T>,   WhereRun<true, true, true, T>};
  const RunFn run = kRuns[(plan.contiguous(0) ? 4 : 0) | (plan.contiguous(1) ? 2 : 0) |
                          (plan.contiguous(2) ? 1 : 0)];
  ForEachRun<3>(plan, pool, [&](const std::array<int64_t, 3>& off, int64_t out_off, int64_t len) {
    run(c + off[0], x + off[1], y + off[2], out + out_off, len);
  });
}

class WhereKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<WhereKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<WhereKernel>(new WhereKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* c, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* y, RequiredInput(ctx, 2, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*c, DataType::kBool, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*y, x->dtype(), 2, node_));
    INFERD_ASSIGN_OR_RETURN(Shape cx, BroadcastShapes(c->shape(), x->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(cx, y->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    const BroadcastPlan<3> plan =
        MakeBroadcastPlan<3>({&c->shape(), &x->shape(), &y->shape()}, out_shape);
    const bool* cond = c->data<bool>();
    // Selection moves bytes: any element type of the same size is the same work.
    switch (engine::ElementSize(x->dtype())) {
      case 1:
        WhereBroadcast(plan, cond, x->data<uint8_t>(), y->data<uint8_t>(),
                       out->mutable_data<uint8_t>(), ctx.threads());
        break;
      case 2:
        WhereBroadcast(plan, cond, x->data<uint16_t>(), y->data<uint16_t>(),
                       out->mutable_data<uint16_t>(), ctx.threads());
        break;
      case 4:
        WhereBroadcast(plan, cond, x->data<uint32_t>(), y->data<uint32_t>(),
                       out->mutable_data<uint32_t>(), ctx.threads());
        break;
      case 8:
        WhereBroadcast(plan, cond, x->data<uint64_t>(), y->data<uint64_t>(),
                       out->mutable_data<uint64_t>(), ctx.threads());
        break;
      default:
        return node_.Unimplemented(
            absl::StrCat("element type ", engine::DataTypeName(x->dtype()), " is not supported"));
    }
    return absl::OkStatus();
  }

 private:
  explicit WhereKernel(const KernelInfo& info) : node_(info) {}
  const NodeLabel node_;
};

template <typename Op, typename Types>
engine::KernelDef Def(const char* op, int since) {
  return CpuDef(engine::kOnnxDomain, op, since, kMaxOpset, TypesOf(Types{}),
                FactoryOf<BinaryKernel<Op, Types, bool>>());
}

}  // namespace

std::vector<engine::KernelDef> CompareLogicalKernelDefs() {
  engine::KernelDef where = CpuDef(engine::kOnnxDomain, "Where", 9, kMaxOpset, FixedSizeTypes(),
                                   FactoryOf<WhereKernel>());
  where.type_input = 1;  // keyed on X: the condition is always bool
  return {Def<EqualOp, CompareTypes>("Equal", 1),
          Def<LessOp, CompareTypes>("Less", 1),
          Def<LessOrEqualOp, CompareTypes>("LessOrEqual", 12),
          Def<GreaterOp, CompareTypes>("Greater", 1),
          Def<GreaterOrEqualOp, CompareTypes>("GreaterOrEqual", 12),
          Def<AndOp, BoolTypes>("And", 1),
          Def<OrOp, BoolTypes>("Or", 1),
          Def<XorOp, BoolTypes>("Xor", 1),
          std::move(where)};
}

}  // namespace inferd::kernels::cpu

// Bitwise binary ops with numpy broadcasting (own code, broadcast.h's loops):
//   BitwiseAnd, BitwiseOr, BitwiseXor   every integer type (opset 18)
//   BitShift      direction "LEFT" / "RIGHT", unsigned integer types (opset 11); a shift by the
//                 type's width or more gives 0 (C leaves it undefined; numpy gives 0).
// BitwiseNot is unary and lives in unary_tail.cc. Immutable after creation: thread-safe.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "kernels/cpu/binary_kernel.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

using IntegerTypes =
    TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

struct AndOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x & y);
  }
};
struct OrOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x | y);
  }
};
struct XorOp {
  template <typename T>
  T operator()(T x, T y) const {
    return static_cast<T>(x ^ y);
  }
};

class BitShiftKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<BitShiftKernel>> Create(const KernelInfo& info) {
    const std::string direction = info.GetString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      return info.Error(absl::StrCat("direction must be 'LEFT' or 'RIGHT', got '", direction, "'"));
    }
    return std::unique_ptr<BitShiftKernel>(new BitShiftKernel(info, direction == "LEFT"));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* y, RequiredInput(ctx, 1, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*y, x->dtype(), 1, node_));
    INFERD_ASSIGN_OR_RETURN(engine::Shape out_shape,
                            BroadcastShapes(x->shape(), y->shape(), node_));
    INFERD_ASSIGN_OR_RETURN(Tensor * z, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (z->NumElements() == 0) return absl::OkStatus();
    return Dispatch(UnsignedTypes{}, x->dtype(), node_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr T kBits = static_cast<T>(sizeof(T) * 8);
      if (left_) {
        BinaryBroadcast(x->data<T>(), x->shape(), y->data<T>(), y->shape(), z->mutable_data<T>(),
                        out_shape, ctx.threads(),
                        [](T a, T s) { return s >= kBits ? T(0) : static_cast<T>(a << s); });
      } else {
        BinaryBroadcast(x->data<T>(), x->shape(), y->data<T>(), y->shape(), z->mutable_data<T>(),
                        out_shape, ctx.threads(),
                        [](T a, T s) { return s >= kBits ? T(0) : static_cast<T>(a >> s); });
      }
      return absl::OkStatus();
    });
  }

 private:
  BitShiftKernel(const KernelInfo& info, bool left) : node_(info), left_(left) {}

  const NodeLabel node_;
  const bool left_;
};

}  // namespace

std::vector<engine::KernelDef> BitwiseKernelDefs() {
  const auto ints = TypesOf(IntegerTypes{});
  return {CpuDef(engine::kOnnxDomain, "BitwiseAnd", 18, kMaxOpset, ints,
                 FactoryOf<BinaryKernel<AndOp, IntegerTypes>>()),
          CpuDef(engine::kOnnxDomain, "BitwiseOr", 18, kMaxOpset, ints,
                 FactoryOf<BinaryKernel<OrOp, IntegerTypes>>()),
          CpuDef(engine::kOnnxDomain, "BitwiseXor", 18, kMaxOpset, ints,
                 FactoryOf<BinaryKernel<XorOp, IntegerTypes>>()),
          CpuDef(engine::kOnnxDomain, "BitShift", 11, kMaxOpset, TypesOf(UnsignedTypes{}),
                 FactoryOf<BitShiftKernel>())};
}

}  // namespace inferd::kernels::cpu

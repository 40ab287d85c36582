// Cast (opsets 6-17, `to` attribute) and CastLike (15-17, the type of input 1) between float,
// double, float16, bfloat16, every integer type and bool. Conversions follow C++ (and numpy):
// float -> integer truncates toward zero (out-of-range values are the hardware's, as in numpy);
// anything -> bool is "!= 0" (NaN is true); float16 rounds to nearest even; bfloat16 truncates,
// as the ONNX reference does (there is no `saturate` before opset 19). Strings are UNIMPLEMENTED.
// A cast to the input's own type is an alias of the input.
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

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

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Tensor;

using CastTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t, bool>;

template <typename T>
inline constexpr bool kIs16BitFloat = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename To, typename From>
To Convert(From v) {
  if constexpr (kIs16BitFloat<From>) {
    return Convert<To>(v.ToFloat());
  } else if constexpr (kIs16BitFloat<To>) {
    return To::From(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

class CastKernel final : public engine::OpKernel {
 public:
  // Cast: the target is the `to` attribute.
  static absl::StatusOr<std::unique_ptr<CastKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t to, info.RequireInt("to"));
    const NodeLabel node(info);
    if (to == static_cast<int64_t>(DataType::kString)) {
      return node.Unimplemented("casts to string are not supported");
    }
    if (!engine::IsKnownDataType(static_cast<int32_t>(to)) ||
        !Supported(static_cast<DataType>(to))) {
      return node.Unimplemented(absl::StrCat("cast to element type ", to, " is not supported"));
    }
    return std::unique_ptr<CastKernel>(new CastKernel(info, static_cast<DataType>(to)));
  }

  // CastLike: the target is input 1's type (known at load, else read per run).
  static absl::StatusOr<std::unique_ptr<CastKernel>> CreateLike(const KernelInfo& info) {
    const DataType to = info.input(1).type;
    if (to == DataType::kString) {
      return NodeLabel(info).Unimplemented("casts to string are not supported");
    }
    return std::unique_ptr<CastKernel>(new CastKernel(info, to));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (alias_) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    DataType to = to_;
    if (to == DataType::kUndefined) {  // CastLike with input 1's type unknown at load
      INFERD_ASSIGN_OR_RETURN(const Tensor* like, RequiredInput(ctx, 1, node_));
      to = like->dtype();
    }
    if (alias_ && x->dtype() == to) return ctx.MakeOutputAlias(0, 0, x->shape()).status();
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, to, x->shape()));
    if (x->dtype() == to) {
      if (y->bytes() > 0) std::memcpy(y->raw_mutable_data(), x->raw_data(), y->bytes());
      return absl::OkStatus();
    }
    return Dispatch(CastTypes{}, x->dtype(), node_, [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      return Dispatch(CastTypes{}, to, node_, [&](auto to_tag) {
        using To = typename decltype(to_tag)::type;
        UnaryMap(x->data<From>(), y->mutable_data<To>(), x->NumElements(), ctx.threads(),
                 [](From v) { return Convert<To>(v); });
        return absl::OkStatus();
      });
    });
  }

 private:
  CastKernel(const KernelInfo& info, DataType to)
      : node_(info), to_(to), alias_(to != DataType::kUndefined && info.input(0).type == to) {}

  static bool Supported(DataType t) {
    for (DataType s : TypesOf(CastTypes{})) {
      if (s == t) return true;
    }
    return false;
  }

  const NodeLabel node_;
  const DataType to_;  // kUndefined: CastLike, read from input 1 per run
  const bool alias_;   // the input's type (known at load) is the target: a view
};

engine::KernelFactory CastLikeFactory() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<CastKernel> k, CastKernel::CreateLike(info));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  };
}

}  // namespace

std::vector<engine::KernelDef> CastKernelDefs() {
  const std::vector<DataType> types = TypesOf(CastTypes{});
  return {CpuDef(engine::kOnnxDomain, "Cast", 6, kMaxOpset, types, FactoryOf<CastKernel>()),
          CpuDef(engine::kOnnxDomain, "CastLike", 15, kMaxOpset, types, CastLikeFactory())};
}

}  // namespace inferd::kernels::cpu

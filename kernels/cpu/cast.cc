// Cast (opsets 6-17, `to` attribute) and CastLike (15-17, the type of input 1) between float,
// double, float16, bfloat16, every integer type and bool. Conversions follow C++ (and numpy):
// float -> integer truncates toward zero (out-of-range values are the hardware's, as in numpy);
// anything -> bool is "!= 0" (NaN is true); float16 rounds to nearest even; bfloat16 truncates,
// as the ONNX reference does (there is no `saturate` before opset 19). Strings are UNIMPLEMENTED.
// A cast to the input's own type is an alias of the input.
//
// The float8 types (opset 19) go through float32: to float8 rounds to nearest even and treats
// out-of-range values and infinities by the `saturate` attribute (engine/float8.h); from float8
// is exact. int4 / uint4 (opset 21; one per byte inside inferd) go through float32 too: to them
// rounds half to even and clamps to [-8, 7] / [0, 15], from them is exact.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/domain.h"
#include "engine/float8.h"
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

bool IsNarrow(DataType t) {
  return engine::IsFloat8(t) || t == DataType::kInt4 || t == DataType::kUint4;
}

// A float8 / 4-bit value (its byte) as float32.
float NarrowToFloat(uint8_t b, DataType t) {
  if (t == DataType::kInt4) return static_cast<int8_t>(b);
  if (t == DataType::kUint4) return b;
  return engine::Float8ToFloat(b, t);
}

uint8_t FloatToNarrow(float v, DataType t, bool saturate) {
  if (t == DataType::kInt4 || t == DataType::kUint4) {
    const float lo = t == DataType::kInt4 ? -8.0f : 0.0f, hi = t == DataType::kInt4 ? 7.0f : 15.0f;
    if (std::isnan(v)) return 0;  // no NaN in an integer type
    const float r = std::nearbyint(std::min(hi, std::max(lo, v)));
    return static_cast<uint8_t>(static_cast<int8_t>(r));
  }
  return engine::FloatToFloat8(v, t, saturate);
}

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

// CastTypes and the float8 / 4-bit types.
std::vector<DataType> AllTypes() {
  std::vector<DataType> types = TypesOf(CastTypes{});
  for (DataType t : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                     DataType::kFloat8E5M2FNUZ, DataType::kUint4, DataType::kInt4}) {
    types.push_back(t);
  }
  return types;
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
    if (IsNarrow(x->dtype()) || IsNarrow(to)) return CastNarrow(*x, to, ctx, *y);
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
      : node_(info),
        to_(to),
        alias_(to != DataType::kUndefined && info.input(0).type == to),
        saturate_(info.GetInt("saturate", 1) != 0) {}

  static bool Supported(DataType t) {
    for (DataType s : AllTypes()) {
      if (s == t) return true;
    }
    return false;
  }

  // A cast from or to a float8 / 4-bit type, through float32.
  absl::Status CastNarrow(const Tensor& x, DataType to, KernelContext& ctx, Tensor& y) const {
    const DataType from = x.dtype();
    const int64_t n = x.NumElements();
    const bool saturate = saturate_;
    if (IsNarrow(from) && IsNarrow(to)) {
      UnaryMap(x.data<uint8_t>(), y.mutable_data<uint8_t>(), n, ctx.threads(),
               [=](uint8_t b) { return FloatToNarrow(NarrowToFloat(b, from), to, saturate); });
      return absl::OkStatus();
    }
    if (IsNarrow(from)) {
      return Dispatch(CastTypes{}, to, node_, [&](auto to_tag) {
        using To = typename decltype(to_tag)::type;
        UnaryMap(x.data<uint8_t>(), y.mutable_data<To>(), n, ctx.threads(),
                 [=](uint8_t b) { return Convert<To>(NarrowToFloat(b, from)); });
        return absl::OkStatus();
      });
    }
    return Dispatch(CastTypes{}, from, node_, [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      UnaryMap(x.data<From>(), y.mutable_data<uint8_t>(), n, ctx.threads(), [=](From v) {
        return FloatToNarrow(Convert<float>(v), to, saturate);
      });
      return absl::OkStatus();
    });
  }

  const NodeLabel node_;
  const DataType to_;  // kUndefined: CastLike, read from input 1 per run
  const bool alias_;   // the input's type (known at load) is the target: a view
  const bool saturate_;  // opset 19: out-of-range values to float8 saturate (else NaN / inf)
};

engine::KernelFactory CastLikeFactory() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<CastKernel> k, CastKernel::CreateLike(info));
    return std::unique_ptr<engine::OpKernel>(std::move(k));
  };
}

}  // namespace

std::vector<engine::KernelDef> CastKernelDefs() {
  const std::vector<DataType> types = AllTypes();
  return {CpuDef(engine::kOnnxDomain, "Cast", 6, kMaxOpset, types, FactoryOf<CastKernel>()),
          CpuDef(engine::kOnnxDomain, "CastLike", 15, kMaxOpset, types, CastLikeFactory())};
}

}  // namespace inferd::kernels::cpu

// Cast (opsets 6-17, `to` attribute) and CastLike (15-17, the type of input 1) between float,
// double, float16, bfloat16, every integer type and bool. Conversions follow C++ (and numpy):
// float -> integer truncates toward zero (out-of-range values are the hardware's, as in numpy);
// anything -> bool is "!= 0" (NaN is true); float16 rounds to nearest even; bfloat16 truncates,
// as the ONNX reference does (there is no `saturate` before opset 19).
// Strings (docs/strings.md): numbers are written in the shortest form that reads back to the same
// value (std::to_chars: "0.039187793", "1e-05"), infinities and NaN as "INF", "-INF", "NaN", bool
// as "1" / "0"; float16 / bfloat16 are written as their float32 value. Strings are read as the
// spec says: plain or scientific numbers, "INF" / "+INF" / "-INF" / "NaN" in any case; a string
// read into an integer type that is not an integer is read as a number and truncated ("100.5" ->
// 100); bool also reads "true" / "false". Anything else, or a value outside the target's range
// for an integer, is INVALID_ARGUMENT naming the element.
// A cast to the input's own type is an alias of the input.
//
// The float8 types (opset 19) go through float32: to float8 rounds to nearest even and treats
// out-of-range values and infinities by the `saturate` attribute (engine/float8.h); from float8
// is exact. int4 / uint4 (opset 21; one per byte inside inferd) go through float32 too: to them
// rounds half to even and clamps to [-8, 7] / [0, 15], from them is exact.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
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

// ---- strings ----

template <typename T>
std::string ToString(T v) {
  if constexpr (kIs16BitFloat<T>) {
    return ToString(v.ToFloat());
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) return "NaN";
      if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    }
    char buf[64];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
  }
}

bool EqualsIgnoreCase(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// The whole of `s` as a number of type F (float or double), or nullopt.
template <typename F>
std::optional<F> ParseFloat(absl::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (EqualsIgnoreCase(s, "inf"))
    return negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
  if (EqualsIgnoreCase(s, "nan")) return std::numeric_limits<F>::quiet_NaN();
  if (s.empty() || s[0] == '+' || s[0] == '-') return std::nullopt;
  F v{};
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    // Out of range: from_chars leaves v alone; the spec's float rule says +/- infinity.
    if (r.ec == std::errc::result_out_of_range && r.ptr == s.data() + s.size()) {
      return negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
    }
    return std::nullopt;
  }
  return negative ? -v : v;
}

template <typename T>
std::optional<T> FromString(absl::string_view s) {
  if constexpr (kIs16BitFloat<T>) {
    std::optional<float> f = ParseFloat<float>(s);
    if (!f) return std::nullopt;
    return T::From(*f);
  } else if constexpr (std::is_floating_point_v<T>) {
    return ParseFloat<T>(s);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (EqualsIgnoreCase(s, "true")) return true;
    if (EqualsIgnoreCase(s, "false")) return false;
    std::optional<double> d = ParseFloat<double>(s);
    if (!d) return std::nullopt;
    return *d != 0;
  } else {
    absl::string_view digits = s;
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    T v{};
    const std::from_chars_result r =
        std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (r.ec == std::errc() && r.ptr == digits.data() + digits.size() && !digits.empty()) return v;
    // Not an integer of T: read as a number and truncated, within T's range.
    std::optional<double> d = ParseFloat<double>(s);
    if (!d || !std::isfinite(*d)) return std::nullopt;
    const double t = std::trunc(*d);
    // max() + 1 is exact as a double for every integer type (a power of two beyond 2^53).
    if (!(t >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
          t < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
      return std::nullopt;
    }
    return static_cast<T>(t);
  }
}

class CastKernel final : public engine::OpKernel {
 public:
  // Cast: the target is the `to` attribute.
  static absl::StatusOr<std::unique_ptr<CastKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(int64_t to, info.RequireInt("to"));
    const NodeLabel node(info);
    if (!engine::IsKnownDataType(static_cast<int32_t>(to)) ||
        !Supported(static_cast<DataType>(to))) {
      return node.Unimplemented(absl::StrCat("cast to element type ", to, " is not supported"));
    }
    return std::unique_ptr<CastKernel>(new CastKernel(info, static_cast<DataType>(to)));
  }

  // CastLike: the target is input 1's type (known at load, else read per run).
  static absl::StatusOr<std::unique_ptr<CastKernel>> CreateLike(const KernelInfo& info) {
    const DataType to = info.input(1).type;
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
    if (x->dtype() == DataType::kString || to == DataType::kString) return CastString(*x, *y);
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
    return t == DataType::kString;
  }

  // x -> y where one of them (or both) is a string tensor.
  absl::Status CastString(const Tensor& x, Tensor& y) const {
    const int64_t n = x.NumElements();
    if (x.dtype() == DataType::kString && y.dtype() == DataType::kString) {
      std::copy_n(x.data<std::string>(), n, y.mutable_data<std::string>());
      return absl::OkStatus();
    }
    if (y.dtype() == DataType::kString) {
      return Dispatch(CastTypes{}, x.dtype(), node_, [&](auto tag) {
        using From = typename decltype(tag)::type;
        const From* in = x.data<From>();
        std::string* out = y.mutable_data<std::string>();
        for (int64_t i = 0; i < n; ++i) out[i] = ToString(in[i]);
        return absl::OkStatus();
      });
    }
    return Dispatch(CastTypes{}, y.dtype(), node_, [&](auto tag) {
      using To = typename decltype(tag)::type;
      const std::string* in = x.data<std::string>();
      To* out = y.mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) {
        std::optional<To> v = FromString<To>(in[i]);
        if (!v) {
          return node_.InvalidArgument(absl::StrCat("element ", i, ": \"", absl::CEscape(in[i]),
                                                    "\" is not a ", engine::DataTypeName(y.dtype()),
                                                    " value"));
        }
        out[i] = *v;
      }
      return absl::OkStatus();
    });
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
      UnaryMap(x.data<From>(), y.mutable_data<uint8_t>(), n, ctx.threads(),
               [=](From v) { return FloatToNarrow(Convert<float>(v), to, saturate); });
      return absl::OkStatus();
    });
  }

  const NodeLabel node_;
  const DataType to_;    // kUndefined: CastLike, read from input 1 per run
  const bool alias_;     // the input's type (known at load) is the target: a view
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
  std::vector<DataType> types = AllTypes();
  types.push_back(DataType::kString);
  return {CpuDef(engine::kOnnxDomain, "Cast", 6, kMaxOpset, types, FactoryOf<CastKernel>()),
          CpuDef(engine::kOnnxDomain, "CastLike", 15, kMaxOpset, types, CastLikeFactory())};
}

}  // namespace inferd::kernels::cpu

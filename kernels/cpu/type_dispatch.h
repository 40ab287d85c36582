// Element-type dispatch, the one way the CPU kernels switch on a DataType (internal to
// //kernels/cpu): a kernel names the C++ types it handles once, as a TypeList, and both its
// registration (TypesOf) and its run-time switch (Dispatch, or Visit where the kernel has its own
// fallback) come from that list, so they cannot disagree. Pure templates; thread-safe.
//
// Example:
//   using Types = TypeList<float, int64_t>;
//   CpuDef(kOnnxDomain, "Neg", 6, kMaxOpset, TypesOf(Types{}), ...);
//   return Dispatch(Types{}, x.dtype(), node_, [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//     return absl::OkStatus();
//   });
#ifndef INFERD_KERNELS_CPU_TYPE_DISPATCH_H_
#define INFERD_KERNELS_CPU_TYPE_DISPATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/data_type.h"
#include "kernels/cpu/float16.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

// The DataType of a C++ element type, including the 16-bit float wrappers.
template <typename T>
inline constexpr engine::DataType kTypeOf = engine::DataTypeOf<T>::value;
template <>
inline constexpr engine::DataType kTypeOf<Float16> = engine::DataType::kFloat16;
template <>
inline constexpr engine::DataType kTypeOf<BFloat16> = engine::DataType::kBFloat16;

template <typename T>
struct TypeTag {
  using type = T;
};

template <typename... Ts>
struct TypeList {};

template <typename... Ts>
std::vector<engine::DataType> TypesOf(TypeList<Ts...>) {
  return {kTypeOf<Ts>...};
}

// Calls fn(TypeTag<T>{}) for the T in the list whose DataType is `type` (fn's result, if any, is
// dropped); returns false, calling nothing, when the list has no such type.
template <typename... Ts, typename Fn>
bool Visit(TypeList<Ts...>, engine::DataType type, Fn&& fn) {
  return ((kTypeOf<Ts> == type && (static_cast<void>(fn(TypeTag<Ts>{})), true)) || ...);
}

// Calls fn(TypeTag<T>{}) for the T in the list whose DataType is `type` and returns its status;
// UNIMPLEMENTED naming the node when the list has no such type.
template <typename... Ts, typename Fn>
absl::Status Dispatch(TypeList<Ts...>, engine::DataType type, const NodeLabel& node, Fn&& fn) {
  absl::Status status;
  const bool found = Visit(TypeList<Ts...>{}, type, [&](auto tag) { status = fn(tag); });
  if (!found) {
    return node.Unimplemented(
        absl::StrCat("element type ", engine::DataTypeName(type), " is not supported"));
  }
  return status;
}

// Common lists.
using FloatTypes = TypeList<float, double>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using NumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                              uint32_t, uint64_t>;
using SignedNumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
// Index inputs (Gather, Scatter, ...).
using IndexTypes = TypeList<int64_t, int32_t>;
// The reductions' element types (Reduce*, ArgMax/ArgMin, TopK, CumSum).
using ReduceTypes = TypeList<float, double, int32_t, int64_t>;

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_TYPE_DISPATCH_H_

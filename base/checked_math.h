// Overflow-checked size arithmetic: the one place where element counts, byte sizes, offsets,
// block sizes and budget costs computed from model files, configs and requests are combined.
// Every such size is a product or a sum of numbers a hostile file controls; plain `*` and `+`
// wrap (unsigned) or are undefined behaviour (signed), and a wrapped size is a small buffer that
// a kernel then overruns. These return nullopt (Checked*) or saturate at the type's maximum
// (Saturating*, for running totals that are compared with a budget afterwards: a saturated total
// exceeds every budget).
//
// Example:
//   std::optional<int64_t> n = CheckedMul<int64_t>(rows, cols);
//   if (!n) return absl::InvalidArgumentError("shape too large");
//   uint64_t total = SaturatingAdd<uint64_t>(weights, activations);
#ifndef INFERD_BASE_CHECKED_MATH_H_
#define INFERD_BASE_CHECKED_MATH_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "absl/types/span.h"

namespace inferd {

template <typename T>
std::optional<T> CheckedMul(T a, T b) {
  static_assert(std::is_integral_v<T>, "integers only");
  T out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <typename T>
std::optional<T> CheckedAdd(T a, T b) {
  static_assert(std::is_integral_v<T>, "integers only");
  T out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// For unsigned running totals (bytes, costs).
template <typename T>
T SaturatingAdd(T a, T b) {
  static_assert(std::is_unsigned_v<T>, "unsigned only");
  T out;
  return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<T>::max() : out;
}

template <typename T>
T SaturatingMul(T a, T b) {
  static_assert(std::is_unsigned_v<T>, "unsigned only");
  T out;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<T>::max() : out;
}

// `bytes` rounded up to a multiple of `alignment` (> 0), or nullopt when that does not fit.
std::optional<uint64_t> CheckedRoundUp(uint64_t bytes, uint64_t alignment);

// The product of `dims` when every dim is >= 0 and the product of the non-zero dims fits in
// int64, else nullopt. (A zero dim makes the product 0 but does not excuse the others: every
// partial product a kernel forms, strides included, must fit too.)
std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims);

}  // namespace inferd

#endif  // INFERD_BASE_CHECKED_MATH_H_

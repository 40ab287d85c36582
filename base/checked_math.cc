#include "base/checked_math.h"

namespace inferd {

std::optional<uint64_t> CheckedRoundUp(uint64_t bytes, uint64_t alignment) {
  std::optional<uint64_t> padded = CheckedAdd<uint64_t>(bytes, alignment - 1);
  if (!padded) return std::nullopt;
  return *padded / alignment * alignment;
}

std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      zero = true;
      continue;
    }
    std::optional<int64_t> next = CheckedMul<int64_t>(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return zero ? 0 : n;
}

}  // namespace inferd

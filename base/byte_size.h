// Byte sizes as people write them in configs and on command lines: "6GiB", "512 MiB", "1.5GB",
// "1048576". One parser for the server config, inferctl and loadtest. Pure function; thread-safe.
//
// Example:
//   absl::StatusOr<uint64_t> cap = inferd::ParseByteSize("200KiB");  // 204800
#ifndef INFERD_BASE_BYTE_SIZE_H_
#define INFERD_BASE_BYTE_SIZE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd {

// A plain integer, or a number with B, KiB, MiB, GiB, TiB (1024-based) or KB, MB, GB, TB
// (1000-based), case-sensitive, with optional spaces around; fractions ("1.5GiB", ".25MiB") when
// they come to whole bytes. Exact (no floating point) and overflow-checked: INVALID_ARGUMENT
// naming the text for anything past 2^64 - 1 bytes, a fraction of a byte, an unknown unit, a
// sign, an exponent or a separator.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace inferd

#endif  // INFERD_BASE_BYTE_SIZE_H_

#include "base/byte_size.h"

#include <limits>

#include "absl/numeric/int128.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace inferd {
namespace {

struct Unit {
  absl::string_view name;
  uint64_t multiplier;
};

constexpr Unit kUnits[] = {
    {"", 1},
    {"B", 1},
    {"KiB", uint64_t{1} << 10},
    {"MiB", uint64_t{1} << 20},
    {"GiB", uint64_t{1} << 30},
    {"TiB", uint64_t{1} << 40},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", uint64_t{1000} * 1000 * 1000 * 1000},
};

const Unit* FindUnit(absl::string_view name) {
  for (const Unit& u : kUnits) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

// Decimal digits -> value; at most 20 digits, so it fits in 128 bits with room to multiply.
absl::uint128 Digits(absl::string_view digits) {
  absl::uint128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  const absl::string_view s = absl::StripAsciiWhitespace(text);
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a byte size such as 512MiB, 6GiB or 1048576, got '", text, "'"));
  };
  // The number: digits, optionally '.' and more digits.
  size_t i = 0;
  while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
  const absl::string_view whole = s.substr(0, i);
  absl::string_view fraction;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    while (j < s.size() && absl::ascii_isdigit(s[j])) ++j;
    fraction = s.substr(i + 1, j - i - 1);
    if (fraction.empty()) return bad();
    i = j;
  }
  if (whole.empty() && fraction.empty()) return bad();
  if (whole.size() > 20 || fraction.size() > 18) return bad();

  // The unit.
  const absl::string_view unit_name = absl::StripLeadingAsciiWhitespace(s.substr(i));
  const Unit* unit = FindUnit(unit_name);
  if (unit == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown unit '", unit_name, "' in '", text,
                     "' (units, case-sensitive: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"));
  }

  // whole * multiplier + fraction * multiplier / 10^digits, in 128 bits (20 digits times 2^40
  // stays below 2^107), then checked against 64.
  absl::uint128 fraction_scale = 1;
  for (size_t k = 0; k < fraction.size(); ++k) fraction_scale *= 10;
  const absl::uint128 fraction_bytes = Digits(fraction) * unit->multiplier;
  if (fraction_bytes % fraction_scale != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a whole number of bytes"));
  }
  const absl::uint128 total = Digits(whole) * unit->multiplier + fraction_bytes / fraction_scale;
  if (total > absl::uint128(std::numeric_limits<uint64_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  }
  return absl::Uint128Low64(total);
}

}  // namespace inferd

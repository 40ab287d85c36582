#include "server/config_values.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/numeric/int128.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace inferd::server {
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  const absl::string_view s = absl::StripAsciiWhitespace(text);
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a byte size such as 512MiB, 6GiB or 1048576, got '", text, "'"));
  };
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
  const absl::string_view unit = absl::StripLeadingAsciiWhitespace(s.substr(i));

  struct Unit {
    absl::string_view name;
    uint64_t multiplier;
  };
  static constexpr Unit kUnits[] = {
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
  const Unit* found = nullptr;
  for (const Unit& u : kUnits) {
    if (u.name == unit) found = &u;
  }
  if (found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown unit '", unit, "' in '", text,
                     "' (units, case-sensitive: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"));
  }

  absl::uint128 whole_value = 0;
  for (char c : whole) whole_value = whole_value * 10 + (c - '0');
  absl::uint128 fraction_value = 0;
  absl::uint128 fraction_scale = 1;
  for (char c : fraction) {
    fraction_value = fraction_value * 10 + (c - '0');
    fraction_scale *= 10;
  }
  const absl::uint128 fraction_bytes = fraction_value * found->multiplier;
  if (fraction_bytes % fraction_scale != 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a whole number of bytes"));
  }
  const absl::uint128 total = whole_value * found->multiplier + fraction_bytes / fraction_scale;
  if (total > absl::uint128(std::numeric_limits<uint64_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  }
  return absl::Uint128Low64(total);
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text) {
  const absl::string_view s = absl::StripAsciiWhitespace(text);
  absl::Duration d;
  if (s.empty() || !absl::ParseDuration(s, &d) || d < absl::ZeroDuration() ||
      d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a duration such as 250ms, 10s or 2m, got '", text, "'"));
  }
  return d;
}

absl::StatusOr<std::string> NormalizeDeviceName(absl::string_view text) {
  if (text == "cpu") return std::string("cpu:0");
  for (absl::string_view kind : {"cpu", "cuda"}) {
    absl::string_view index = text;
    if (!absl::ConsumePrefix(&index, kind) || !absl::ConsumePrefix(&index, ":")) continue;
    int n = 0;
    if (!index.empty() && index.size() <= 6 &&
        std::all_of(index.begin(), index.end(), absl::ascii_isdigit) &&
        absl::SimpleAtoi(index, &n)) {
      return absl::StrCat(kind, ":", n);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("expected a device 'cpu', 'cpu:N' or 'cuda:N', got '", text, "'"));
}

// "host:port", "[v6]:port" or (allow_unix) "unix:/path".
absl::StatusOr<Address> ParseAddress(absl::string_view text, bool allow_unix) {
  Address a;
  if (allow_unix && absl::StartsWith(text, "unix:")) {
    if (text.size() == 5) return absl::InvalidArgumentError("unix: socket path is empty");
    a.is_unix = true;
    return a;
  }
  const std::string expected =
      absl::StrCat("expected host:port such as 127.0.0.1:8001 or [::1]:8001",
                   allow_unix ? " or unix:/path" : "", ", got '", text, "'");
  absl::string_view port;
  if (absl::StartsWith(text, "[")) {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos || text.substr(close + 1, 1) != ":") {
      return absl::InvalidArgumentError(expected);
    }
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) return absl::InvalidArgumentError(expected);
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("write an IPv6 host in brackets, e.g. [::1]:8001; got '", text, "'"));
    }
  }
  if (a.host.empty() || port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &a.port) || a.port > 65535) {
    return absl::InvalidArgumentError(expected);
  }
  return a;
}

bool IsLoopback(const Address& a) {
  if (a.is_unix || a.host == "localhost" || a.host == "::1") return true;
  in_addr v4;
  return inet_pton(AF_INET, a.host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

bool IsWildcard(const Address& a) { return a.host == "0.0.0.0" || a.host == "::"; }

}  // namespace inferd::server

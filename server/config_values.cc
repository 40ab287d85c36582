#include "server/config_values.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace inferd::server {

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

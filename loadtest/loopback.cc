#include "loadtest/loopback.h"

#include <arpa/inet.h>

#include "absl/strings/str_cat.h"

namespace inferd::loadtest {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    // ::ffff:127.x.y.z
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

bool IsLoopbackTarget(const std::string& target) {
  if (StartsWith(target, "unix:") || StartsWith(target, "unix-abstract:")) return true;
  std::string rest = target;
  for (const char* scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (StartsWith(rest, scheme)) {
      rest = rest.substr(std::string(scheme).size());
      break;
    }
  }
  if (rest.empty()) return false;
  std::string host;
  if (rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) return false;
    host = rest.substr(1, close - 1);
    const std::string tail = rest.substr(close + 1);
    if (!tail.empty() && tail[0] != ':') return false;
  } else {
    const size_t colon = rest.rfind(':');
    host = colon == std::string::npos ? rest : rest.substr(0, colon);
    if (host.find(':') != std::string::npos) return false;  // unbracketed IPv6 with a port
  }
  return IsLoopbackHost(host);
}

absl::Status CheckLoopback(const std::string& flag, const std::string& target) {
  if (IsLoopbackTarget(target)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " '", target,
                   "' is not a loopback address: loadtest only talks to this machine "
                   "(127.0.0.0/8, [::1], localhost or a unix: socket)"));
}

}  // namespace inferd::loadtest

#include "server/admin_auth.h"

#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace inferd::server {
namespace {

constexpr absl::string_view kScheme = "bearer ";

// The host of "host:port", "[v6]:port"; empty when malformed.
std::string HostOf(absl::string_view address) {
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) return "";
    return std::string(address.substr(1, close - 1));
  }
  const size_t colon = address.rfind(':');
  return std::string(colon == absl::string_view::npos ? address : address.substr(0, colon));
}

}  // namespace

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:") || absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  const std::string host = absl::AsciiStrToLower(HostOf(address));
  if (host == "localhost" || host == "::1") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  // Every byte of b is looked at once, whatever a holds; no early exit.
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff = diff | (x ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

absl::StatusOr<AdminAuth> AdminAuth::FromConfig(const ServerConfig& server) {
  // Configs that did not come through LoadConfig get the token rule too: a token of spaces
  // would otherwise be "configured" yet trivially guessed.
  if (!server.admin_token.empty()) {
    if (absl::Status s = ValidateAdminToken(server.admin_token); !s.ok()) {
      return absl::FailedPreconditionError(s.message());
    }
  }
  if (server.admin_token.empty() && !IsLoopbackAddress(server.admin_address)) {
    return absl::FailedPreconditionError(
        absl::StrCat("admin_address '", server.admin_address,
                     "' is not a loopback address, so the admin API requires a bearer token: set "
                     "server.admin_token or server.admin_token_env"));
  }
  return AdminAuth(server.admin_token);
}

absl::Status AdminAuth::Authorize(const Metadata& client_metadata) const {
  if (token_.empty()) return absl::OkStatus();
  const auto it = client_metadata.find("authorization");
  if (it == client_metadata.end()) {
    return absl::UnauthenticatedError(
        "the admin API requires the metadata 'authorization: Bearer <token>'");
  }
  const absl::string_view value(it->second.data(), it->second.size());
  if (value.size() < kScheme.size() ||
      !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError(
        "the admin API takes 'authorization: Bearer <token>' (another scheme was sent)");
  }
  if (!ConstantTimeEquals(value.substr(kScheme.size()), token_)) {
    return absl::UnauthenticatedError("invalid admin bearer token");
  }
  return absl::OkStatus();
}

absl::Status CheckModelControlAccess(const ServerConfig& server,
                                     const AdminAuth::Metadata& client_metadata,
                                     absl::string_view method, absl::string_view peer) {
  absl::Status access = absl::OkStatus();
  if (server.model_control != ModelControl::kExplicit) {
    access = absl::FailedPreconditionError(absl::StrCat(
        "model control is disabled (server.model_control: ", ModelControlName(server.model_control),
        "): the models are those of the config and the repository; set server.model_control: "
        "explicit to load and unload models at run time"));
  } else if (absl::Status auth = AdminAuth(server.admin_token).Authorize(client_metadata);
             !auth.ok()) {
    access = absl::UnauthenticatedError(
        absl::StrCat("explicit model control requires the admin token: ", auth.message()));
  }
  if (!access.ok()) {
    spdlog::warn("{} refused from {}: {}", std::string(method), std::string(peer),
                 std::string(access.message()));
  }
  return access;
}

}  // namespace inferd::server

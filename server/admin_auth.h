// AdminAuth: the bearer-token check of the admin API (inferd.admin.v1.Admin).
//
// The rule:
//   - a token is configured (server.admin_token, or the variable named by admin_token_env):
//     every admin call must carry the metadata `authorization: Bearer <token>`, whatever
//     address the admin API is bound to (loopback included);
//   - no token is configured: calls need none. That is only allowed on a loopback admin address
//     (127.0.0.0/8, ::1, localhost, unix:); LoadConfig refuses the rest, and FromConfig refuses
//     it again for configs that did not come through LoadConfig.
// A missing header, another scheme, or a wrong token answer UNAUTHENTICATED. The token is
// compared in constant time (the time depends on the configured token's length only); the
// scheme name is case-insensitive ("bearer" works), as RFC 6750 allows.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(AdminAuth auth, AdminAuth::FromConfig(config.server));
//   if (absl::Status s = auth.Authorize(context->client_metadata()); !s.ok()) return s;
//
// Immutable after construction; thread-safe.
#ifndef INFERD_SERVER_ADMIN_AUTH_H_
#define INFERD_SERVER_ADMIN_AUTH_H_

#include <map>
#include <string>

#include <grpcpp/support/string_ref.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/config.h"

namespace inferd::server {

class AdminAuth {
 public:
  using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

  // `token` empty: no token required.
  explicit AdminAuth(std::string token) : token_(std::move(token)) {}

  // The token of `server` (already resolved from admin_token_env by LoadConfig).
  // FAILED_PRECONDITION when admin_address is not loopback and there is no token, or when the
  // token breaks ValidateAdminToken (empty, whitespace or control characters, too long).
  static absl::StatusOr<AdminAuth> FromConfig(const ServerConfig& server);

  bool token_required() const { return !token_.empty(); }

  // OK, or UNAUTHENTICATED saying what is missing (never echoing what was sent).
  absl::Status Authorize(const Metadata& client_metadata) const;

 private:
  std::string token_;  // constant after construction
};

// Whether a call may load or unload models (gRPC's RepositoryModelLoad/Unload, HTTP's
// /v2/repository/models/<m>/load|unload): FAILED_PRECONDITION unless server.model_control is
// explicit; then, when an admin token is configured, UNAUTHENTICATED unless the call carries it
// (`authorization: Bearer <token>`). `method` and `peer` go into the warning logged on a refusal.
// The model name is checked by the caller after this (a caller without access learns nothing
// from it).
absl::Status CheckModelControlAccess(const ServerConfig& server,
                                     const AdminAuth::Metadata& client_metadata,
                                     absl::string_view method, absl::string_view peer);

// True for addresses that only this machine can reach: 127.0.0.0/8, [::1], localhost, and
// unix: sockets. "0.0.0.0:8002", "10.1.2.3:8002", "[::]:8002", "host.example:8002" are not.
bool IsLoopbackAddress(absl::string_view address);

// a == b, in time that depends on b's length only (b is the secret).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace inferd::server

#endif  // INFERD_SERVER_ADMIN_AUTH_H_

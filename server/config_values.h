// Value formats of the config: byte sizes ("6GiB", "512 MiB", plain integers), durations
// ("250ms", "10s"), device names ("cpu" = "cpu:0", "cpu:N", "cuda:N") and listen addresses
// ("host:port", "[v6]:port", "unix:/path"). Byte sizes and device names are base's, shared with
// the partitioner and the tools (base/byte_size.h, base/device_name.h); they are named here as
// well so that the config's readers find every value format in one place. Pure functions;
// thread-safe.
#ifndef INFERD_SERVER_CONFIG_VALUES_H_
#define INFERD_SERVER_CONFIG_VALUES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/byte_size.h"
#include "base/device_name.h"
#include "base/duration.h"

namespace inferd::server {

struct Address {
  std::string host;  // without brackets; empty for unix sockets
  bool is_unix = false;
  int port = 0;
};

// "host:port", "[v6]:port" or (allow_unix) "unix:/path".
absl::StatusOr<Address> ParseAddress(absl::string_view text, bool allow_unix);
// 127.0.0.0/8, ::1, localhost, or a unix socket.
bool IsLoopback(const Address& a);
// 0.0.0.0 or ::.
bool IsWildcard(const Address& a);

}  // namespace inferd::server

#endif  // INFERD_SERVER_CONFIG_VALUES_H_

// Loopback checks: loadtest and echo_server talk to this machine only.
//
// IsLoopbackTarget accepts gRPC targets whose host is a loopback literal or `localhost`:
// "127.0.0.1:8001", "localhost:8001", "[::1]:8001", "ipv4:127.0.0.2:80", "ipv6:[::1]:80",
// "dns:///localhost:80", "dns:localhost:80", and local sockets ("unix:/path", "unix-abstract:x").
// Anything else, including names that merely resolve to a loopback address, is refused: no name
// is resolved.
#ifndef INFERD_LOADTEST_LOOPBACK_H_
#define INFERD_LOADTEST_LOOPBACK_H_

#include <string>

#include "absl/status/status.h"

namespace inferd::loadtest {

bool IsLoopbackTarget(const std::string& target);

// OK, or INVALID_ARGUMENT naming the flag and the target.
absl::Status CheckLoopback(const std::string& flag, const std::string& target);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_LOOPBACK_H_

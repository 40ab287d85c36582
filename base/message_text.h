// Message text for values a client or a file sent: quoted, escaped and bounded, so that an error
// message never echoes unbounded input (a 100000-byte name, a NUL byte) back to a client or into
// a log line.
//
//   return absl::InvalidArgumentError(absl::StrCat("unknown model ", QuoteForMessage(name)));
//   grpc::Status(code, BoundMessage(status.message()));
#ifndef INFERD_BASE_MESSAGE_TEXT_H_
#define INFERD_BASE_MESSAGE_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace inferd {

inline constexpr size_t kMaxEchoedBytes = 64;     // of one quoted value
inline constexpr size_t kMaxMessageBytes = 2048;  // of a whole error message

// `s` quoted: 'x'. Bytes outside printable ASCII (and ' and \) are C-escaped (\n, \x00); a value
// longer than `max_bytes` shows its first bytes and its size: 'aaaa'... (100000 bytes).
std::string QuoteForMessage(absl::string_view s, size_t max_bytes = kMaxEchoedBytes);

// `message` if it has at most kMaxMessageBytes, else its first bytes and "... (N bytes in all)"
// (cut at a UTF-8 character boundary).
std::string BoundMessage(absl::string_view message);

}  // namespace inferd

#endif  // INFERD_BASE_MESSAGE_TEXT_H_

// Flag value types of loadtest and echo_server, for Abseil flags (parsed by base/flags.h):
// durations as loadtest has always read them ("10s", "250ms", "1m30s", or a plain number of
// seconds such as "1.5"). Byte sizes are base/byte_size.h's.
//
// Example:
//   ABSL_FLAG(inferd::loadtest::Seconds, duration, inferd::loadtest::Seconds(absl::Seconds(60)),
//             "stop after D");
//   absl::Duration d = absl::GetFlag(FLAGS_duration).value;
//
// Pure functions and plain values; thread-safe.
#ifndef INFERD_LOADTEST_FLAGS_H_
#define INFERD_LOADTEST_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace inferd::loadtest {

// A plain number of seconds ("1.5"), else base/duration.h's ParseDuration ("10s", "250ms",
// "1m30s"); negative refused.
absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text);

// A duration flag read by ParseSeconds.
struct Seconds {
  Seconds() = default;
  explicit Seconds(absl::Duration d) : value(d) {}
  absl::Duration value = absl::ZeroDuration();
};
bool AbslParseFlag(absl::string_view text, Seconds* flag, std::string* error);
std::string AbslUnparseFlag(const Seconds& flag);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_FLAGS_H_

// Durations as people write them in configs and on command lines: "250ms", "10s", "1m30s",
// "500us" (absl::ParseDuration's units: ns, us, ms, s, m, h). One parser for the server config,
// inferctl and loadtest. Pure function; thread-safe.
//
// Example:
//   absl::StatusOr<absl::Duration> d = inferd::ParseDuration("250ms");
#ifndef INFERD_BASE_DURATION_H_
#define INFERD_BASE_DURATION_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace inferd {

// A number with a unit ("0" alone too), spaces around allowed; negative, infinite and unit-less
// values ("10": seconds or milliseconds?) are INVALID_ARGUMENT naming the text.
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text);

}  // namespace inferd

#endif  // INFERD_BASE_DURATION_H_

#include "base/duration.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace inferd {

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

}  // namespace inferd

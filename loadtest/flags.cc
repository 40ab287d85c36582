#include "loadtest/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace inferd::loadtest {

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    if (seconds < 0) return absl::InvalidArgumentError(absl::StrCat("negative duration ", text));
    return absl::Seconds(seconds);
  }
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad duration '", text, "': expected e.g. 10s, 250ms, 2m or 1.5"));
  }
  return d;
}

bool AbslParseFlag(absl::string_view text, Seconds* flag, std::string* error) {
  absl::StatusOr<absl::Duration> d = ParseSeconds(text);
  if (!d.ok()) {
    *error = std::string(d.status().message());
    return false;
  }
  flag->value = *d;
  return true;
}

std::string AbslUnparseFlag(const Seconds& flag) { return absl::FormatDuration(flag.value); }

}  // namespace inferd::loadtest

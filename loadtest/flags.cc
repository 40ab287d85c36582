#include "loadtest/flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/duration.h"

namespace inferd::loadtest {

absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text) {
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    if (seconds < 0) return absl::InvalidArgumentError(absl::StrCat("negative duration ", text));
    return absl::Seconds(seconds);
  }
  return ParseDuration(text);
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

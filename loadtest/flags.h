// Flags: a small command-line parser for loadtest and echo_server: "--name=value",
// "--name value", and bare "--name" for the boolean flags declared as such; repeated flags keep
// every value; anything not starting with "--" is positional. Unknown flags are errors.
//
// Value helpers read byte sizes ("64KiB", "4MiB", "1GiB", "1.5MB", "512") and durations ("10s",
// "250ms", "1m30s", or a plain number of seconds).
//
// Thread-compatible.
#ifndef INFERD_LOADTEST_FLAGS_H_
#define INFERD_LOADTEST_FLAGS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace inferd::loadtest {

absl::StatusOr<uint64_t> ParseBytes(absl::string_view text);
absl::StatusOr<absl::Duration> ParseSeconds(absl::string_view text);

class Flags {
 public:
  static absl::StatusOr<Flags> Parse(int argc, char** argv, int begin,
                                     const std::set<std::string>& value_flags,
                                     const std::set<std::string>& bool_flags);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& All(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

  absl::StatusOr<int64_t> Int(const std::string& name, int64_t fallback) const;
  absl::StatusOr<double> Double(const std::string& name, double fallback) const;
  absl::StatusOr<uint64_t> Bytes(const std::string& name, uint64_t fallback) const;
  absl::StatusOr<absl::Duration> Duration(const std::string& name, absl::Duration fallback) const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_FLAGS_H_

// Command lines for every inferd binary: each binary declares its flags with Abseil's ABSL_FLAG
// in its own sources and calls ParseCommandLine first thing in main, so every binary answers
// --help the same way, refuses an unknown flag or a bad value with one line naming it, and
// accepts --flag=value and --flag value alike.
//
// Example:
//   ABSL_FLAG(std::string, addr, "127.0.0.1:8001", "server address (host:port)");
//   int main(int argc, char** argv) {
//     std::vector<std::string> args =
//         inferd::ParseCommandLine(argc, argv, "usage: tool [flags] MODEL\n\nRuns MODEL.");
//     ...
//   }
#ifndef INFERD_BASE_FLAGS_H_
#define INFERD_BASE_FLAGS_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace inferd {

// Parses argv against every flag the binary defines. `--help` (or `-h`, `-help`) prints `usage`
// and the binary's own flags (name, help, default) to stdout and exits 0; an unknown flag or a
// value that does not parse prints the error to stderr and exits 1. Returns the positional
// arguments in order, without argv[0]; everything after a lone `--` is positional.
std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage);

// The text --help prints: `usage`, then one paragraph per flag defined outside Abseil itself,
// sorted by name. For tests and for binaries that print it on a usage error.
std::string FlagsHelp(absl::string_view usage);

}  // namespace inferd

#endif  // INFERD_BASE_FLAGS_H_

// Command lines for every inferd binary: each binary declares its flags with Abseil's ABSL_FLAG
// in its own sources and calls ParseCommandLine first thing in main, so every binary answers
// --help the same way, refuses an unknown flag or a bad value with one line naming it, and
// accepts --flag=value and --flag value alike.
//
// Spellings: `--name=value`, `--name value`, `-name value`; for bools `--name`, `--noname`,
// `--no-name`, `--name=true|false`. A dash in a name is an underscore in C++: ABSL_FLAG(...,
// port_file, ...) is given as `--port-file` or `--port_file`. A flag may only be given more than
// once when it is a RepeatedFlag (below); otherwise the last value wins. Everything after a lone
// `--`, and `-` itself, is positional.
//
// A binary with subcommands (inferctl, `loadtest admin`) parses each subcommand's part of argv
// with ParseArgs and a CommandLineSpec that names the flags that subcommand takes: --help lists
// those, any other flag is refused, and nothing exits, so the subcommand can run in-process (and
// in a test) more than once: each parse starts from every flag's default.
//
// Example:
//   ABSL_FLAG(std::string, addr, "127.0.0.1:8001", "server address (host:port)");
//   ABSL_FLAG(inferd::RepeatedFlag, input, {}, "NAME=FILE.npy");
//   int main(int argc, char** argv) {
//     std::vector<std::string> args =
//         inferd::ParseCommandLine(argc, argv, "usage: tool [flags] MODEL\n\nRuns MODEL.");
//     for (const std::string& in : absl::GetFlag(FLAGS_input).values) ...
//   }
//
// Not thread-safe: parse before starting threads (Abseil's GetFlag is safe afterwards).
#ifndef INFERD_BASE_FLAGS_H_
#define INFERD_BASE_FLAGS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd {

// A flag that may be given more than once; every value is kept, in order (`--input a=x.npy
// --input b=y.npy`). A value is never split (commas stay). Only ParseArgs / ParseCommandLine know
// how to give it several values.
struct RepeatedFlag {
  std::vector<std::string> values;
};
bool AbslParseFlag(absl::string_view text, RepeatedFlag* flag, std::string* error);
std::string AbslUnparseFlag(const RepeatedFlag& flag);

// What one command line takes: a binary's, or one subcommand's.
struct CommandLineSpec {
  // Printed first by --help, and after an error by ParseCommandLine.
  std::string usage;
  // The flags the command takes, spelled as users type them ("port-file" for ABSL_FLAG port_file)
  // and listed in that order by --help. "version=client_version" gives ABSL_FLAG client_version
  // the spelling --version: for names Abseil's own libraries define (help, version, flagfile,
  // fromenv, undefok, ...), which a binary cannot define again. Empty: every flag of ours the
  // binary defines, by name.
  std::vector<std::string> flags;
  // ParseCommandLine's exit status for a bad command line.
  int error_exit_code = 1;
};

struct ParsedArgs {
  bool help = false;                    // --help, -help or -h came before any `--`
  std::vector<std::string> positional;  // in order
  std::set<std::string> given;          // the flags given, by ABSL_FLAG name ("port_file")
};

// Parses `args` (argv without the program or subcommand name) against the flags of `spec`, after
// resetting every flag of ours (the spec's and any other) to its default. With --help anywhere
// (before `--`), returns help = true and sets nothing. INVALID_ARGUMENT naming the flag for an
// unknown flag (or one this command does not take), a missing value, a value that does not parse,
// or a value given to --noname.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const CommandLineSpec& spec);

// ParseArgs for a whole binary: --help prints FlagsHelp to stdout and exits 0; an error prints
// "<program>: <error>" and the usage to stderr and exits with spec.error_exit_code. Returns the
// positional arguments, without argv[0].
std::vector<std::string> ParseCommandLine(int argc, char** argv, const CommandLineSpec& spec);
// Every flag of ours; bad command lines exit 1.
std::vector<std::string> ParseCommandLine(int argc, char** argv, absl::string_view usage);

// The text --help prints: the usage, then one line per flag (name, help, default), in the spec's
// order or, for an empty spec, every flag defined outside Abseil itself, sorted by name.
std::string FlagsHelp(const CommandLineSpec& spec);
std::string FlagsHelp(absl::string_view usage);

}  // namespace inferd

#endif  // INFERD_BASE_FLAGS_H_

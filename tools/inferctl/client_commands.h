// inferctl's client commands: talk to a running inferd over gRPC.
//
//   KServe v2 API (--addr, default 127.0.0.1:8001):
//     inferctl infer  --model M [--version V] [--input NAME=FILE.npy]... [--random]
//                     [--output-dir DIR]
//     inferctl models
//     inferctl load   --model M
//     inferctl unload --model M
//   Admin API (--admin-addr, default 127.0.0.1:8003; --token T or $INFERD_ADMIN_TOKEN):
//     inferctl stats      [--model M] [--device D] [--arena execution|io]
//     inferctl trim       [--model M] [--device D] [--arena A]
//     inferctl set-cap    --model M --device D --arena A --bytes 512MiB|unbounded
//     inferctl reset-peak [--model M] [--device D] [--arena A]
//     inferctl report     --model M [--version V]
//   Every command: [--ca-cert FILE] (TLS, trusting FILE) [--timeout 30s].
//
// infer sends the inputs as raw_input_contents (what tritonclient does): each --input from a
// .npy file (its dtype and shape as they are), every other model input random with --random
// (floats in [-1, 1), integers in [0, 8), booleans; dynamic dims are 1), else an error naming the
// missing inputs. It prints each output's name, datatype and shape and, with --output-dir, writes
// DIR/<output>.npy. Exit codes: 0 done; 1 the call failed (its gRPC status is printed); 2 bad
// arguments (with the usage).
//
// set-cap asks for --model, --device and --arena although the API takes empty filters as "all":
// a cap on every arena at once is rarely meant, so it is spelled out.
#ifndef INFERD_TOOLS_INFERCTL_CLIENT_COMMANDS_H_
#define INFERD_TOOLS_INFERCTL_CLIENT_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/admin.pb.h"

namespace inferd::tools {

// The usage lines of the client commands, for inferctl's help.
extern const char kClientCommandsUsage[];

// True for infer, models, load, unload, stats, trim, set-cap, reset-peak, report.
bool IsClientCommand(const std::string& command);

// Runs `command` with its arguments (argv after the command); the result goes to `out`, errors to
// `err`. Returns the exit code.
int RunClientCommand(const std::string& command, const std::vector<std::string>& args,
                     std::ostream& out, std::ostream& err);

struct ClientArgs {
  std::string addr = "127.0.0.1:8001";
  std::string admin_addr = "127.0.0.1:8003";
  std::string token;  // --token, else $INFERD_ADMIN_TOKEN
  std::string ca_cert;
  absl::Duration timeout = absl::Seconds(30);
  std::string model, version, device, arena;
  std::vector<std::pair<std::string, std::string>> inputs;  // --input NAME=FILE
  bool random = false;
  std::string output_dir;
  bool has_bytes = false;
  std::optional<uint64_t> cap_bytes;  // --bytes; nullopt: unbounded
};

// Parses the arguments of `command`: INVALID_ARGUMENT naming an unknown flag, a missing value or
// a required flag that is absent.
absl::StatusOr<ClientArgs> ParseClientArgs(const std::string& command,
                                           const std::vector<std::string>& args);

// "512MiB", "1GB", "4096" -> bytes; "unbounded" -> nullopt.
absl::StatusOr<std::optional<uint64_t>> ParseCapBytes(absl::string_view text);

// The tables `stats` prints.
std::string FormatMemoryStats(const inferd::admin::v1::GetMemoryStatsResponse& stats);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_CLIENT_COMMANDS_H_

// tritonserver's command line, as inferd takes it: the flags a Triton deployment passes
// (--model-repository, --grpc-port, --model-control-mode, --load-model, ...) overlaid on the
// YAML config (or on no config at all), so that every check of server/config.h runs on the
// result. docs/triton.md lists the flags and what each sets.
//
// Addresses: a port flag replaces the port of the config's address and keeps its host (inferd's
// default host is 127.0.0.1, not Triton's 0.0.0.0: binding every interface is the operator's
// explicit choice, --grpc-address / --http-address / --metrics-address or the YAML), so the
// config's security rules (a non-loopback admin API or explicit model control needs a token)
// still decide.
//
// Pure function of its arguments (reads the config file and checks the file system, as
// LoadConfig): thread-safe.
#ifndef INFERD_SERVER_COMMAND_LINE_CONFIG_H_
#define INFERD_SERVER_COMMAND_LINE_CONFIG_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/config.h"

namespace inferd::server {

// What the command line says; unset fields leave the config's value.
struct CommandLineOverrides {
  std::string config_path;       // --config; empty: none (then model_repository is required)
  std::string model_repository;  // --model-repository
  std::optional<int> http_port, grpc_port, metrics_port, admin_port;
  std::string http_host, grpc_host, metrics_host;  // --http-address ... (Triton: a host)
  std::string model_control_mode;                  // --model-control-mode: none|poll|explicit
  std::vector<std::string> load_models;            // --load-model (repeatable; "*": all)
  std::optional<int> repository_poll_secs;         // --repository-poll-secs
  std::optional<int> exit_timeout_secs;            // --exit-timeout-secs
  int log_verbose = 0;                             // --log-verbose: > 0 sets log_level debug
  bool allow_http = true;                          // --allow-http=false: no HTTP listener
};

// The config the daemon runs with: the file (if any) with the overrides applied, checked as
// LoadConfig checks a file. Errors name the flag or the file and line.
absl::StatusOr<std::shared_ptr<const Config>> BuildConfig(const CommandLineOverrides& o);

}  // namespace inferd::server

#endif  // INFERD_SERVER_COMMAND_LINE_CONFIG_H_

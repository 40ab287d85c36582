// InferdProcess: the real //server:inferd binary, started by a test as a child process with a
// model repository of symlinks to generated models; the harness of the end-to-end, ops (admin
// API, metrics) and inferctl tests. inferd binds its gRPC and HTTP ports itself (127.0.0.1:0,
// reported through --port-file and --http-port-file); the admin and metrics ports are picked free
// just before the start (a start that loses the race for one is retried). $INFERD_BINARY, when set,
// is run instead of
// //server:inferd (to check a test against another build). Its stdout and stderr go to a log file
// the test can read. The destructor kills it if it still runs.
//
// Example:
//   InferdProcess::Options o;
//   o.models = {{"mlp", "tools/models/mlp"}};
//   auto inferd = InferdProcess::Start("api", o);
//   ASSERT_TRUE(inferd.ok()) << inferd.status();
//   auto stub = (*inferd)->Stub();
//   auto admin = (*inferd)->AdminStub();
//   absl::StatusOr<std::string> text = (*inferd)->ScrapeMetrics();
//
// Thread-compatible (the stubs it makes are thread-safe).
#ifndef INFERD_TESTS_SERVER_INFERD_PROCESS_H_
#define INFERD_TESTS_SERVER_INFERD_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/admin.grpc.pb.h"
#include "proto/inference.grpc.pb.h"

namespace inferd::testing {

class InferdProcess {
 public:
  struct Options {
    // Repository entries: <name> -> a model directory, workspace-relative (runfiles), linked as
    // <repository>/<name> (or <name>/<version>: a Triton version directory).
    std::vector<std::pair<std::string, std::string>> models;
    // Files written into the repository: relative path -> contents (config.yaml, broken models).
    std::vector<std::pair<std::string, std::string>> files;
    // Extra lines under `server:` (two-space indented), and the `models:` section (or empty).
    std::string server_yaml;
    std::string models_yaml;
    // Host the admin API binds ("0.0.0.0" requires a token in server_yaml).
    std::string admin_host = "127.0.0.1";
    // Added to the environment of inferd (e.g. the admin token).
    std::vector<std::pair<std::string, std::string>> env;
    std::string log_level = "info";
    // The gRPC listener's address (port 0: inferd picks one), and the admin and metrics ports
    // (0: picked free before the start).
    std::string grpc_address = "127.0.0.1:0";
    // The HTTP/REST listener's address (port 0: inferd picks one, see http_port(); none: off).
    std::string http_address = "127.0.0.1:0";
    int admin_port = 0;
    int metrics_port = 0;
    // Empty: Start returns once inferd is ready (its port file). Else once its log holds this
    // text (e.g. while it is still loading); address() is then empty.
    std::string started_when_logged;
    // Start again (fresh ports) when the admin or metrics port was taken meanwhile; off for
    // tests of what a taken port does.
    bool retry_taken_ports = true;
    // Start as tritonserver is started: no YAML, --model-repository=<repository> and port flags
    // (gRPC 0, HTTP 0, the picked admin and metrics ports), then `extra_args`.
    bool triton_command_line = false;
    std::vector<std::string> extra_args;  // appended to inferd's command line
  };

  // Starts inferd and waits until it is ready; its log in the error when it is not.
  static absl::StatusOr<std::unique_ptr<InferdProcess>> Start(const std::string& name,
                                                              const Options& options);
  ~InferdProcess();

  const std::string& address() const { return address_; }              // 127.0.0.1:<grpc>
  const std::string& admin_address() const { return admin_address_; }  // 127.0.0.1:<admin>
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }     // 0 when HTTP is off or not started yet
  pid_t pid() const { return pid_; }               // for /proc/<pid> (memory figures)
  std::shared_ptr<grpc::Channel> Channel() const;  // to address(), no message size limits
  std::unique_ptr<inference::GRPCInferenceService::Stub> Stub() const;
  std::unique_ptr<inferd::admin::v1::Admin::Stub> AdminStub() const;
  // The body of GET http://127.0.0.1:<metrics>/metrics; an error unless the status is 200.
  absl::StatusOr<std::string> ScrapeMetrics() const;

  // Sends `sig`; Wait returns the exit status once the process ends (nullopt on timeout;
  // -signal when a signal killed it).
  void Signal(int sig);
  std::optional<int> Wait(absl::Duration timeout);
  bool running();
  std::string Log() const;  // everything it has logged so far
  // Waits until the log holds `text`; false after `timeout`.
  bool WaitForLog(const std::string& text, absl::Duration timeout) const;
  const std::string& repository() const { return repository_; }  // the model repository folder

 private:
  InferdProcess() = default;
  // One attempt: writes the repository and config into a fresh directory, spawns inferd and
  // waits for its port file.
  absl::Status Spawn(const std::string& name, const Options& options);

  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string dir_;
  std::string log_path_;
  std::string repository_;
  std::string address_;
  std::string admin_address_;
  int metrics_port_ = 0;
  int http_port_ = 0;
};

// The name the ops tests knew it by (tools/inferctl/client_commands_test.cc still uses it).

// A TCP port that was free on `host` a moment ago.
int PickFreePort(const std::string& host = "127.0.0.1");

// The value of the sample `series` (name and labels exactly as exposed, e.g.
// `inferd_arena_live_bytes{model="mlp",device="cpu:0",arena="io"}`) in a text exposition.
std::optional<double> MetricValue(const std::string& exposition, const std::string& series);

}  // namespace inferd::testing

#endif  // INFERD_TESTS_SERVER_INFERD_PROCESS_H_

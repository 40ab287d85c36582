// OpsProcess: the real //server:inferd for the ops tests (admin API, metrics, inferctl). Like
// InferdProcess (inferd_process.h), it serves a repository of symlinks to generated models and
// learns the gRPC port from --port-file; it also picks the admin and metrics ports (free ports,
// bound and released just before the start; a start that loses the race for one is retried),
// can bind the admin API to another host (0.0.0.0) and pass environment variables (the admin
// token), and scrapes /metrics over a plain socket.
//
// Example:
//   OpsProcess::Options o;
//   o.models = {{"mlp", "tools/models/mlp"}};
//   auto inferd = OpsProcess::Start("admin", o);
//   ASSERT_TRUE(inferd.ok()) << inferd.status();
//   auto admin = (*inferd)->AdminStub();
//   absl::StatusOr<std::string> text = (*inferd)->ScrapeMetrics();
//
// Thread-compatible (the stubs it makes are thread-safe).
#ifndef INFERD_TESTS_SERVER_OPS_PROCESS_H_
#define INFERD_TESTS_SERVER_OPS_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/admin.grpc.pb.h"
#include "proto/inference.grpc.pb.h"

namespace inferd::testing {

class OpsProcess {
 public:
  struct Options {
    // Repository entries: <name> -> a model directory, workspace-relative (runfiles).
    std::vector<std::pair<std::string, std::string>> models;
    // Files written into the repository: relative path -> contents.
    std::vector<std::pair<std::string, std::string>> files;
    // Extra lines under `server:` (two-space indented), and the `models:` section (or empty).
    std::string server_yaml;
    std::string models_yaml;
    // Host the admin API binds ("0.0.0.0" requires a token in server_yaml).
    std::string admin_host = "127.0.0.1";
    // Added to the environment of inferd.
    std::vector<std::pair<std::string, std::string>> env;
    std::string log_level = "info";
  };

  // Starts inferd and waits until it is ready; its log in the error when it is not.
  static absl::StatusOr<std::unique_ptr<OpsProcess>> Start(const std::string& name,
                                                           const Options& options);
  ~OpsProcess();  // kills inferd if it still runs

  const std::string& address() const { return address_; }              // 127.0.0.1:<grpc>
  const std::string& admin_address() const { return admin_address_; }  // 127.0.0.1:<admin>
  int metrics_port() const { return metrics_port_; }
  std::unique_ptr<inference::GRPCInferenceService::Stub> Stub() const;
  std::unique_ptr<inferd::admin::v1::Admin::Stub> AdminStub() const;
  // The body of GET http://127.0.0.1:<metrics>/metrics; an error unless the status is 200.
  absl::StatusOr<std::string> ScrapeMetrics() const;

  void Signal(int sig);
  std::optional<int> Wait(absl::Duration timeout);  // exit status; nullopt on timeout
  bool running();
  std::string Log() const;

 private:
  OpsProcess() = default;
  absl::Status Spawn(const Options& options, const std::string& binary);

  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string dir_;
  std::string log_path_;
  std::string address_;
  std::string admin_address_;
  int metrics_port_ = 0;
};

// A TCP port that was free on `host` a moment ago.
int PickFreePort(const std::string& host = "127.0.0.1");

// The value of the sample `series` (name and labels exactly as exposed, e.g.
// `inferd_arena_live_bytes{model="mlp",device="cpu:0",arena="io"}`) in a text exposition.
std::optional<double> MetricValue(const std::string& exposition, const std::string& series);

}  // namespace inferd::testing

#endif  // INFERD_TESTS_SERVER_OPS_PROCESS_H_

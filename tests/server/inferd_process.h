// InferdProcess: the real //server:inferd binary, started by a test on a free local port (it binds
// 127.0.0.1:0 and reports the port through --port-file) with a model repository of symlinks to
// generated models. Its stderr goes to a log file the test can read. The destructor kills it if
// it still runs.
//
// Example:
//   InferdProcess::Options o;
//   o.models = {{"mlp", "tools/models/mlp"}};
//   auto inferd = InferdProcess::Start("api", o);
//   ASSERT_TRUE(inferd.ok()) << inferd.status();
//   auto stub = (*inferd)->Stub();
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

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/inference.grpc.pb.h"

namespace inferd::testing {

class InferdProcess {
 public:
  struct Options {
    // Repository entries: <name> -> a model directory, workspace-relative (runfiles), linked as
    // <repository>/<name>.
    std::vector<std::pair<std::string, std::string>> models;
    // Files written into the repository: relative path -> contents (config.yaml, broken models).
    std::vector<std::pair<std::string, std::string>> files;
    // Extra lines under `server:` (two-space indented), and the `models:` section (or empty).
    std::string server_yaml;
    std::string models_yaml;
    std::string log_level = "info";
  };

  static absl::StatusOr<std::unique_ptr<InferdProcess>> Start(const std::string& name,
                                                              const Options& options);
  ~InferdProcess();

  const std::string& address() const { return address_; }  // "127.0.0.1:<port>"
  std::shared_ptr<grpc::Channel> Channel() const;
  std::unique_ptr<inference::GRPCInferenceService::Stub> Stub() const;

  // Sends `sig`; Wait returns the exit status once the process ends (nullopt on timeout;
  // -signal when a signal killed it).
  void Signal(int sig);
  std::optional<int> Wait(absl::Duration timeout);
  bool running();
  std::string Log() const;  // everything it has logged so far

 private:
  InferdProcess() = default;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string dir_;
  std::string log_path_;
  std::string address_;
};

}  // namespace inferd::testing

#endif  // INFERD_TESTS_SERVER_INFERD_PROCESS_H_

#include "tests/server/inferd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"

extern char** environ;

namespace inferd::testing {
namespace fs = std::filesystem;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

absl::StatusOr<std::unique_ptr<InferdProcess>> InferdProcess::Start(const std::string& name,
                                                                    const Options& options) {
  std::unique_ptr<InferdProcess> p(new InferdProcess());
  p->dir_ = (fs::path(engine::testing::TempDir()) / ("inferd_" + name)).string();
  fs::remove_all(p->dir_);
  const fs::path repo = fs::path(p->dir_) / "models";
  fs::create_directories(repo);
  for (const auto& [model, src] : options.models) {
    fs::create_directory_symlink(engine::testing::Runfile(src), repo / model);
  }
  for (const auto& [path, contents] : options.files) {
    fs::create_directories((repo / path).parent_path());
    std::ofstream(repo / path) << contents;
  }
  const std::string config = (fs::path(p->dir_) / "inferd.yaml").string();
  std::ofstream(config) << "server:\n"
                        << "  grpc_address: 127.0.0.1:0\n"
                        << "  admin_address: 127.0.0.1:0\n"
                        << "  metrics_address: 127.0.0.1:0\n"
                        << "  model_repository: models\n"
                        << options.server_yaml
                        << (options.models_yaml.empty() ? "" : "models:\n" + options.models_yaml);
  const std::string port_file = (fs::path(p->dir_) / "port").string();
  p->log_path_ = (fs::path(p->dir_) / "inferd.log").string();

  const std::string binary = engine::testing::Runfile("server/inferd");
  std::vector<std::string> args = {
      binary, "--config", config, "--log-level", options.log_level, "--port-file", port_file};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, p->log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, p->log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  const int rc = posix_spawn(&p->pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot start ", binary, ": ", rc));

  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!fs::exists(port_file)) {
    if (!p->running()) {
      return absl::InternalError(absl::StrCat("inferd exited with ", p->exit_status_.value_or(-1),
                                              " before it was ready; log:\n", p->Log()));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("inferd not ready in 60 s; log:\n", p->Log()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  p->address_ = absl::StrCat("127.0.0.1:", std::stoi(ReadAll(port_file)));
  return p;
}

InferdProcess::~InferdProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    Wait(absl::Seconds(10));
  }
}

std::shared_ptr<grpc::Channel> InferdProcess::Channel() const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<inference::GRPCInferenceService::Stub> InferdProcess::Stub() const {
  return inference::GRPCInferenceService::NewStub(Channel());
}

void InferdProcess::Signal(int sig) {
  if (running()) kill(pid_, sig);
}

bool InferdProcess::running() {
  if (exit_status_) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return false;
}

std::optional<int> InferdProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (running()) {
    if (absl::Now() > deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return exit_status_;
}

std::string InferdProcess::Log() const { return ReadAll(log_path_); }

}  // namespace inferd::testing

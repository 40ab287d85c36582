#include "tests/server/inferd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/testing/runfiles.h"

extern char** environ;

namespace inferd::testing {
namespace fs = std::filesystem;

namespace {

constexpr int kStartAttempts = 5;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

sockaddr_in Ipv4(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  return a;
}

// NULL-terminated pointers into `strings`, for argv and envp.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

int PickFreePort(const std::string& host) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = Ipv4(host, 0);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

std::optional<double> MetricValue(const std::string& exposition, const std::string& series) {
  const std::string prefix = series + " ";
  for (size_t pos = exposition.find(prefix); pos != std::string::npos;
       pos = exposition.find(prefix, pos + 1)) {
    if (pos != 0 && exposition[pos - 1] != '\n') continue;
    const size_t start = pos + prefix.size();
    const std::string value = exposition.substr(start, exposition.find('\n', start) - start);
    if (value == "+Inf") return INFINITY;
    return std::stod(value);
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<InferdProcess>> InferdProcess::Start(const std::string& name,
                                                                    const Options& options) {
  for (int attempt = 1;; ++attempt) {
    std::unique_ptr<InferdProcess> p(new InferdProcess());
    absl::Status s = p->Spawn(name, options);
    if (s.ok()) return p;
    // Another process took the admin or metrics port between PickFreePort and inferd's bind.
    const std::string log = p->Log();
    const bool port_taken =
        absl::StrContains(log, "cannot listen") || absl::StrContains(log, "cannot serve metrics");
    if (!port_taken || !options.retry_taken_ports || attempt == kStartAttempts) return s;
  }
}

namespace {

// Starts `binary` with `args` and `env`, its stdout and stderr appended to `log_path`.
absl::Status SpawnWithLog(const std::string& binary, std::vector<std::string> args,
                          std::vector<std::string> env, const std::string& log_path, pid_t* pid) {
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {1, 2}) {
    posix_spawn_file_actions_addopen(&actions, fd, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
  }
  const int rc = posix_spawn(pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *pid = -1;
    return absl::InternalError(absl::StrCat("cannot start ", binary, ": ", rc));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InferdProcess::Spawn(const std::string& name, const Options& options) {
  // pass 1: a fresh directory (one per attempt) with the model repository and the config.
  static int starts = 0;
  dir_ = (fs::path(engine::testing::TempDir()) /
          absl::StrCat("inferd_", name, "_", getpid(), "_", ++starts))
             .string();
  fs::remove_all(dir_);
  const fs::path repo = fs::path(dir_) / "models";
  fs::create_directories(repo);
  for (const auto& [model, src] : options.models) {
    fs::create_directories((repo / model).parent_path());  // "name/1": a version directory
    fs::create_directory_symlink(engine::testing::Runfile(src), repo / model);
  }
  for (const auto& [path, contents] : options.files) {
    fs::create_directories((repo / path).parent_path());
    std::ofstream(repo / path) << contents;
  }
  repository_ = repo.string();
  const int admin_port =
      options.admin_port != 0 ? options.admin_port : PickFreePort(options.admin_host);
  metrics_port_ = options.metrics_port;
  // Each pick's socket is closed before the next, so the kernel may hand out the same port
  // twice: pick again until it differs (inferd refuses a config where the two collide).
  for (int i = 0; metrics_port_ == 0 || (options.metrics_port == 0 && metrics_port_ == admin_port);
       ++i) {
    if (i == 100) return absl::InternalError("no free port for metrics besides the admin port");
    metrics_port_ = PickFreePort();
  }
  admin_address_ = absl::StrCat("127.0.0.1:", admin_port);
  const std::string config = (fs::path(dir_) / "inferd.yaml").string();
  std::ofstream(config) << "server:\n"
                        << "  http_address: " << options.http_address << "\n"
                        << "  grpc_address: " << options.grpc_address << "\n"
                        << "  admin_address: " << options.admin_host << ":" << admin_port << "\n"
                        << "  metrics_address: 127.0.0.1:" << metrics_port_ << "\n"
                        << "  model_repository: models\n"
                        << options.server_yaml
                        << (options.models_yaml.empty() ? "" : "models:\n" + options.models_yaml);
  const std::string port_file = (fs::path(dir_) / "port").string();
  const std::string http_port_file = (fs::path(dir_) / "http_port").string();
  log_path_ = (fs::path(dir_) / "inferd.log").string();

  // pass 2: spawn inferd, its stdout and stderr appended to the log.
  const char* override_binary = std::getenv("INFERD_BINARY");
  const std::string binary = override_binary != nullptr && *override_binary != '\0'
                                 ? std::string(override_binary)
                                 : engine::testing::Runfile("server/inferd");
  std::vector<std::string> args = {binary,    "--log-level",      options.log_level, "--port-file",
                                   port_file, "--http-port-file", http_port_file};
  if (options.triton_command_line) {
    for (std::string a : {"--model-repository=" + repository_, std::string("--grpc-port=0"),
                          std::string("--http-port=0"), absl::StrCat("--admin-port=", admin_port),
                          absl::StrCat("--metrics-port=", metrics_port_)}) {
      args.push_back(std::move(a));
    }
  } else {
    args.push_back("--config");
    args.push_back(config);
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  for (const auto& [k, v] : options.env) env.push_back(k + "=" + v);
  if (absl::Status s = SpawnWithLog(binary, args, env, log_path_, &pid_); !s.ok()) return s;

  // pass 3: ready once it has written the gRPC port it bound (or logged what the test waits for).
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  const bool wait_log = !options.started_when_logged.empty();
  while (wait_log ? !absl::StrContains(Log(), options.started_when_logged)
                  : !fs::exists(port_file)) {
    if (!running()) {
      return absl::InternalError(absl::StrCat("inferd exited with ", exit_status_.value_or(-1),
                                              " before it was ready; log:\n", Log()));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("inferd not ready in 60 s; log:\n", Log()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (!wait_log) {
    address_ = absl::StrCat("127.0.0.1:", std::stoi(ReadAll(port_file)));
    http_port_ = std::stoi(ReadAll(http_port_file));  // written before the gRPC one
  }
  return absl::OkStatus();
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

std::unique_ptr<inferd::admin::v1::Admin::Stub> InferdProcess::AdminStub() const {
  return inferd::admin::v1::Admin::NewStub(
      grpc::CreateChannel(admin_address_, grpc::InsecureChannelCredentials()));
}

absl::StatusOr<std::string> InferdProcess::ScrapeMetrics() const {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = Ipv4("127.0.0.1", metrics_port_);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to metrics port ", metrics_port_));
  }
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("cannot send the metrics request");
  }
  std::string response;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) response.append(buf, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (!absl::StartsWith(response, "HTTP/1.") || body == std::string::npos ||
      response.substr(9, 3) != "200") {
    return absl::UnavailableError(absl::StrCat("bad metrics response: ", response.substr(0, 200)));
  }
  return response.substr(body + 4);
}

void InferdProcess::Signal(int sig) {
  if (running()) kill(pid_, sig);
}

// False before a successful spawn (pid_ -1: waitpid must not reap some other child).
bool InferdProcess::running() {
  if (pid_ <= 0 || exit_status_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == 0) return true;
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

bool InferdProcess::WaitForLog(const std::string& text, absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (!absl::StrContains(Log(), text)) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

}  // namespace inferd::testing

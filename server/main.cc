// inferd: the daemon's entry point.
//
//   inferd --config FILE [--log-level trace|debug|info|warn|error] [--port-file FILE]
//   inferd --model-repository DIR [tritonserver's flags: --grpc-port, --model-control-mode ...]
//   inferd --version | --help
//
// Reads the config (a bad file is refused with file, line and reason), overlays tritonserver's
// flags (server/command_line_config.h; with --model-repository no YAML is needed), sets up
// logging (spdlog to stderr; JSON lines with log_json), starts InferdServer and serves. With
// model_control: poll the repository is re-read every repository_poll_interval, as on SIGHUP.
//
// Signals (docs/signals.md):
//   SIGTERM, SIGINT, SIGQUIT: stop accepting calls, drain in-flight requests (at most
//     drain_timeout), exit 0. During start-up loading: no further model loads; a model still
//     loading 1 s later is not waited for (exit 0 at once: nothing was served ready).
//   SIGHUP: re-read the model repository (server/repository_reload.h): changed models reload,
//     new ones load, removed ones unload; calls in flight are unaffected. The main config file
//     is not re-read (server settings need a restart).
// --port-file writes the bound gRPC port (useful with port 0) once the server is ready;
// --http-port-file the bound HTTP/REST port (0 with http_address: none).
#include <grpc/grpc.h>
#include <signal.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "base/flags.h"
#include "server/command_line_config.h"
#include "server/config.h"
#include "server/server.h"
#include "server/version.h"

ABSL_FLAG(std::string, config, "",
          "the server's YAML config file (optional with --model-repository)");
ABSL_FLAG(std::string, log_level, "",
          "trace, debug, info, warn, error or off; overrides the config's server.log_level");
ABSL_FLAG(std::string, port_file, "",
          "write the bound gRPC port to this file once the server is ready (useful with port 0)");
ABSL_FLAG(std::string, http_port_file, "",
          "write the bound HTTP/REST port to this file once the server is ready (0: no HTTP)");
// tritonserver's flags (docs/triton.md). Ports: -1 = the config's.
ABSL_FLAG(std::string, model_repository, "",
          "serve this Triton-style model repository (server.model_repository)");
ABSL_FLAG(int, http_port, -1, "KServe HTTP port (the config's host, default 127.0.0.1)");
ABSL_FLAG(int, grpc_port, -1, "KServe gRPC port (the config's host, default 127.0.0.1)");
ABSL_FLAG(int, metrics_port, -1, "Prometheus metrics port (the config's host)");
ABSL_FLAG(int, admin_port, -1, "inferd's admin API port (the config's host)");
ABSL_FLAG(std::string, http_address, "", "host the HTTP listener binds (e.g. 0.0.0.0)");
ABSL_FLAG(std::string, grpc_address, "", "host the gRPC listener binds (e.g. 0.0.0.0)");
ABSL_FLAG(std::string, metrics_address, "", "host the metrics listener binds (e.g. 0.0.0.0)");
ABSL_FLAG(std::string, model_control_mode, "", "none, poll or explicit (server.model_control)");
ABSL_FLAG(inferd::RepeatedFlag, load_model, {},
          "with --model-control-mode=explicit: a model to load at start-up (repeatable; * = all)");
ABSL_FLAG(int, repository_poll_secs, -1, "seconds between repository polls (poll mode)");
ABSL_FLAG(int, exit_timeout_secs, -1, "seconds shutdown waits for in-flight requests");
ABSL_FLAG(int, log_verbose, 0, "> 0: debug logging");
ABSL_FLAG(bool, allow_http, true, "false: no HTTP listener");
ABSL_FLAG(bool, allow_grpc, true, "accepted as true only: gRPC is inferd's main front end");
ABSL_FLAG(bool, allow_metrics, true, "accepted as true only: metrics always serve");
ABSL_FLAG(bool, strict_model_config, false,
          "accepted; false (the default) as in Triton: configs are completed from the model");

namespace {

using inferd::server::LogLevel;

constexpr char kUsage[] =
    "usage: inferd --config FILE [--log-level trace|debug|info|warn|error] [--port-file FILE]\n"
    "       inferd --model-repository DIR [--grpc-port N] [--http-port N] [--metrics-port N]\n"
    "              [--model-control-mode none|poll|explicit] [--load-model NAME]...\n"
    "       inferd --version\n";
constexpr int kUsageError = 2;

// %* in a pattern: the message, escaped for a JSON string.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : msg.payload) {
      switch (c) {
        case '"':
          dest.append(std::string_view("\\\""));
          break;
        case '\\':
          dest.append(std::string_view("\\\\"));
          break;
        case '\n':
          dest.append(std::string_view("\\n"));
          break;
        case '\t':
          dest.append(std::string_view("\\t"));
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            dest.append(std::string_view(buf));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

spdlog::level::level_enum SpdlogLevel(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

void SetUpLogging(bool json, spdlog::level::level_enum level) {
  auto logger = spdlog::stderr_color_mt("inferd");
  if (json) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonMessageFlag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%f%z","level":"%l","thread":%t,"msg":"%*"})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%L%$ %t %v");
  }
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// The command line, checked: a missing --config or an unknown --log-level is a usage error.
struct Options {
  inferd::server::CommandLineOverrides overrides;  // --config and tritonserver's flags
  std::string port_file;
  std::string http_port_file;
  std::optional<spdlog::level::level_enum> level;  // --log-level, over the config's
};

std::optional<int> SetInt(int value) {
  return value < 0 ? std::nullopt : std::optional<int>(value);
}

// tritonserver's flags, as parsed.
inferd::server::CommandLineOverrides Overrides() {
  inferd::server::CommandLineOverrides o;
  o.config_path = absl::GetFlag(FLAGS_config);
  o.model_repository = absl::GetFlag(FLAGS_model_repository);
  o.http_port = SetInt(absl::GetFlag(FLAGS_http_port));
  o.grpc_port = SetInt(absl::GetFlag(FLAGS_grpc_port));
  o.metrics_port = SetInt(absl::GetFlag(FLAGS_metrics_port));
  o.admin_port = SetInt(absl::GetFlag(FLAGS_admin_port));
  o.http_host = absl::GetFlag(FLAGS_http_address);
  o.grpc_host = absl::GetFlag(FLAGS_grpc_address);
  o.metrics_host = absl::GetFlag(FLAGS_metrics_address);
  o.model_control_mode = absl::GetFlag(FLAGS_model_control_mode);
  o.load_models = absl::GetFlag(FLAGS_load_model).values;
  o.repository_poll_secs = SetInt(absl::GetFlag(FLAGS_repository_poll_secs));
  o.exit_timeout_secs = SetInt(absl::GetFlag(FLAGS_exit_timeout_secs));
  o.log_verbose = absl::GetFlag(FLAGS_log_verbose);
  o.allow_http = absl::GetFlag(FLAGS_allow_http);
  return o;
}

Options ParseOptions(int argc, char** argv) {
  // --version is not an ABSL_FLAG: Abseil's usage library defines one of that name.
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-version") == 0) {
      std::cout << inferd::server::kInferdName << " " << inferd::server::kInferdVersion << "\n";
      std::exit(0);
    }
  }
  const std::vector<std::string> positional =
      inferd::ParseCommandLine(argc, argv,
                               inferd::CommandLineSpec{kUsage,
                                                       {"config",
                                                        "model-repository",
                                                        "log-level",
                                                        "port-file",
                                                        "http-port-file",
                                                        "grpc-port",
                                                        "http-port",
                                                        "metrics-port",
                                                        "admin-port",
                                                        "grpc-address",
                                                        "http-address",
                                                        "metrics-address",
                                                        "model-control-mode",
                                                        "load-model",
                                                        "repository-poll-secs",
                                                        "exit-timeout-secs",
                                                        "log-verbose",
                                                        "allow-http",
                                                        "allow-grpc",
                                                        "allow-metrics",
                                                        "strict-model-config"},
                                                       kUsageError});
  const auto usage_error = [](const std::string& what) {
    std::cerr << "inferd: " << what << "\n" << kUsage;
    std::exit(kUsageError);
  };
  if (!positional.empty()) usage_error("unknown argument '" + positional[0] + "'");
  Options o;
  o.overrides = Overrides();
  o.port_file = absl::GetFlag(FLAGS_port_file);
  o.http_port_file = absl::GetFlag(FLAGS_http_port_file);
  if (o.overrides.config_path.empty() && o.overrides.model_repository.empty()) {
    usage_error("--config FILE or --model-repository DIR is required");
  }
  if (!absl::GetFlag(FLAGS_allow_grpc)) {
    usage_error("--allow-grpc=false is not supported: gRPC is inferd's main front end");
  }
  if (!absl::GetFlag(FLAGS_allow_metrics)) {
    usage_error("--allow-metrics=false is not supported: bind metrics to loopback instead");
  }
  const std::string log_level = absl::GetFlag(FLAGS_log_level);
  if (!log_level.empty()) {
    o.level = spdlog::level::from_str(log_level);
    if (*o.level == spdlog::level::off && log_level != "off") {
      usage_error("unknown --log-level '" + log_level + "'");
    }
  }
  return o;
}

// What the signal thread tells the main thread. Lives for the whole process (the signal thread
// may still read it while main returns).
struct SignalState {
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> stop{false};  // also polled by start-up loading and reloads
  // Protected by mu.
  int stop_signal = 0;   // the first SIGTERM / SIGINT / SIGQUIT
  int reloads = 0;       // SIGHUPs not handled yet (several in a row make one reload)
  bool started = false;  // InferdServer::Start has returned
  bool exiting = false;  // the signal thread's next wake-up ends it
};

const char* SignalName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGHUP:
      return "SIGHUP";
  }
  return "a signal";
}

// How long a stop signal during start-up waits for the model being loaded before inferd exits
// without it (a load cannot be cut short, and nothing was served ready yet).
constexpr absl::Duration kStartupStopGrace = absl::Seconds(1);

// The signal thread: sigwait()s for `signals` (blocked in every thread) and hands them to the
// main thread through `state`. A stop signal while Start is still loading a model exits the
// process after kStartupStopGrace.
void HandleSignals(const sigset_t signals, SignalState* state) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    std::unique_lock<std::mutex> lock(state->mu);
    if (state->exiting) return;
    if (sig == SIGHUP) {
      if (!state->started) {
        spdlog::info("SIGHUP during start-up: the repository is re-read once loading ends");
      }
      ++state->reloads;
      state->cv.notify_all();
      continue;
    }
    if (state->stop_signal != 0) {
      spdlog::info("received {} again: already stopping", SignalName(sig));
      continue;
    }
    state->stop_signal = sig;
    state->stop.store(true);
    state->cv.notify_all();
    if (state->started) {
      spdlog::info("received {}", SignalName(sig));
      continue;
    }
    spdlog::info("received {} during start-up: loading no further models", SignalName(sig));
    if (!state->cv.wait_for(lock, absl::ToChronoSeconds(kStartupStopGrace),
                            [state] { return state->started; })) {
      spdlog::warn(
          "a model is still loading {} after {}: exiting without waiting for it (inferd was "
          "never ready)",
          absl::FormatDuration(kStartupStopGrace), SignalName(sig));
      // Flush, but keep the logger: the loading thread may still log until the process ends.
      spdlog::default_logger()->flush();
      std::_Exit(0);
    }
  }
}

// Serves until a stop signal; handles SIGHUPs meanwhile (repository reloads, on this thread),
// and with model_control: poll re-reads the repository every `poll` the same way.
void ServeUntilStopped(inferd::server::InferdServer& server, SignalState& state,
                       std::optional<absl::Duration> poll) {
  std::unique_lock<std::mutex> lock(state.mu);
  for (;;) {
    const auto woken = [&state] { return state.stop_signal != 0 || state.reloads > 0; };
    if (poll) {
      state.cv.wait_for(lock, absl::ToChronoMilliseconds(*poll), woken);
    } else {
      state.cv.wait(lock, woken);
    }
    if (state.stop_signal != 0) return;
    state.reloads = 0;
    lock.unlock();
    server.ReloadRepository(&state.stop);  // logs what it did
    lock.lock();
  }
}

// Starts the server, writes the port file, serves until SIGTERM, SIGINT or SIGQUIT (SIGHUP:
// reload the model repository), drains. Returns the exit status.
int Serve(const std::shared_ptr<const inferd::server::Config>& config, const std::string& port_file,
          const std::string& http_port_file) {
  // Block the signals before any thread starts (threads inherit the mask; one that did not
  // block them would be killed by their default action), then take them on a thread of their
  // own, so that they are handled while the models load.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  static SignalState* const state = new SignalState();  // outlives the signal thread
  std::thread signal_thread(HandleSignals, signals, state);
  const auto end_signal_thread = [&signal_thread] {
    {
      std::lock_guard<std::mutex> lock(state->mu);
      state->exiting = true;
    }
    pthread_kill(signal_thread.native_handle(), SIGHUP);
    signal_thread.join();
  };

  // Hold gRPC's library for the life of the process: when ~Server drops the last reference,
  // grpc_shutdown may wait up to 10 s for an idle executor thread's poll to time out.
  grpc_init();

  spdlog::info("{} {} starting with {}", inferd::server::kInferdName,
               inferd::server::kInferdVersion, config->file);
  inferd::server::InferdServerOptions options;
  options.stop = &state->stop;
  absl::StatusOr<std::unique_ptr<inferd::server::InferdServer>> server =
      inferd::server::InferdServer::Start(config, options);
  {
    std::lock_guard<std::mutex> lock(state->mu);
    state->started = true;
  }
  state->cv.notify_all();
  if (!server.ok()) {
    spdlog::error("cannot start: {}", std::string(server.status().message()));
    end_signal_thread();
    return 1;
  }
  if (!(*server)->interrupted()) {
    // The HTTP port first: a harness that waits for --port-file then finds both.
    if (!http_port_file.empty() && !WritePortFile(http_port_file, (*server)->http_port())) {
      spdlog::error("cannot write --http-port-file {}", http_port_file);
      end_signal_thread();
      return 1;
    }
    if (!port_file.empty() && !WritePortFile(port_file, (*server)->grpc_port())) {
      spdlog::error("cannot write --port-file {}", port_file);
      end_signal_thread();
      return 1;
    }
    std::optional<absl::Duration> poll;
    if (config->server.model_control == inferd::server::ModelControl::kPoll) {
      poll = config->server.repository_poll_interval;
      spdlog::info("model_control poll: re-reading the repository every {}",
                   absl::FormatDuration(*poll));
    }
    ServeUntilStopped(**server, *state, poll);
  }
  (*server)->Shutdown(config->server.drain_timeout);
  server->reset();
  end_signal_thread();
  spdlog::info("bye");
  spdlog::shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  absl::StatusOr<std::shared_ptr<const inferd::server::Config>> config =
      inferd::server::BuildConfig(options.overrides);
  if (!config.ok()) {
    std::cerr << "inferd: " << config.status().message() << "\n";
    return 1;
  }
  SetUpLogging((*config)->server.log_json,
               options.level.value_or(SpdlogLevel((*config)->server.log_level)));
  return Serve(*config, options.port_file, options.http_port_file);
}

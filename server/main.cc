// inferd: the daemon's entry point.
//
//   inferd --config FILE [--log-level trace|debug|info|warn|error] [--port-file FILE]
//   inferd --version | --help
//
// Reads the config (a bad file is refused with file, line and reason), sets up logging (spdlog
// to stderr; JSON lines with log_json), starts InferdServer and serves.
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
#include "server/config.h"
#include "server/server.h"
#include "server/version.h"

ABSL_FLAG(std::string, config, "", "the server's YAML config file (required)");
ABSL_FLAG(std::string, log_level, "",
          "trace, debug, info, warn, error or off; overrides the config's server.log_level");
ABSL_FLAG(std::string, port_file, "",
          "write the bound gRPC port to this file once the server is ready (useful with port 0)");
ABSL_FLAG(std::string, http_port_file, "",
          "write the bound HTTP/REST port to this file once the server is ready (0: no HTTP)");

namespace {

using inferd::server::LogLevel;

constexpr char kUsage[] =
    "usage: inferd --config FILE [--log-level trace|debug|info|warn|error] [--port-file FILE]\n"
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
  std::string config_path;
  std::string port_file;
  std::string http_port_file;
  std::optional<spdlog::level::level_enum> level;  // --log-level, over the config's
};

Options ParseOptions(int argc, char** argv) {
  // --version is not an ABSL_FLAG: Abseil's usage library defines one of that name.
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "-version") == 0) {
      std::cout << inferd::server::kInferdName << " " << inferd::server::kInferdVersion << "\n";
      std::exit(0);
    }
  }
  const std::vector<std::string> positional = inferd::ParseCommandLine(
      argc, argv,
      inferd::CommandLineSpec{kUsage, {"config", "log-level", "port-file", "http-port-file"}, kUsageError});
  const auto usage_error = [](const std::string& what) {
    std::cerr << "inferd: " << what << "\n" << kUsage;
    std::exit(kUsageError);
  };
  if (!positional.empty()) usage_error("unknown argument '" + positional[0] + "'");
  Options o;
  o.config_path = absl::GetFlag(FLAGS_config);
  o.port_file = absl::GetFlag(FLAGS_port_file);
  o.http_port_file = absl::GetFlag(FLAGS_http_port_file);
  if (o.config_path.empty()) usage_error("--config is required");
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

// Serves until a stop signal; handles SIGHUPs meanwhile (repository reloads, on this thread).
void ServeUntilStopped(inferd::server::InferdServer& server, SignalState& state) {
  std::unique_lock<std::mutex> lock(state.mu);
  for (;;) {
    state.cv.wait(lock, [&state] { return state.stop_signal != 0 || state.reloads > 0; });
    if (state.stop_signal != 0) return;
    state.reloads = 0;
    lock.unlock();
    server.ReloadRepository(&state.stop);  // logs what it did
    lock.lock();
  }
}

// Starts the server, writes the port file, serves until SIGTERM, SIGINT or SIGQUIT (SIGHUP:
// reload the model repository), drains. Returns the exit status.
int Serve(const std::shared_ptr<const inferd::server::Config>& config,
          const std::string& port_file, const std::string& http_port_file) {
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
    ServeUntilStopped(**server, *state);
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
      inferd::server::LoadConfig(options.config_path);
  if (!config.ok()) {
    std::cerr << "inferd: " << config.status().message() << "\n";
    return 1;
  }
  SetUpLogging((*config)->server.log_json,
               options.level.value_or(SpdlogLevel((*config)->server.log_level)));
  return Serve(*config, options.port_file, options.http_port_file);
}

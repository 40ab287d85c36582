// Config: the daemon's settings, read from one YAML file into one immutable object.
//
// LoadConfig reads the file, checks every key (unknown keys are errors, so typos are never
// silently ignored) and returns a `shared_ptr<const Config>`; nothing changes it afterwards, so
// any number of threads may read it without synchronization. A bad file is refused with the file,
// line and reason, e.g.
//   inferd.yaml:14: models[1].threads: expected a positive integer, got 'two'
//
// The file (server/testdata/inferd.yaml is the documented example, with every key):
//
//   server:                          # the ports are Triton's: HTTP 8000, gRPC 8001, metrics 8002
//     http_address: 0.0.0.0:8000       # KServe v2 HTTP/REST; default 127.0.0.1:8000; none: off
//     grpc_address: 0.0.0.0:8001       # KServe v2 gRPC; default 127.0.0.1:8001
//     metrics_address: 0.0.0.0:8002    # Prometheus HTTP; default 127.0.0.1:8002
//     admin_address: 0.0.0.0:8003      # admin API; default 127.0.0.1:8003
//     admin_token_env: INFERD_ADMIN_TOKEN   # or admin_token: "<token>"; not both
//     tls: {cert_file: tls/server.crt, key_file: tls/server.key}   # optional; both or neither
//     max_message_bytes: 64MiB         # default 256MiB; at most 2147483647 (gRPC's limit)
//     model_repository: models         # required: a directory of <name>/model.onnx (or
//                                      # Triton's <name>/config.pbtxt + <name>/<N>/model.onnx)
//     drain_timeout: 15s               # default 10s; bounded wait for in-flight requests
//     log_level: info                  # trace | debug | info (default) | warn | error
//     log_json: true                   # default false
//     load_all_models: true            # default true: load every model of the repository
//     model_control: explicit          # none (default) | explicit: RepositoryModelLoad/Unload |
//                                      # poll: re-read the repository every poll interval
//     repository_poll_interval: 30s    # model_control: poll only; default 15s
//     limits:
//       max_loaded_models: 32          # default 256; at most 4096
//       host_memory: 48GiB             # weights + arenas of all loaded models on host devices;
//                                      # default: the machine's physical memory; or unbounded
//   models:                            # a list (as here) or a map keyed by model name
//     - name: decoder                  # a model name (see Names below); unique
//       path: llm/decoder_step.onnx    # default <name>/model.onnx, relative to the repository
//       version: "3"                   # default "1"
//       threads: 4                     # intra-op threads; default 1; at most 256
//       max_concurrent_runs: 2         # default 1; at most 256
//       queue_length: 128              # requests waiting beyond the running ones; default 64;
//                                      # at most 65536
//       when_busy: fail_fast           # wait (default) | fail_fast, when all runs are busy
//       pre_allocate: true             # allocate the static plan's blocks at load; default false
//       fixed_input_shapes: {input_ids: [1, 16]}        # input -> shape (dims >= 0)
//       max_input_shapes: {past_key: [1, 8, 2048, 64]}  # input -> largest shape (dims >= 1)
//       partition:
//         devices: {cpu:1: 512MiB, cpu:0: 2GiB, cuda:0: ~}   # device -> budget (~ or none: none)
//         name_rules: "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)"   # or annotation_rules
//         fallback_device: cpu:0       # default cpu:0
//         fallback_on_missing_device: true   # default false: a missing device fails the load
//       retention_caps:                # device -> arena -> cap; unset or `unbounded`: no cap
//         cpu:0: {execution: 512MiB, io: 1GiB}
//       enable_fusions: true           # default true
//       max_batch_size: 8              # default 0: no batch dimension (Triton's meaning);
//                                      # N: dim 0 of every input / output is the batch, <= N
//       dynamic_batching:              # gather requests into one run; needs max_batch_size > 0
//         preferred_batch_sizes: [4, 8]    # ascending, <= max_batch_size; default: none (run
//                                      # what is there, up to the max)
//         max_queue_delay: 500us       # how long the oldest request waits for others; default 0
//         preserve_ordering: false     # true: responses leave in arrival order
//         priority_levels: 2           # default 0 (one level); requests send `priority` 1..N,
//                                      # 1 the highest (Triton's meaning)
//         default_priority_level: 2    # required with priority_levels: a request's default
//         default_queue_timeout: 10ms  # shorthand for default_queue_policy.timeout
//         default_queue_policy:        # for every level without its own
//           timeout: 10ms              # queued longer: timed out; default 0: never
//           timeout_action: reject     # reject (UNAVAILABLE, default) | delay (served after the
//                                      # requests that have not timed out)
//           allow_timeout_override: false  # a request's `timeout` parameter (us) may lower it
//           max_queue_size: 0          # waiting requests of the level; 0: queue_length
//         priority_queue_policy: {1: {timeout: 1ms}}   # level -> policy (keys as above)
//
//       generation:                  # a decoder model folder (model.onnx, config.json,
//                                      # tokenizer.json or tokenizer.model) served by
//                                      # ModelStreamInfer, one response per token
//                                      # (docs/generation.md); ModelInfer refuses it
//         max_length: 512              # positions a sequence may reach (prompt + answer);
//                                      # default: the model's, at most 2048
//         max_sequences: 4             # sequences generating at once; default 4, at most 256
//         kv_cache_budget: 64MiB       # KV bytes all sequences may hold; default max_sequences
//                                      # full-length blocks. A sequence whose block would not
//                                      # fit is refused before it starts (RESOURCE_EXHAUSTED)
//         default_max_tokens: 128      # when a request gives no max_tokens; default 128
//
// A model folder may instead hold Triton's config.pbtxt (server/triton_config.h), read into
// the same ModelConfig; a config.yaml beside it adds inferd's own settings. tritonserver's
// command line (--model-repository, --grpc-port, --model-control-mode, ...) overlays this file,
// or replaces it (server/command_line_config.h, docs/triton.md); every rule below still applies.
//
// Values:
// - Byte sizes: a plain integer, or a number and a unit, case-sensitive: B, KiB, MiB, GiB, TiB
//   (1024-based), KB, MB, GB, TB (1000-based); a space is allowed ("512 MiB"); fractions must
//   come to whole bytes ("1.5GiB").
// - Durations: a number and a unit: ns, us, ms, s, m, h, combinable ("250ms", "10s", "1m30s").
// - Devices: `cpu` (read as `cpu:0`), `cpu:N`, `cuda:N`. Only the syntax is checked here; that
//   the device exists is checked when the model loads.
// - Booleans: true or false.
// - Addresses: host:port, or `none` for http_address (no HTTP listener).
//
// Names: a model name is 1 to 128 characters of letters, digits, '_', '-' and '.', not starting
// with '.' (so never a path, never '.' or '..'). The same rule (ValidateModelName) applies to the
// config's models, to the repository's directories (others are skipped with a warning), and to
// every RPC that takes a model name (INVALID_ARGUMENT otherwise, quoting at most 64 bytes).
//
// Bounds (each error names the bound and the value): max_batch_size at most 65536, at most 64
// preferred_batch_sizes, max_queue_delay at most 10s, queue timeouts at most 1h, at most 256
// priority_levels; threads and max_concurrent_runs at most 256
// each (the largest hosts have about 256 hardware threads; more only contend) and their product
// at most 4096 threads per model; queue_length at most 65536; at most 1024 models; at most 64
// partition devices and 64 retention_caps devices; name_rules / annotation_rules at most 64 KiB;
// at most 1024 inputs in each of fixed_input_shapes and max_input_shapes, of rank at most 64,
// each dim at most 2^31-1 and at most 2^40 elements in all; max_loaded_models at most 4096; an
// admin token 1 to 4096 visible ASCII characters (no spaces or control characters: an HTTP/2
// header value cannot carry them, and a token of spaces is no secret).
//
// Security-relevant defaults (docs/security.md says why):
// - the three listeners bind to 127.0.0.1;
// - model_control: none: RepositoryModelLoad/Unload answer FAILED_PRECONDITION. With
//   `model_control: explicit` they load / unload (a load of a loaded model reloads it, as in
//   Triton's explicit mode); when an admin token is configured, they must carry it
//   (`authorization: Bearer <token>`), and explicit model control on a non-loopback grpc_address
//   requires a token;
// - limits: max_loaded_models 256, host_memory the physical memory (a load that would pass it is
//   refused with the partitioner's report instead of swapping or meeting the OOM killer).
//
// Rules beyond single values:
// - The admin API bound to a non-loopback host requires a token (admin_token or admin_token_env);
//   loopback is 127.0.0.0/8, ::1, localhost, or a unix: socket.
// - tls takes both cert_file and key_file; partition takes name_rules or annotation_rules, not
//   both; model names are unique; an input is in fixed_input_shapes or max_input_shapes, not both;
//   the four addresses differ (port 0, "pick a free port", excepted). Quote IPv6 addresses
//   ("[::1]:8001"): unquoted, YAML reads a bracket as a list.
//
// Paths: a model's folder is <model_repository>/<name>: a name cannot leave the repository. The
// folder may be a symlink (it is the operator's entry in the repository). Its config.yaml and
// the model file that config.yaml's `path` names must resolve, after symlinks, to regular files
// inside the folder (a config.yaml's content shows in its errors; a FIFO must not block
// loading). The default <name>/model.onnx must be a regular file and may be a link (Bazel's
// runfiles, a shared model store); its external data stays beside the file it resolves to. A
// `path` in the main config is the operator's own: absolute, or relative to the repository.
//
// Paths: ParseConfig keeps them as written. LoadConfig resolves relative model_repository and tls
// paths against the config file's directory, resolves admin_token_env from the environment (an
// unset or empty variable is an error), and checks that model_repository is a directory and the
// tls files are readable, each error with its line. Model paths stay relative to the repository.
//
// Per-model config.yaml: a model directory may hold a config.yaml with the per-model keys (not
// `name`: the directory names the model). Its `path` is relative to that model directory and may
// not leave it. MergeModelConfig combines it with the main file's entry: per key, a setting
// written in the main config wins; partition.devices, the maps of input shapes, and retention_caps
// are taken whole from one file, and name_rules / annotation_rules count as one setting (the rule
// mode comes from one file).
#ifndef INFERD_SERVER_CONFIG_H_
#define INFERD_SERVER_CONFIG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/config_values.h"

namespace inference {
class ModelConfig;  // proto/model_config.proto (Triton's config.pbtxt)
}  // namespace inference

namespace inferd::server {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };
enum class WhenBusy { kWait, kFailFast };
enum class ModelControl { kNone, kExplicit, kPoll };

// The bounds of the config's counts (see "Bounds" above).
inline constexpr int kMaxModelNameLength = 128;
inline constexpr int kMaxThreads = 256;
inline constexpr int kMaxConcurrentRuns = 256;
inline constexpr int kMaxThreadsPerModel = 4096;  // threads x max_concurrent_runs
inline constexpr int kMaxQueueLength = 65536;
inline constexpr int kMaxModels = 1024;
inline constexpr int kMaxDevices = 64;
inline constexpr int kMaxRulesBytes = 64 << 10;
inline constexpr int kMaxShapeInputs = 1024;
inline constexpr int kMaxShapeRank = 64;
inline constexpr int64_t kMaxShapeDim = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxShapeElements = int64_t{1} << 40;
inline constexpr int kMaxLoadedModelsBound = 4096;
inline constexpr int kMaxAdminTokenBytes = 4096;
inline constexpr int kMaxBatchSize = 65536;
inline constexpr int kMaxPreferredBatchSizes = 64;
inline constexpr int kMaxPriorityLevels = 256;
inline constexpr absl::Duration kMaxQueueDelay = absl::Seconds(10);
inline constexpr absl::Duration kMaxQueueTimeout = absl::Hours(1);

struct TlsConfig {
  std::string cert_file;  // PEM certificate chain
  std::string key_file;   // PEM private key
};

struct ResourceLimits {
  int max_loaded_models = 256;
  // Host (cpu:N) bytes of weights and arenas of all loaded models, as the partitioner accounts
  // them; nullopt: unbounded. Default (DefaultHostMemory): the machine's physical memory.
  std::optional<uint64_t> host_memory_bytes = DefaultHostMemory();

  // sysconf's physical pages x page size; nullopt when the system does not say.
  static std::optional<uint64_t> DefaultHostMemory();
};

struct ServerConfig {
  std::string http_address = "127.0.0.1:8000";  // empty: no HTTP listener (`none` in the file)
  std::string grpc_address = "127.0.0.1:8001";
  std::string metrics_address = "127.0.0.1:8002";
  std::string admin_address = "127.0.0.1:8003";
  std::optional<TlsConfig> tls;
  uint64_t max_message_bytes = uint64_t{256} << 20;
  // The bearer token the admin API requires; empty: none (only allowed on loopback). From
  // admin_token, or (LoadConfig) from the variable named by admin_token_env.
  std::string admin_token;
  std::string admin_token_env;  // the variable's name, as written; empty when not used
  std::string model_repository;
  absl::Duration drain_timeout = absl::Seconds(10);
  LogLevel log_level = LogLevel::kInfo;
  bool log_json = false;
  bool load_all_models = true;
  ModelControl model_control = ModelControl::kNone;
  absl::Duration repository_poll_interval = absl::Seconds(15);  // model_control: poll
  ResourceLimits limits;
};

struct DeviceBudget {
  std::string device;                    // normalised: "cpu:0", "cuda:1"
  std::optional<uint64_t> budget_bytes;  // nullopt: no budget
};

struct PartitionConfig {
  std::vector<DeviceBudget> devices;  // in file order; device names unique
  std::string name_rules;             // at most one of name_rules and annotation_rules is set
  std::string annotation_rules;
  std::string fallback_device = "cpu:0";
  bool fallback_on_missing_device = false;
};

struct RetentionCaps {
  std::optional<uint64_t> execution_bytes;  // nullopt: unbounded
  std::optional<uint64_t> io_bytes;
};

// What happens to a request that waits in the batching queue too long (Triton's
// ModelQueuePolicy).
struct QueuePolicy {
  absl::Duration default_timeout = absl::ZeroDuration();  // zero: no timeout
  bool reject_on_timeout = true;                          // false: Triton's DELAY
  bool allow_timeout_override = false;  // a request's `timeout` parameter may shorten it
  int max_queue_size = 0;               // 0: the model's queue_length
};

// Requests gathered into one run (Triton's dynamic_batching). Needs max_batch_size > 0.
struct DynamicBatching {
  std::vector<int> preferred_batch_sizes;  // ascending; empty: up to max_batch_size
  absl::Duration max_queue_delay = absl::ZeroDuration();
  bool preserve_ordering = false;
  int priority_levels = 0;  // 0: one level; else requests carry `priority` 1..levels
  int default_priority_level = 0;
  QueuePolicy default_queue_policy;
  std::map<int, QueuePolicy> priority_queue_policy;  // by priority level
};

// A generative model's serving settings (the `generation` key).
struct GenerationSettings {
  int max_length = 0;  // 0: the model's maximum, at most genai::kDefaultMaxLength
  int max_sequences = 4;
  std::optional<uint64_t> kv_cache_budget;  // nullopt: max_sequences full-length blocks
  int default_max_tokens = 128;
};

struct ModelConfig {
  std::string name;
  std::string path;  // relative to the model repository (or absolute)
  std::string version = "1";
  int threads = 1;
  int max_concurrent_runs = 1;
  int queue_length = 64;
  WhenBusy when_busy = WhenBusy::kWait;
  bool pre_allocate = false;
  std::map<std::string, std::vector<int64_t>> fixed_input_shapes;
  std::map<std::string, std::vector<int64_t>> max_input_shapes;
  PartitionConfig partition;
  std::map<std::string, RetentionCaps> retention_caps;  // by normalised device
  bool enable_fusions = true;
  // Triton's batching contract: 0, the model takes whole tensors; N > 0, every input and
  // output has a leading batch dimension of at most N.
  int max_batch_size = 0;
  std::optional<DynamicBatching> dynamic_batching;
  // A Triton model folder's config.pbtxt as parsed (server/triton_config.h); null for a model
  // configured by YAML only. The ModelConfig RPC echoes it.
  std::shared_ptr<const inference::ModelConfig> triton;
  // Set for a generative model (served by ModelStreamInfer).
  std::optional<GenerationSettings> generation;

  // Where these settings were read ("inferd.yaml:12"; two places, joined by " + ", after a
  // merge), for messages.
  std::string source;
  // The keys written in the file ("threads", "partition.devices", "partition.rules", ...);
  // MergeModelConfig uses them to let the main config win key by key.
  std::set<std::string> keys_set;
};

struct Config {
  std::string file;  // the file it was read from, as given
  ServerConfig server;
  std::vector<ModelConfig> models;  // in file order; names unique

  // The model's entry, or nullptr when the config does not list it.
  const ModelConfig* FindModel(absl::string_view name) const;
};

// Reads, parses and checks the file, then resolves paths and the environment (see above).
absl::StatusOr<std::shared_ptr<const Config>> LoadConfig(const std::string& path);

// LoadConfig of text already read (inferd's command line overlays the file's YAML): relative
// paths resolve against `base_dir`, and the environment and the file system are checked.
absl::StatusOr<std::shared_ptr<const Config>> LoadConfigText(absl::string_view yaml_text,
                                                             absl::string_view file_name,
                                                             const std::string& base_dir);

// Parses YAML text; `file_name_for_messages` prefixes every error. No file system or
// environment access: paths stay as written and admin_token_env is not resolved.
absl::StatusOr<std::shared_ptr<const Config>> ParseConfig(absl::string_view yaml_text,
                                                          absl::string_view file_name_for_messages);

// Parses a model directory's config.yaml. `default_name` (the directory's name) becomes the
// model's name; a relative `path` is made relative to the repository (`<default_name>/<path>`).
absl::StatusOr<ModelConfig> ParseModelConfig(absl::string_view yaml_text,
                                             absl::string_view file_name,
                                             absl::string_view default_name);

// The settings of a model that no file configures: defaults, path `<name>/model.onnx`.
ModelConfig DefaultModelConfig(absl::string_view name);

// Combines a model's entry in the main config with its directory's config.yaml; per key the main
// config wins (see above). Fails when the result is inconsistent (an input given a fixed shape
// in one file and a max shape in the other).
absl::StatusOr<ModelConfig> MergeModelConfig(const ModelConfig& from_main_config,
                                             const ModelConfig& from_model_dir);

// OK, or INVALID_ARGUMENT saying the rule and quoting (QuoteForMessage) what was given.
absl::Status ValidateModelName(absl::string_view name);
// OK, or INVALID_ARGUMENT saying what is wrong with the admin token (never echoing it).
absl::Status ValidateAdminToken(absl::string_view token);

const char* LogLevelName(LogLevel level);            // "trace", ..., "error"
const char* ModelControlName(ModelControl control);  // "none", "explicit", "poll"
const char* WhenBusyName(WhenBusy when);             // "wait", "fail_fast"

}  // namespace inferd::server

#endif  // INFERD_SERVER_CONFIG_H_

#include "server/model_repository.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/message_text.h"
#include "base/status_macros.h"
#include "kernels/build_kernels.h"
#include "proto/model_config.pb.h"
#include "server/batcher.h"
#include "server/kserve_types.h"
#include "server/triton_config.h"

namespace inferd::server {
namespace fs = std::filesystem;

const char* ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "LOADING";
    case ModelState::kReady:
      return "READY";
    case ModelState::kUnloading:
      return "UNLOADING";
    case ModelState::kUnavailable:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

engine::SessionOptions ToSessionOptions(const ModelConfig& c) {
  engine::SessionOptions o;
  o.device_runtimes = kernels::BuildDeviceRuntimes();
  o.intra_op_threads = c.threads;
  o.max_concurrent_runs = c.max_concurrent_runs;
  o.fail_fast_when_busy = c.when_busy == WhenBusy::kFailFast;
  o.pre_allocate = c.pre_allocate;
  o.fixed_input_shapes = c.fixed_input_shapes;
  o.enable_fusions = c.enable_fusions;
  for (const auto& [device, caps] : c.retention_caps) {
    if (caps.execution_bytes) o.retention_caps[device]["execution"] = *caps.execution_bytes;
    if (caps.io_bytes) o.retention_caps[device]["io"] = *caps.io_bytes;
  }
  for (const DeviceBudget& d : c.partition.devices) {
    o.partition.devices.push_back(partition::DeviceSpec{d.device, d.budget_bytes});
  }
  o.partition.name_rules = c.partition.name_rules;
  o.partition.annotation_rules = c.partition.annotation_rules;
  o.partition.fallback_device = c.partition.fallback_device;
  o.partition.fallback_on_missing_device = c.partition.fallback_on_missing_device;
  o.max_input_shapes = c.max_input_shapes;
  return o;
}

namespace {

std::string Signature(const std::vector<TensorSpec>& specs) {
  return absl::StrJoin(specs, ", ", [](std::string* out, const TensorSpec& s) {
    absl::StrAppend(out, s.name, " ", KServeDataTypeName(s.type), " ", s.shape.ToString());
  });
}

std::string ArenaSummary(const engine::Session& s) {
  std::vector<std::string> parts;
  for (const engine::DeviceArenas& d : s.devices()) {
    const memory::ArenaStats e = d.execution->Stats();
    const memory::ArenaStats io = d.io->Stats();
    parts.push_back(absl::StrCat(d.device, ": execution ", e.live_bytes + e.retained_bytes,
                                 " B held, io ", io.live_bytes + io.retained_bytes, " B held"));
  }
  return absl::StrJoin(parts, "; ");
}

// A model folder's config.yaml is small; a bigger one is a mistake (or an attack on memory).
constexpr int64_t kMaxModelConfigBytes = 1 << 20;

// `file`, resolved through symlinks, if it is a regular file inside `folder` (the model's folder,
// itself possibly a symlink: the operator's entry in the repository). The error for a path that
// resolves outside never says whether its target exists.
absl::StatusOr<fs::path> FileInsideFolder(const fs::path& folder, const fs::path& file,
                                          absl::string_view what) {
  std::error_code ec;
  const fs::path root = fs::canonical(folder, ec);
  if (ec) {
    return absl::NotFoundError(
        absl::StrCat("cannot open the model folder ", folder.string(), ": ", ec.message()));
  }
  const fs::path resolved = fs::weakly_canonical(file, ec);
  const fs::path rel = ec ? fs::path() : resolved.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " ", file.lexically_relative(folder.parent_path()).string(),
                     " resolves outside the model's folder; only files inside it load"));
  }
  struct stat st;
  if (stat(resolved.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("no ", what, " ", file.lexically_relative(folder.parent_path()).string()));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", file.lexically_relative(folder.parent_path()).string(),
                     " is not a regular file"));
  }
  return resolved;
}

// Reads a regular file without blocking on a FIFO or device swapped in after the check.
absl::StatusOr<std::string> ReadSmallRegularFile(const fs::path& p) {
  const int fd = open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", p.string(), ": ", strerror(errno)));
  }
  struct stat st;
  std::string text;
  absl::Status status;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::FailedPreconditionError(absl::StrCat(p.string(), " is not a regular file"));
  } else if (st.st_size > kMaxModelConfigBytes) {
    status = absl::FailedPreconditionError(absl::StrCat(
        p.string(), " is ", st.st_size, " bytes; a model's config.yaml is at most 1 MiB"));
  } else {
    char buffer[1 << 14];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0 &&
           text.size() <= static_cast<size_t>(kMaxModelConfigBytes)) {
      text.append(buffer, static_cast<size_t>(n));
    }
    if (n < 0) status = absl::FailedPreconditionError(absl::StrCat("cannot read ", p.string()));
  }
  close(fd);
  if (!status.ok()) return status;
  return text;
}

// The host (cpu:N) bytes a session's partition accounts: weights + activations + workspace.
uint64_t HostBytes(const engine::Session& s) {
  uint64_t bytes = 0;
  for (const partition::DeviceReport& d : s.partition_report().devices) {
    if (partition::IsHostDevice(d.device)) bytes += d.accounted.total();
  }
  return bytes;
}

}  // namespace

// ---- LoadedModel ----

LoadedModel::Ref& LoadedModel::Ref::operator=(Ref&& other) noexcept {
  if (this != &other) {
    Reset();
    model_ = std::move(other.model_);
  }
  return *this;
}

void LoadedModel::Ref::Reset() {
  if (model_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(model_->mu_);
    if (--model_->refs_ == 0) model_->idle_.notify_all();
  }
  model_.reset();
}

LoadedModel::LoadedModel(ModelConfig config, std::shared_ptr<ModelStats> stats)
    : config_(std::move(config)), stats_(std::move(stats)) {}

LoadedModel::~LoadedModel() { Unload("destroyed"); }

ModelState LoadedModel::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

std::string LoadedModel::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

std::shared_ptr<engine::Session> LoadedModel::session() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_;
}

absl::StatusOr<LoadedModel::Ref> LoadedModel::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != ModelState::kReady) {
    return absl::UnavailableError(
        absl::StrCat("model '", config_.name, "' is not ready: ", ModelStateName(state_),
                     reason_.empty() ? "" : absl::StrCat(" (", reason_, ")")));
  }
  ++refs_;
  return Ref(shared_from_this());
}

namespace {

// KServe v2 carries tensors only: a model whose graph inputs or outputs are sequences or
// optionals (the engine runs them, docs/sequences.md) cannot be served.
absl::Status CheckTensorSignature(const engine::Session& session, const std::string& model) {
  for (const bool inputs : {true, false}) {
    for (const engine::Value* v : inputs ? session.inputs() : session.outputs()) {
      if (v->kind == engine::ValueKind::kTensor) continue;
      return absl::UnimplementedError(absl::StrCat(
          "model '", model, "': ", inputs ? "input '" : "output '", v->name, "' is a ",
          engine::ValueKindName(v->kind),
          "; the server serves tensor inputs and outputs only (KServe v2 has no sequence or "
          "optional type)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadedModel::Load(const std::string& path, const engine::KernelRegistry& registry,
                               const HostMemoryLimit& host) {
  if (config_.generation.has_value()) return LoadGenerative(path, registry, host);
  std::shared_ptr<engine::Session> session;
  std::unique_ptr<ModelWorker> worker;
  try {
    absl::StatusOr<std::unique_ptr<engine::Session>> s =
        engine::Session::Load(path, ToSessionOptions(config_), registry);
    if (!s.ok()) return s.status();
    session = *std::move(s);
    INFERD_RETURN_IF_ERROR(CheckTensorSignature(*session, config_.name));
    INFERD_RETURN_IF_ERROR(host.Check(*session));
    // Batching as served: config.pbtxt's auto-complete may turn it on (Triton's ONNX Runtime
    // backend does for models whose every input and output has a dynamic first dimension).
    int max_batch_size = config_.max_batch_size;
    std::optional<DynamicBatching> batching = config_.dynamic_batching;
    if (config_.triton != nullptr) {
      const ModelSignature sig = ModelSignature::FromSession(*session, config_.name, "");
      INFERD_ASSIGN_OR_RETURN(inference::ModelConfig served,
                              CompleteTritonConfig(*config_.triton, sig));
      max_batch_size = served.max_batch_size();
      if (served.has_dynamic_batching() && !batching.has_value()) batching = DynamicBatching{};
    }
    if (batching.has_value() && max_batch_size > 0) {
      worker = std::make_unique<Batcher>(config_.name, max_batch_size, *batching,
                                         config_.max_concurrent_runs, config_.queue_length,
                                         stats_.get());
    } else {
      worker = std::make_unique<ModelWorker>(config_.name, config_.max_concurrent_runs,
                                             config_.queue_length, stats_.get());
    }
  } catch (const std::system_error& e) {
    // Threads (the intra-op pool, the workers) the system would not start: this model fails,
    // the process and the other models go on.
    return absl::ResourceExhaustedError(absl::StrCat("cannot start the model's threads (threads ",
                                                     config_.threads, ", max_concurrent_runs ",
                                                     config_.max_concurrent_runs, "): ", e.what()));
  }
  ModelSignature signature = ModelSignature::FromSession(*session, config_.name, config_.version);
  std::shared_ptr<const inference::ModelConfig> triton;
  if (config_.triton != nullptr) {
    // config.pbtxt's input/output are a contract with clients: the model must keep it.
    INFERD_RETURN_IF_ERROR(CheckTritonSignature(*config_.triton, signature));
    INFERD_ASSIGN_OR_RETURN(inference::ModelConfig served,
                            CompleteTritonConfig(*config_.triton, signature));
    // Before READY, as Triton: the first requests do not pay for cold caches and arenas.
    INFERD_RETURN_IF_ERROR(RunWarmup(served, *session));
    if (config_.triton->instance_group_size() == 0) {
      served.mutable_instance_group(0)->set_count(config_.max_concurrent_runs);  // config.yaml's
    }
    triton = std::make_shared<const inference::ModelConfig>(std::move(served));
  }
  spdlog::info("model '{}' version {} loaded from {}: inputs {}; outputs {}", config_.name,
               config_.version, path, Signature(signature.inputs), Signature(signature.outputs));
  spdlog::info("model '{}' plan: {}", config_.name, session->plan().Summary());
  const partition::PlanReport& report = session->partition_report();
  spdlog::info("model '{}' partition:\n{}", config_.name, report.ToString());
  for (const std::string& w : report.warnings) spdlog::warn("model '{}': {}", config_.name, w);
  spdlog::info("model '{}' arenas: {}; {} worker(s), queue_length {}", config_.name,
               ArenaSummary(*session), config_.max_concurrent_runs, config_.queue_length);
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::move(session);
  signature_ = std::move(signature);
  triton_ = std::move(triton);
  worker_ = std::move(worker);
  state_ = ModelState::kReady;
  reason_.clear();
  return absl::OkStatus();
}

void LoadedModel::MarkFailed(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = ModelState::kUnavailable;
  reason_ = reason;
}

void LoadedModel::Unload(const std::string& reason) {
  std::unique_ptr<ModelWorker> worker;
  std::shared_ptr<engine::Session> session;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ != ModelState::kReady) return;
    state_ = ModelState::kUnloading;
    // Every queued or running request holds a Ref; the workers finish them.
    idle_.wait(lock, [this] { return refs_ == 0; });
    worker = std::move(worker_);
  }
  worker.reset();  // drains (nothing is left) and joins its threads
  {
    std::lock_guard<std::mutex> lock(mu_);
    session = std::move(session_);
    generator_.reset();  // the session above keeps it alive until the last reader lets go
    kv_budget_.reset();
    state_ = ModelState::kUnavailable;
    reason_ = reason;
  }
  // The session goes here unless an admin / metrics reader still holds it; output buffers still
  // being sent stay alive through their leases.
  session.reset();
}

// ---- ModelRepository ----

ModelRepository::ModelRepository(std::shared_ptr<const Config> config,
                                 const engine::KernelRegistry& registry)
    : config_(std::move(config)), registry_(registry) {}

ModelRepository::~ModelRepository() { UnloadAll(); }

void ModelRepository::SetStateListener(StateListener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listener_ = std::move(listener);
}

void ModelRepository::Notify(const std::string& name, ModelState state) {
  StateListener listener;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listener = listener_;
  }
  if (listener) listener(name, state);
}

std::shared_ptr<std::mutex> ModelRepository::OpLock(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<std::mutex>& m = op_locks_[name];
  if (m == nullptr) m = std::make_shared<std::mutex>();
  return m;
}

std::shared_ptr<ModelStats> ModelRepository::StatsFor(const std::string& name,
                                                      const std::string& version) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<ModelStats>& s = stats_[{name, version}];
  if (s == nullptr) s = std::make_shared<ModelStats>();
  return s;
}

bool ModelRepository::VersionOrder::operator()(const std::string& a, const std::string& b) const {
  const auto numeric = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (numeric(a) && numeric(b)) {
    // Without leading zeros, a longer number is a bigger one; equal lengths compare as text.
    const size_t za = std::min(a.find_first_not_of('0'), a.size() - 1);
    const size_t zb = std::min(b.find_first_not_of('0'), b.size() - 1);
    const absl::string_view x = absl::string_view(a).substr(za);
    const absl::string_view y = absl::string_view(b).substr(zb);
    if (x != y) return x.size() != y.size() ? x.size() < y.size() : x < y;
  }
  return a < b;
}

namespace {

// A version directory's name: 1 to 18 digits (an int64), as Triton reads it.
std::optional<int64_t> VersionNumber(const std::string& name) {
  if (name.empty() || name.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::vector<int64_t> VersionDirectories(const std::string& dir) {
  std::vector<int64_t> versions;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory(ec)) continue;
    if (std::optional<int64_t> v = VersionNumber(e.path().filename().string())) {
      versions.push_back(*v);
    }
  }
  return versions;
}

bool IsTritonFolder(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / "config.pbtxt", ec) || !VersionDirectories(dir).empty();
}

bool FolderHoldsModel(const std::string& dir) {
  std::error_code ec;
  const fs::path d(dir);
  return fs::is_directory(d, ec) && (fs::exists(d / "model.onnx", ec) ||
                                     fs::exists(d / "config.yaml", ec) || IsTritonFolder(dir));
}

std::vector<std::string> ModelRepository::DirectoryModels(bool log_skipped) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator(config_->server.model_repository, ec)) {
    if (!e.is_directory(ec)) continue;
    const std::string name = e.path().filename().string();
    if (absl::Status valid = ValidateModelName(name); !valid.ok()) {
      // Hidden directories (.git, Kubernetes' ..data) are skipped silently.
      if (log_skipped && name[0] != '.') {
        spdlog::warn("model repository: skipping directory {}: {}", QuoteForMessage(name),
                     std::string(valid.message()));
      }
      continue;
    }
    if (FolderHoldsModel(e.path().string())) names.push_back(name);
  }
  return names;
}

bool ModelRepository::Known(const std::string& name) const {
  if (config_->FindModel(name) != nullptr) return true;
  return FolderHoldsModel((fs::path(config_->server.model_repository) / name).string());
}

std::vector<std::string> ModelRepository::StartupModels() const {
  std::set<std::string> names;
  for (const ModelConfig& m : config_->models) names.insert(m.name);
  if (config_->server.load_all_models) {
    for (std::string& n : DirectoryModels(/*log_skipped=*/true)) names.insert(std::move(n));
  }
  return {names.begin(), names.end()};
}

int ModelRepository::LoadStartupModels(const std::atomic<bool>* stop) {
  const std::vector<std::string> names = StartupModels();
  spdlog::info("model repository {}: loading {} model(s): {}", config_->server.model_repository,
               names.size(), absl::StrJoin(names, ", "));
  int ready = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (stop != nullptr && stop->load()) {
      spdlog::info("start-up loading interrupted after {} of {} model(s)", i, names.size());
      break;
    }
    if (Load(names[i]).ok()) ++ready;  // failures are logged by Load
  }
  return ready;
}

absl::StatusOr<ModelConfig> ModelRepository::ResolveTritonConfig(const std::string& name) const {
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  const fs::path pbtxt = dir / "config.pbtxt";
  std::error_code ec;
  ModelConfig triton;
  if (fs::exists(fs::symlink_status(pbtxt, ec))) {
    INFERD_ASSIGN_OR_RETURN(fs::path resolved, FileInsideFolder(dir, pbtxt, "config"));
    INFERD_ASSIGN_OR_RETURN(std::string text, ReadSmallRegularFile(resolved));
    std::vector<std::string> warnings;
    INFERD_ASSIGN_OR_RETURN(inference::ModelConfig proto,
                            ParseTritonConfig(text, pbtxt.string(), &warnings));
    for (const std::string& w : warnings) spdlog::warn("model '{}': {}", name, w);
    INFERD_ASSIGN_OR_RETURN(triton, TritonToModelConfig(proto, name, pbtxt.string()));
  } else {
    // Version directories without a config: Triton's auto-complete fills it from the model.
    INFERD_ASSIGN_OR_RETURN(triton,
                            TritonToModelConfig(inference::ModelConfig(), name, dir.string()));
  }
  const fs::path yaml = dir / "config.yaml";
  if (fs::exists(fs::symlink_status(yaml, ec))) {
    INFERD_ASSIGN_OR_RETURN(fs::path resolved, FileInsideFolder(dir, yaml, "config"));
    INFERD_ASSIGN_OR_RETURN(std::string text, ReadSmallRegularFile(resolved));
    INFERD_ASSIGN_OR_RETURN(ModelConfig own, ParseModelConfig(text, yaml.string(), name));
    // config.yaml's keys win over what config.pbtxt implies (its inferd-only settings).
    INFERD_ASSIGN_OR_RETURN(triton, MergeModelConfig(own, triton));
  }
  if (const ModelConfig* main = config_->FindModel(name)) {
    INFERD_ASSIGN_OR_RETURN(triton, MergeModelConfig(*main, triton));
  }
  if (triton.keys_set.count("path") != 0 || triton.keys_set.count("version") != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", name, "' (", triton.source,
        "): `path` and `version` do not apply to a Triton model folder: its version directories "
        "<N>/ hold the model file (config.pbtxt's default_model_filename)"));
  }
  return triton;
}

absl::StatusOr<ModelConfig> ModelRepository::ResolveModelConfig(const std::string& name) const {
  // The name is the folder's name, never a path: it cannot leave the repository.
  INFERD_RETURN_IF_ERROR(ValidateModelName(name));
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  if (IsTritonFolder(dir.string())) return ResolveTritonConfig(name);
  const fs::path yaml = dir / "config.yaml";
  const ModelConfig* main = config_->FindModel(name);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(yaml, ec))) {
    INFERD_ASSIGN_OR_RETURN(fs::path resolved, FileInsideFolder(dir, yaml, "config"));
    INFERD_ASSIGN_OR_RETURN(std::string text, ReadSmallRegularFile(resolved));
    INFERD_ASSIGN_OR_RETURN(ModelConfig own, ParseModelConfig(text, yaml.string(), name));
    if (main == nullptr) return own;
    return MergeModelConfig(*main, own);
  }
  if (main != nullptr) return *main;
  if (fs::exists(fs::symlink_status(dir / "model.onnx", ec))) return DefaultModelConfig(name);
  return absl::NotFoundError(absl::StrCat("model '", name, "' is not in the repository (no ",
                                          (dir / "model.onnx").string(), ") nor in the config"));
}

absl::StatusOr<std::vector<ModelRepository::VersionPlan>> ModelRepository::ResolveVersions(
    const std::string& name) const {
  INFERD_ASSIGN_OR_RETURN(ModelConfig config, ResolveModelConfig(name));
  if (config.triton == nullptr) {
    INFERD_ASSIGN_OR_RETURN(std::string path, ModelFilePath(name, config));
    return std::vector<VersionPlan>{{std::move(config), std::move(path)}};
  }
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  const std::string file = config.triton->default_model_filename().empty()
                               ? "model.onnx"
                               : config.triton->default_model_filename();
  if (file.find('/') != std::string::npos || file == "." || file == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", name, "': default_model_filename ", QuoteForMessage(file),
                     " must be a file name inside each version directory"));
  }
  std::vector<int64_t> available = VersionDirectories(dir.string());
  std::error_code ec;
  if (available.empty() && fs::exists(dir / file, ec)) {
    // config.pbtxt beside inferd's own <name>/model.onnx: that file is version 1.
    config.version = "1";
    config.path = (fs::path(name) / file).string();
    return std::vector<VersionPlan>{{std::move(config), (dir / file).string()}};
  }
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                          SelectVersions(config.triton->version_policy(), available, name));
  std::vector<VersionPlan> plans;
  for (int64_t v : versions) {
    VersionPlan plan{config, ""};
    plan.config.version = std::to_string(v);
    plan.config.path = (fs::path(name) / plan.config.version / file).string();
    // Like inferd's default <name>/model.onnx, a version's file (a plain name in a numbered
    // directory) may be a link (a shared model store, Bazel's runfiles); it must be a file.
    const fs::path model = dir / plan.config.version / file;
    struct stat st;
    if (stat(model.c_str(), &st) != 0) {
      return absl::NotFoundError(
          absl::StrCat("model '", name, "' version ", v, ": no model file ",
                       (fs::path(name) / plan.config.version / file).string()));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat("model '", name, "' version ", v, ": ",
                                                        model.string(), " is not a regular file"));
    }
    plan.path = model.string();
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::vector<std::string> ModelRepository::ModelFiles(const std::string& name) const {
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  std::vector<std::string> files = {(dir / "config.yaml").string(),
                                    (dir / "config.pbtxt").string()};
  absl::StatusOr<std::vector<VersionPlan>> plans = ResolveVersions(name);
  if (!plans.ok()) {
    // A broken config or a missing file: the default file stands for the model.
    files.push_back((dir / "model.onnx").string());
    return files;
  }
  for (const VersionPlan& p : *plans) files.push_back(p.path);
  return files;
}

absl::StatusOr<std::string> ModelRepository::ModelFilePath(const std::string& name,
                                                           const ModelConfig& config) const {
  const fs::path repo(config_->server.model_repository);
  const ModelConfig* main = config_->FindModel(name);
  if (main != nullptr && main->keys_set.count("path") != 0) {
    // The operator's own setting in the main config: absolute or relative to the repository,
    // wherever it points (config.h, "Paths").
    return fs::path(config.path).is_absolute() ? config.path : (repo / config.path).string();
  }
  const fs::path file = repo / config.path;
  if (config.keys_set.count("path") != 0) {
    // A path of the model's config.yaml (lexically inside the folder, ParseModelConfig): inside
    // after links too.
    INFERD_ASSIGN_OR_RETURN(fs::path inside, FileInsideFolder(repo / name, file, "model file"));
    return inside.string();
  }
  // The default <name>/model.onnx may be a link (Bazel's runfiles, a shared model store); the
  // engine keeps its external data beside the file it resolves to. It must be a regular file.
  struct stat st;
  if (stat(file.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("no ", name, "/model.onnx in the repository"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(name, "/model.onnx is not a regular file"));
  }
  return file.string();
}

absl::StatusOr<HostMemoryLimit> ModelRepository::LimitsFor(const std::string& name,
                                                           bool reload) const {
  const ResourceLimits& limits = config_->server.limits;
  HostMemoryLimit host;
  host.limit_bytes = limits.host_memory_bytes;
  std::vector<std::string> loaded;
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    std::shared_ptr<engine::Session> s = m->session();
    if (s == nullptr) continue;  // not loaded (or its session already dropped)
    if (m->state() == ModelState::kReady) loaded.push_back(m->name());
    host.committed_bytes += HostBytes(*s);
    host.holders.push_back(m->name());
  }
  if (!reload && static_cast<int>(loaded.size()) >= limits.max_loaded_models) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot load model '", name, "': server.limits.max_loaded_models is ",
        limits.max_loaded_models, " and ", loaded.size(), " models are loaded (",
        absl::StrJoin(loaded.begin(), loaded.begin() + std::min<size_t>(loaded.size(), 8), ", "),
        loaded.size() > 8 ? ", ..." : "", "); unload one or raise the limit"));
  }
  return host;
}

absl::Status HostMemoryLimit::Check(const engine::Session& session) const {
  if (!limit_bytes) return absl::OkStatus();
  const uint64_t needed = HostBytes(session);
  const uint64_t left = committed_bytes >= *limit_bytes ? 0 : *limit_bytes - committed_bytes;
  if (needed <= left) return absl::OkStatus();
  std::vector<std::string> devices;
  for (const partition::DeviceReport& d : session.partition_report().devices) {
    if (!partition::IsHostDevice(d.device)) continue;
    devices.push_back(absl::StrCat(d.device, ": weights ",
                                   partition::FormatBytes(d.accounted.weights), " + activations ",
                                   partition::FormatBytes(d.accounted.activations), " + workspace ",
                                   partition::FormatBytes(d.accounted.workspace)));
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "host memory: the partition accounts ", partition::FormatBytes(needed), " on host devices (",
      absl::StrJoin(devices, "; "), ") but server.limits.host_memory is ",
      partition::FormatBytes(*limit_bytes), " and ", holders.size(), " loaded model(s) hold ",
      partition::FormatBytes(committed_bytes), ", leaving ", partition::FormatBytes(left),
      "; unload a model or raise server.limits.host_memory"));
}

void ModelRepository::RecordBrokenConfig(const ModelConfig& config, const absl::Status& status) {
  const std::string& name = config.name;
  StatsFor(name, config.version)->CountLoad(status);
  std::shared_ptr<LoadedModel> current = Find(name);
  if (current == nullptr || current->state() != ModelState::kReady) {
    // A broken config: the model is known but cannot load (a READY version keeps serving).
    auto failed = std::make_shared<LoadedModel>(config, StatsFor(name, config.version));
    failed->MarkFailed(std::string(status.message()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      Versions& versions = models_[name];
      versions.clear();
      versions[config.version] = failed;
    }
    Notify(name, ModelState::kUnavailable);
  }
}

absl::Status ModelRepository::Load(const std::string& name) {
  // An invalid or unknown name (clients choose names) gets no lock, entry or series.
  INFERD_RETURN_IF_ERROR(ValidateModelName(name));
  if (!Known(name)) {
    const absl::Status unknown = absl::NotFoundError(
        absl::StrCat("model '", name, "' is not in the repository (no ",
                     (fs::path(config_->server.model_repository) / name / "model.onnx").string(),
                     ") nor in the config"));
    spdlog::error("{}", std::string(unknown.message()));
    return unknown;
  }
  std::shared_ptr<std::mutex> op = OpLock(name);
  std::lock_guard<std::mutex> op_lock(*op);
  std::lock_guard<std::mutex> load_lock(load_mu_);

  absl::StatusOr<std::vector<VersionPlan>> plans = ResolveVersions(name);
  if (!plans.ok()) {
    absl::StatusOr<ModelConfig> config = ResolveModelConfig(name);
    RecordBrokenConfig(config.ok() ? *config : DefaultModelConfig(name), plans.status());
    spdlog::error("model '{}' failed to load: {}", name, std::string(plans.status().message()));
    return absl::Status(plans.status().code(), absl::StrCat("failed to load model '", name,
                                                            "': ", plans.status().message()));
  }
  absl::Status first_error;
  std::set<std::string> keep;
  for (const VersionPlan& plan : *plans) {
    keep.insert(plan.config.version);
    absl::Status s = LoadVersion(name, plan);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  DropVersions(name, keep);
  return first_error;
}

absl::Status ModelRepository::LoadVersion(const std::string& name, const VersionPlan& plan) {
  const std::string& version = plan.config.version;
  std::shared_ptr<LoadedModel> current = FindExact(name, version);
  const bool reload = current != nullptr && current->state() == ModelState::kReady;
  absl::StatusOr<HostMemoryLimit> host = LimitsFor(name, reload);
  if (!host.ok()) {
    spdlog::error("{}", std::string(host.status().message()));
    return host.status();
  }
  auto model = std::make_shared<LoadedModel>(plan.config, StatsFor(name, version));
  if (!reload) {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name][version] = model;  // shown as LOADING meanwhile
  }
  Notify(name, ModelState::kLoading);
  spdlog::info("model '{}': loading {} (version {}){}", name, plan.path, version,
               reload ? " (reload)" : "");
  const absl::Time start = absl::Now();
  absl::Status status = model->Load(plan.path, registry_, *host);
  model->stats().CountLoad(status);
  if (!status.ok()) {
    const std::string reason = std::string(status.message());
    spdlog::error("model '{}' version {} failed to load from {}: {}", name, version, plan.path,
                  reason);
    if (reload) {
      Notify(name, ModelState::kReady);  // the old copy keeps serving
    } else {
      model->MarkFailed(reason);
      Notify(name, ModelState::kUnavailable);
    }
    return absl::Status(status.code(), absl::StrCat("failed to load model '", name, "' version ",
                                                    version, ": ", reason));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name][version] = model;
  }
  spdlog::info("model '{}' READY (version {}, {} ms)", name, version,
               absl::ToInt64Milliseconds(absl::Now() - start));
  Notify(name, ModelState::kReady);
  if (reload) current->Unload("replaced by a reload");
  return absl::OkStatus();
}

void ModelRepository::DropVersions(const std::string& name, const std::set<std::string>& keep) {
  std::vector<std::shared_ptr<LoadedModel>> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) return;
    for (const auto& [version, m] : it->second) {
      if (keep.count(version) == 0) gone.push_back(m);
    }
  }
  for (const std::shared_ptr<LoadedModel>& m : gone) {
    spdlog::info("model '{}' version {}: no longer selected by its version policy; unloading", name,
                 m->version());
    m->Unload("version no longer served");
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it != models_.end() && it->second.size() > 1) it->second.erase(m->version());
    stats_.erase({name, m->version()});
  }
  if (!gone.empty()) Notify(name, ModelState::kUnavailable);
}

absl::Status ModelRepository::Unload(const std::string& name) {
  INFERD_RETURN_IF_ERROR(ValidateModelName(name));
  if (Find(name) == nullptr) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
  }
  std::shared_ptr<std::mutex> op = OpLock(name);
  std::lock_guard<std::mutex> op_lock(*op);
  std::vector<std::shared_ptr<LoadedModel>> versions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) {
      return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
    }
    for (const auto& [version, m] : it->second) versions.push_back(m);
  }
  for (const std::shared_ptr<LoadedModel>& model : versions) {
    if (model->state() == ModelState::kUnavailable) {
      // A failed version unloaded: the operator no longer expects it to serve (AllServing).
      model->MarkFailed("unloaded");
      continue;
    }
    if (model->state() != ModelState::kReady) continue;
    spdlog::info("model '{}': unloading version {} (waiting for in-flight requests)", name,
                 model->version());
    Notify(name, ModelState::kUnloading);
    const absl::Time start = absl::Now();
    model->Unload("unloaded");
    spdlog::info("model '{}' unloaded (version {}, {} ms)", name, model->version(),
                 absl::ToInt64Milliseconds(absl::Now() - start));
    Notify(name, ModelState::kUnavailable);
  }
  if (!Known(name)) {
    // Gone from the repository and the config: nothing is left to list or count.
    std::lock_guard<std::mutex> lock(mu_);
    models_.erase(name);
    for (auto it = stats_.begin(); it != stats_.end();) {
      it = it->first.first == name ? stats_.erase(it) : std::next(it);
    }
  }
  return absl::OkStatus();
}

void ModelRepository::UnloadAll() {
  std::set<std::string> names;
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    if (m->state() == ModelState::kReady) names.insert(m->name());
  }
  for (const std::string& name : names) Unload(name).IgnoreError();
}

std::shared_ptr<LoadedModel> ModelRepository::Find(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end() || it->second.empty()) return nullptr;
  for (auto v = it->second.rbegin(); v != it->second.rend(); ++v) {
    if (v->second->state() == ModelState::kReady) return v->second;
  }
  return it->second.rbegin()->second;
}

std::shared_ptr<LoadedModel> ModelRepository::FindExact(const std::string& name,
                                                        const std::string& version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return nullptr;
  auto v = it->second.find(version);
  return v == it->second.end() ? nullptr : v->second;
}

absl::StatusOr<std::shared_ptr<LoadedModel>> ModelRepository::FindVersion(
    absl::string_view name, absl::string_view version) const {
  if (version.empty()) {
    if (std::shared_ptr<LoadedModel> m = Find(name)) return m;
    return absl::NotFoundError(absl::StrCat("unknown model ", QuoteForMessage(name)));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown model ", QuoteForMessage(name)));
  }
  auto v = it->second.find(std::string(version));
  if (v != it->second.end()) return v->second;
  std::vector<std::string> versions;
  for (const auto& [known, m] : it->second) versions.push_back(known);
  return absl::NotFoundError(absl::StrCat("model '", it->first, "' has no version ",
                                          QuoteForMessage(version), "; it has version(s) ",
                                          absl::StrJoin(versions, ", ")));
}

absl::StatusOr<LoadedModel::Ref> ModelRepository::AcquireForInference(absl::string_view name,
                                                                      absl::string_view version,
                                                                      ModelStats** stats) const {
  *stats = nullptr;
  std::shared_ptr<LoadedModel> model = Find(name);
  if (model == nullptr) {
    std::set<std::string> names;
    for (const auto& m : Snapshot()) names.insert(m->name());
    return absl::NotFoundError(absl::StrCat("unknown model ", QuoteForMessage(name),
                                            "; the repository has: ", absl::StrJoin(names, ", ")));
  }
  *stats = &model->stats();
  if (!version.empty()) {
    INFERD_ASSIGN_OR_RETURN(model, FindVersion(name, version));
    *stats = &model->stats();
  }
  return model->Acquire();
}

bool ModelRepository::AllServing(std::string* why) const {
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    const ModelState state = m->state();
    if (state == ModelState::kReady) continue;
    if (state == ModelState::kUnavailable) {
      const std::string reason = m->reason();
      if (reason == "unloaded" || reason == "version no longer served") continue;
    }
    if (why != nullptr) {
      *why = absl::StrCat("model '", m->name(), "' version ", m->version(), " is ",
                          ModelStateName(state));
    }
    return false;
  }
  return true;
}

std::vector<std::shared_ptr<LoadedModel>> ModelRepository::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<LoadedModel>> out;
  out.reserve(models_.size());
  for (const auto& [name, versions] : models_) {
    for (const auto& [version, m] : versions) out.push_back(m);
  }
  return out;
}

std::vector<ModelRepository::IndexEntry> ModelRepository::Index() const {
  // By name, then version; the versions of a name come from its entries once it has any.
  std::map<std::string, std::map<std::string, IndexEntry, VersionOrder>> entries;
  const fs::path repo(config_->server.model_repository);
  for (const std::string& name : DirectoryModels()) {
    std::vector<int64_t> versions = VersionDirectories((repo / name).string());
    if (versions.empty()) versions.push_back(1);
    for (int64_t v : versions) {
      entries[name][std::to_string(v)] = {name, std::to_string(v), ModelState::kUnavailable,
                                          "not loaded"};
    }
  }
  for (const ModelConfig& m : config_->models) {
    // The config's version names a YAML-configured model's one version; a Triton folder's
    // versions are its directories.
    if (IsTritonFolder((repo / m.name).string()) && entries.count(m.name) != 0) continue;
    entries[m.name].clear();
    entries[m.name][m.version] = {m.name, m.version, ModelState::kUnavailable, "not loaded"};
  }
  std::set<std::string> seen;
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    const ModelState state = m->state();
    // A model removed from the repository and the config is listed while loaded only.
    if (state == ModelState::kUnavailable && entries.count(m->name()) == 0) continue;
    if (seen.insert(m->name()).second) entries[m->name()].clear();
    entries[m->name()][m->version()] = {m->name(), m->version(), state, m->reason()};
  }
  std::vector<IndexEntry> out;
  for (auto& [name, versions] : entries) {
    for (auto& [version, e] : versions) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace inferd::server

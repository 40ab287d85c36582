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
#include "server/batcher.h"
#include "server/kserve_types.h"

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

namespace {

engine::SessionOptions ToSessionOptions(const ModelConfig& c) {
  engine::SessionOptions o;
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

absl::Status LoadedModel::Load(const std::string& path, const engine::KernelRegistry& registry,
                               const HostMemoryLimit& host) {
  std::shared_ptr<engine::Session> session;
  std::unique_ptr<ModelWorker> worker;
  try {
    absl::StatusOr<std::unique_ptr<engine::Session>> s =
        engine::Session::Load(path, ToSessionOptions(config_), registry);
    if (!s.ok()) return s.status();
    session = *std::move(s);
    INFERD_RETURN_IF_ERROR(host.Check(*session));
    if (config_.dynamic_batching.has_value() && config_.max_batch_size > 0) {
      worker = std::make_unique<Batcher>(config_.name, config_.max_batch_size,
                                         *config_.dynamic_batching, config_.max_concurrent_runs,
                                         config_.queue_length, stats_.get());
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

std::shared_ptr<ModelStats> ModelRepository::StatsFor(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<ModelStats>& s = stats_[name];
  if (s == nullptr) s = std::make_shared<ModelStats>();
  return s;
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
    if (fs::exists(e.path() / "model.onnx", ec) || fs::exists(e.path() / "config.yaml", ec)) {
      names.push_back(name);
    }
  }
  return names;
}

bool ModelRepository::Known(const std::string& name) const {
  if (config_->FindModel(name) != nullptr) return true;
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  std::error_code ec;
  return fs::is_directory(dir, ec) &&
         (fs::exists(dir / "model.onnx", ec) || fs::exists(dir / "config.yaml", ec));
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

absl::StatusOr<ModelConfig> ModelRepository::ResolveModelConfig(const std::string& name) const {
  // The name is the folder's name, never a path: it cannot leave the repository.
  INFERD_RETURN_IF_ERROR(ValidateModelName(name));
  const fs::path dir = fs::path(config_->server.model_repository) / name;
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
  StatsFor(name)->CountLoad(status);
  std::shared_ptr<LoadedModel> current = Find(name);
  if (current == nullptr || current->state() != ModelState::kReady) {
    // A broken config.yaml: the model is known but cannot load (a READY one keeps serving).
    auto failed = std::make_shared<LoadedModel>(config, StatsFor(name));
    failed->MarkFailed(std::string(status.message()));
    {
      std::lock_guard<std::mutex> lock(mu_);
      models_[name] = failed;
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

  absl::StatusOr<ModelConfig> config = ResolveModelConfig(name);
  absl::StatusOr<std::string> path =
      config.ok() ? ModelFilePath(name, *config) : absl::StatusOr<std::string>(config.status());
  if (!path.ok()) {
    RecordBrokenConfig(config.ok() ? *config : DefaultModelConfig(name), path.status());
    spdlog::error("model '{}' failed to load: {}", name, std::string(path.status().message()));
    return absl::Status(path.status().code(), absl::StrCat("failed to load model '", name,
                                                           "': ", path.status().message()));
  }
  std::shared_ptr<LoadedModel> current = Find(name);
  const bool reload = current != nullptr && current->state() == ModelState::kReady;
  absl::StatusOr<HostMemoryLimit> host = LimitsFor(name, reload);
  if (!host.ok()) {
    spdlog::error("{}", std::string(host.status().message()));
    return host.status();
  }
  auto model = std::make_shared<LoadedModel>(*config, StatsFor(name));
  if (!reload) {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = model;  // shown as LOADING meanwhile
  }
  Notify(name, ModelState::kLoading);
  spdlog::info("model '{}': loading {}{}", name, *path, reload ? " (reload)" : "");
  const absl::Time start = absl::Now();
  absl::Status status = model->Load(*path, registry_, *host);
  model->stats().CountLoad(status);
  if (!status.ok()) {
    const std::string reason = std::string(status.message());
    spdlog::error("model '{}' failed to load from {}: {}", name, *path, reason);
    if (reload) {
      Notify(name, ModelState::kReady);  // the old version keeps serving
    } else {
      model->MarkFailed(reason);
      Notify(name, ModelState::kUnavailable);
    }
    return absl::Status(status.code(), absl::StrCat("failed to load model '", name, "': ", reason));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = model;
  }
  spdlog::info("model '{}' READY ({} ms)", name, absl::ToInt64Milliseconds(absl::Now() - start));
  Notify(name, ModelState::kReady);
  if (reload) current->Unload("replaced by a reload");
  return absl::OkStatus();
}

absl::Status ModelRepository::Unload(const std::string& name) {
  INFERD_RETURN_IF_ERROR(ValidateModelName(name));
  if (Find(name) == nullptr) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
  }
  std::shared_ptr<std::mutex> op = OpLock(name);
  std::lock_guard<std::mutex> op_lock(*op);
  std::shared_ptr<LoadedModel> model = Find(name);
  if (model == nullptr) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
  }
  if (model->state() == ModelState::kReady) {
    spdlog::info("model '{}': unloading (waiting for in-flight requests)", name);
    Notify(name, ModelState::kUnloading);
    const absl::Time start = absl::Now();
    model->Unload("unloaded");
    spdlog::info("model '{}' unloaded ({} ms)", name,
                 absl::ToInt64Milliseconds(absl::Now() - start));
    Notify(name, ModelState::kUnavailable);
  }
  if (!Known(name)) {
    // Gone from the repository and the config: nothing is left to list or count.
    std::lock_guard<std::mutex> lock(mu_);
    models_.erase(name);
    stats_.erase(name);
  }
  return absl::OkStatus();
}

void ModelRepository::UnloadAll() {
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    if (m->state() == ModelState::kReady) Unload(m->name()).IgnoreError();
  }
}

std::shared_ptr<LoadedModel> ModelRepository::Find(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(std::string(name));
  return it == models_.end() ? nullptr : it->second;
}

absl::StatusOr<LoadedModel::Ref> ModelRepository::AcquireForInference(absl::string_view name,
                                                                      absl::string_view version,
                                                                      ModelStats** stats) const {
  *stats = nullptr;
  std::shared_ptr<LoadedModel> model = Find(name);
  if (model == nullptr) {
    std::vector<std::string> names;
    for (const auto& m : Snapshot()) names.push_back(m->name());
    return absl::NotFoundError(absl::StrCat("unknown model ", QuoteForMessage(name),
                                            "; the repository has: ", absl::StrJoin(names, ", ")));
  }
  *stats = &model->stats();
  if (!version.empty() && version != model->version()) {
    return absl::NotFoundError(absl::StrCat("model '", model->name(), "' has no version ",
                                            QuoteForMessage(version), "; it has version '",
                                            model->version(), "'"));
  }
  return model->Acquire();
}

std::vector<std::shared_ptr<LoadedModel>> ModelRepository::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<LoadedModel>> out;
  out.reserve(models_.size());
  for (const auto& [name, m] : models_) out.push_back(m);
  return out;
}

std::vector<ModelRepository::IndexEntry> ModelRepository::Index() const {
  std::map<std::string, IndexEntry> entries;
  for (const std::string& name : DirectoryModels()) {
    entries[name] = {name, "1", ModelState::kUnavailable, "not loaded"};
  }
  for (const ModelConfig& m : config_->models) {
    entries[m.name] = {m.name, m.version, ModelState::kUnavailable, "not loaded"};
  }
  for (const std::shared_ptr<LoadedModel>& m : Snapshot()) {
    const ModelState state = m->state();
    // A model removed from the repository and the config is listed while loaded only.
    if (state == ModelState::kUnavailable && entries.count(m->name()) == 0) continue;
    entries[m->name()] = {m->name(), m->version(), state, m->reason()};
  }
  std::vector<IndexEntry> out;
  for (auto& [name, e] : entries) out.push_back(std::move(e));
  return out;
}

}  // namespace inferd::server

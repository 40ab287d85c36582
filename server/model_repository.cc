#include "server/model_repository.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
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

absl::StatusOr<std::string> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", p.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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

absl::Status LoadedModel::Load(const std::string& path, const engine::KernelRegistry& registry) {
  absl::StatusOr<std::unique_ptr<engine::Session>> s =
      engine::Session::Load(path, ToSessionOptions(config_), registry);
  if (!s.ok()) return s.status();
  std::shared_ptr<engine::Session> session = *std::move(s);
  ModelSignature signature = ModelSignature::FromSession(*session, config_.name, config_.version);
  auto worker = std::make_unique<ModelWorker>(config_.name, config_.max_concurrent_runs,
                                              config_.queue_length, stats_.get());
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

std::vector<std::string> ModelRepository::DirectoryModels() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::directory_iterator(config_->server.model_repository, ec)) {
    if (!e.is_directory(ec)) continue;
    if (fs::exists(e.path() / "model.onnx", ec) || fs::exists(e.path() / "config.yaml", ec)) {
      names.push_back(e.path().filename().string());
    }
  }
  return names;
}

std::vector<std::string> ModelRepository::StartupModels() const {
  std::set<std::string> names;
  for (const ModelConfig& m : config_->models) names.insert(m.name);
  if (config_->server.load_all_models) {
    for (std::string& n : DirectoryModels()) names.insert(std::move(n));
  }
  return {names.begin(), names.end()};
}

int ModelRepository::LoadStartupModels() {
  int ready = 0;
  for (const std::string& name : StartupModels()) {
    if (Load(name).ok()) ++ready;  // failures are logged by Load
  }
  return ready;
}

absl::StatusOr<ModelConfig> ModelRepository::ResolveModelConfig(const std::string& name) const {
  const fs::path dir = fs::path(config_->server.model_repository) / name;
  const fs::path yaml = dir / "config.yaml";
  const ModelConfig* main = config_->FindModel(name);
  std::error_code ec;
  if (fs::exists(yaml, ec)) {
    INFERD_ASSIGN_OR_RETURN(std::string text, ReadFile(yaml));
    INFERD_ASSIGN_OR_RETURN(ModelConfig own, ParseModelConfig(text, yaml.string(), name));
    if (main == nullptr) return own;
    return MergeModelConfig(*main, own);
  }
  if (main != nullptr) return *main;
  if (fs::exists(dir / "model.onnx", ec)) return DefaultModelConfig(name);
  return absl::NotFoundError(absl::StrCat("model '", name, "' is not in the repository (no ",
                                          (dir / "model.onnx").string(), ") nor in the config"));
}

absl::Status ModelRepository::Load(const std::string& name) {
  std::shared_ptr<std::mutex> op = OpLock(name);
  std::lock_guard<std::mutex> op_lock(*op);

  absl::StatusOr<ModelConfig> config = ResolveModelConfig(name);
  if (!config.ok()) {
    // A name the repository does not know gets no series (clients choose names).
    if (!absl::IsNotFound(config.status())) StatsFor(name)->CountLoad(config.status());
    std::shared_ptr<LoadedModel> current = Find(name);
    if (!absl::IsNotFound(config.status()) &&
        (current == nullptr || current->state() != ModelState::kReady)) {
      // A broken config.yaml: the model is known but cannot load (a READY one keeps serving).
      auto failed = std::make_shared<LoadedModel>(DefaultModelConfig(name), StatsFor(name));
      failed->MarkFailed(std::string(config.status().message()));
      {
        std::lock_guard<std::mutex> lock(mu_);
        models_[name] = failed;
      }
      Notify(name, ModelState::kUnavailable);
    }
    spdlog::error("model '{}' failed to load: {}", name, std::string(config.status().message()));
    return config.status();
  }
  const std::string path =
      fs::path(config->path).is_absolute()
          ? config->path
          : (fs::path(config_->server.model_repository) / config->path).string();

  auto model = std::make_shared<LoadedModel>(*config, StatsFor(name));
  std::shared_ptr<LoadedModel> current = Find(name);
  const bool reload = current != nullptr && current->state() == ModelState::kReady;
  if (!reload) {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = model;  // shown as LOADING meanwhile
  }
  Notify(name, ModelState::kLoading);
  spdlog::info("model '{}': loading {}{}", name, path, reload ? " (reload)" : "");
  const absl::Time start = absl::Now();
  absl::Status status = model->Load(path, registry_);
  model->stats().CountLoad(status);
  if (!status.ok()) {
    const std::string reason = std::string(status.message());
    spdlog::error("model '{}' failed to load from {}: {}", name, path, reason);
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
  std::shared_ptr<std::mutex> op = OpLock(name);
  std::lock_guard<std::mutex> op_lock(*op);
  std::shared_ptr<LoadedModel> model = Find(name);
  if (model == nullptr) {
    return absl::NotFoundError(absl::StrCat("model '", name, "' is not loaded"));
  }
  if (model->state() != ModelState::kReady) return absl::OkStatus();  // already unloaded
  spdlog::info("model '{}': unloading (waiting for in-flight requests)", name);
  Notify(name, ModelState::kUnloading);
  const absl::Time start = absl::Now();
  model->Unload("unloaded");
  spdlog::info("model '{}' unloaded ({} ms)", name, absl::ToInt64Milliseconds(absl::Now() - start));
  Notify(name, ModelState::kUnavailable);
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
    entries[m->name()] = {m->name(), m->version(), m->state(), m->reason()};
  }
  std::vector<IndexEntry> out;
  for (auto& [name, e] : entries) out.push_back(std::move(e));
  return out;
}

}  // namespace inferd::server

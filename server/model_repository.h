// ModelRepository: the models inferd serves, loaded from a directory of <name>/model.onnx
// (+ external data, + an optional <name>/config.yaml merged with the main config's entry, see
// server/config.h), with their states, sessions, request workers and statistics.
//
// A folder may instead be laid out as Triton's: <name>/config.pbtxt (server/triton_config.h)
// and/or numbered version directories <name>/<N>/<default_model_filename>. Its version_policy
// (latest N, default 1; all; specific) chooses the versions served, all at once: the repository
// holds one LoadedModel per (name, version), each with its own session, worker and statistics.
// A request naming no version gets the highest READY one. A YAML-configured model has one
// version, its config's (default "1"). docs/triton.md has the rules.
//
// Lifecycle of one model: LOADING -> READY -> UNLOADING -> UNAVAILABLE ("unloaded"); a load that
// fails ends in UNAVAILABLE with the reason, logged, while the other models keep serving. A
// reload of a READY model builds the new session first and swaps it in; the old one drains.
// Unload stops taking requests, waits for the queued and running ones, then drops the session.
// Responses still being sent keep their output buffers through their IOLeases, which keep the
// IOArena's state alive after the Session is gone.
//
// Contract for readers (admin API, metrics; they hold no lock of ours):
//   for (const std::shared_ptr<LoadedModel>& m : repo.Snapshot()) {
//     m->name(); m->version(); m->state(); m->reason();
//     if (std::shared_ptr<engine::Session> s = m->session()) {   // null unless loaded
//       for (const engine::DeviceArenas& d : s->devices()) d.io->Stats();  // thread-safe
//       s->stats();                                                   // borrowed / staged bytes
//     }
//     const ModelStats& st = m->stats();   // requests by code, latency histograms: atomics
//   }
// Holding a session() pointer keeps that session (and its arenas) alive even across an unload;
// hold it only for the duration of a call.
//
// Thread-safe: every method may be called from any thread. Load and Unload block (loading a
// model, waiting for in-flight requests): call them off gRPC's threads.
#ifndef INFERD_SERVER_MODEL_REPOSITORY_H_
#define INFERD_SERVER_MODEL_REPOSITORY_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/kernel_registry.h"
#include "engine/session.h"
#include "server/config.h"
#include "server/kv_budget.h"
#include "server/model_signature.h"
#include "server/model_stats.h"
#include "server/model_worker.h"

namespace inference {
class ModelConfig;
}  // namespace inference

namespace inferd::genai {
class GenerativeModel;
}  // namespace inferd::genai

namespace inferd::server {

// A model folder of the repository: <dir>/model.onnx or config.yaml (inferd's layout), or
// config.pbtxt or a numbered version directory (Triton's).
bool FolderHoldsModel(const std::string& dir);
// A folder laid out as Triton's: config.pbtxt, or a numbered version directory.
bool IsTritonFolder(const std::string& dir);
// The numbered version directories of a Triton folder, unsorted.
std::vector<int64_t> VersionDirectories(const std::string& dir);

enum class ModelState { kLoading, kReady, kUnloading, kUnavailable };

// The engine settings of a model's config (threads, runs, partition, caps, shapes).
engine::SessionOptions ToSessionOptions(const ModelConfig& c);
// What a generative model shows in ModelMetadata / ModelConfig: text_input and the sampling
// inputs, text_output and token_id (server/stream_infer_handler.h; generative_load.cc).
ModelSignature GenerationSignature(const std::string& name, const std::string& version);

// What host memory one load may take: server.limits.host_memory less what the loaded models'
// partitions account on host devices (cpu:N: weights + activations + workspace). A reload's
// new copy counts beside the old one, which serves until the swap.
struct HostMemoryLimit {
  std::optional<uint64_t> limit_bytes;  // nullopt: unbounded
  uint64_t committed_bytes = 0;
  std::vector<std::string> holders;  // the loaded models counted in committed_bytes

  // OK, or RESOURCE_EXHAUSTED with the session's host accounting and the limit.
  absl::Status Check(const engine::Session& session) const;
};
// "LOADING", "READY", "UNLOADING", "UNAVAILABLE" (RepositoryIndex's state strings).
const char* ModelStateName(ModelState state);

class LoadedModel : public std::enable_shared_from_this<LoadedModel> {
 public:
  // A request's hold on a READY model: while any Ref lives, Unload waits and the session stays.
  class Ref {
   public:
    Ref() = default;
    Ref(Ref&& other) noexcept : model_(std::move(other.model_)) {}
    Ref& operator=(Ref&& other) noexcept;
    ~Ref() { Reset(); }
    void Reset();
    explicit operator bool() const { return model_ != nullptr; }
    LoadedModel* operator->() const { return model_.get(); }
    LoadedModel& operator*() const { return *model_; }

   private:
    friend class LoadedModel;
    explicit Ref(std::shared_ptr<LoadedModel> m) : model_(std::move(m)) {}
    std::shared_ptr<LoadedModel> model_;
  };

  LoadedModel(ModelConfig config, std::shared_ptr<ModelStats> stats);
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  const std::string& name() const { return config_.name; }
  const std::string& version() const { return config_.version; }
  const ModelConfig& config() const { return config_; }
  ModelState state() const;
  std::string reason() const;  // why UNAVAILABLE ("unloaded", the load error); else ""
  // The session while loaded (READY or UNLOADING); null otherwise.
  std::shared_ptr<engine::Session> session() const;
  ModelStats& stats() const { return *stats_; }
  // The same counters, shared (for callbacks that may outlive this LoadedModel).
  const std::shared_ptr<ModelStats>& shared_stats() const { return stats_; }

  // READY only: the model's inputs / outputs and its request queue. Valid while a Ref is held.
  const ModelSignature& signature() const { return signature_; }
  // READY only, for a Triton-layout model (config().triton set): the config.pbtxt as served,
  // completed from the model (CompleteTritonConfig); null otherwise. Valid while a Ref is held.
  const std::shared_ptr<const inference::ModelConfig>& triton_config() const { return triton_; }
  ModelWorker& worker() const { return *worker_; }
  // READY only, for a generative model (config().generation set): the decode loop's model
  // (its session is session()) and the KV budget its sequences reserve from; null otherwise.
  // Valid while a Ref is held.
  genai::GenerativeModel* generator() const { return generator_.get(); }
  KvBudget* kv_budget() const { return kv_budget_.get(); }
  // The same budget, for readers that hold no Ref (metrics); null unless a generative model is
  // loaded.
  std::shared_ptr<KvBudget> shared_kv_budget() const;
  engine::Session& session_ref() const { return *session_; }

  // A Ref if the model is READY; otherwise UNAVAILABLE naming the state.
  absl::StatusOr<Ref> Acquire();

 private:
  friend class ModelRepository;
  absl::Status Load(const std::string& path, const engine::KernelRegistry& registry,
                    const HostMemoryLimit& host);
  // Load's path for a generative model (server/generative_load.cc).
  absl::Status LoadGenerative(const std::string& path, const engine::KernelRegistry& registry,
                              const HostMemoryLimit& host);
  void MarkFailed(const std::string& reason);
  // Stops new requests, waits for the in-flight ones, drops the session.
  void Unload(const std::string& reason);

  // Constant after construction.
  const ModelConfig config_;
  const std::shared_ptr<ModelStats> stats_;

  // Set by Load before the state becomes READY, cleared by Unload after the last Ref is gone.
  std::shared_ptr<engine::Session> session_;
  ModelSignature signature_;
  std::shared_ptr<const inference::ModelConfig> triton_;
  std::unique_ptr<ModelWorker> worker_;
  std::shared_ptr<genai::GenerativeModel> generator_;
  std::shared_ptr<KvBudget> kv_budget_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::condition_variable idle_;
  ModelState state_ = ModelState::kLoading;
  std::string reason_;
  int refs_ = 0;
};

class ModelRepository {
 public:
  // Called after every state change (from the thread that made it), e.g. for health status.
  using StateListener = std::function<void(const std::string& name, ModelState state)>;

  // `config` and `registry` must outlive the repository.
  ModelRepository(std::shared_ptr<const Config> config, const engine::KernelRegistry& registry);
  ~ModelRepository();  // UnloadAll()
  ModelRepository(const ModelRepository&) = delete;
  ModelRepository& operator=(const ModelRepository&) = delete;

  void SetStateListener(StateListener listener);

  // The models to load at start-up: those the config lists, and with load_all_models every
  // directory of the repository holding a model (FolderHoldsModel); sorted, unique.
  std::vector<std::string> StartupModels() const;
  // Loads StartupModels() one by one; failures are logged and shown in Index(), not returned.
  // A `stop` flag that becomes true ends it between two models (shutdown during start-up).
  // Returns the number of models READY.
  int LoadStartupModels(const std::atomic<bool>* stop = nullptr);

  // Loads (or reloads) `name`: every version its version policy selects; versions no longer
  // selected unload. INVALID_ARGUMENT for a name that breaks ValidateModelName (no
  // entry, no statistics); NOT_FOUND when neither the config nor the repository has it;
  // RESOURCE_EXHAUSTED past server.limits (max_loaded_models, host_memory); the load's error
  // otherwise (the model is then UNAVAILABLE with that reason; with several versions, the first
  // version's error, the others still load). Loads run one at a time, so the limits are counted
  // exactly.
  absl::Status Load(const std::string& name);
  // Unloads every version of `name`, waiting for its in-flight requests (a version that failed
  // to load turns "unloaded" too). INVALID_ARGUMENT for an invalid name, NOT_FOUND if it was
  // never loaded. A model that is neither in the repository nor in the config any more leaves
  // the index (and its statistics go) once unloaded.
  absl::Status Unload(const std::string& name);
  // Unloads everything (shutdown).
  void UnloadAll();

  // The model's entry the server chooses (the highest READY version, else the highest one; any
  // state), or null.
  std::shared_ptr<LoadedModel> Find(absl::string_view name) const;
  // `version` of `name` (empty: Find's choice): NOT_FOUND naming the model's versions when there
  // is no such entry. For the RPCs that name a version (metadata, ModelReady, ModelConfig...).
  absl::StatusOr<std::shared_ptr<LoadedModel>> FindVersion(absl::string_view name,
                                                           absl::string_view version) const;
  // The model version a request names, held for one inference: NOT_FOUND for an unknown model
  // (listing the known ones) or version, UNAVAILABLE when it is not READY. `version` empty: the
  // version the server chooses. `*stats` is set to the model's statistics whenever the model is
  // known (to count the refusal), else null.
  absl::StatusOr<LoadedModel::Ref> AcquireForInference(absl::string_view name,
                                                       absl::string_view version,
                                                       ModelStats** stats) const;
  // Every model version loaded or tried, by name then version (the entries the repository holds
  // now), less those unloaded after leaving the repository and the config.
  std::vector<std::shared_ptr<LoadedModel>> Snapshot() const;

  // Triton's strict readiness: every model version tried (at start-up, by a load or a reload)
  // is READY; a version UNAVAILABLE because it was unloaded (RepositoryModelUnload, a version
  // policy that dropped it) does not count. False names the first one that is not in `*why`.
  bool AllServing(std::string* why = nullptr) const;

  struct IndexEntry {
    std::string name;
    std::string version;
    ModelState state = ModelState::kUnavailable;
    std::string reason;
  };
  // The models of the config and the directory (never loaded: "not loaded") and those loaded or
  // loading; an UNAVAILABLE entry of a model in neither is left out, so the index is bounded by
  // the repository, the config and max_loaded_models.
  std::vector<IndexEntry> Index() const;

  // The effective settings of `name`: the config's entry merged with <repo>/<name>/config.yaml
  // (and, for a Triton folder, over its config.pbtxt; version left at its default).
  absl::StatusOr<ModelConfig> ResolveModelConfig(const std::string& name) const;
  // One version of a model as Load will load it: its settings (version set) and its file.
  struct VersionPlan {
    ModelConfig config;
    std::string path;
  };
  // The versions Load loads for `name`, highest first: one for a YAML-configured model; the
  // version policy's choice for a Triton folder. The errors Load reports for a broken config.
  absl::StatusOr<std::vector<VersionPlan>> ResolveVersions(const std::string& name) const;
  // The files that define `name` now (config files, each selected version's model file), for
  // change detection (RepositoryReloader): a new or removed version changes the list.
  std::vector<std::string> ModelFiles(const std::string& name) const;
  const Config& config() const { return *config_; }
  // Where the model file of `name` with settings `config` (ResolveModelConfig's) is, checked
  // against the path rule (config.h, "Paths"): the file Load reads.
  absl::StatusOr<std::string> ModelFilePath(const std::string& name,
                                            const ModelConfig& config) const;

 private:
  // Versions ordered as numbers when both are (Triton's), else as strings.
  struct VersionOrder {
    bool operator()(const std::string& a, const std::string& b) const;
  };
  using Versions = std::map<std::string, std::shared_ptr<LoadedModel>, VersionOrder>;

  std::shared_ptr<std::mutex> OpLock(const std::string& name);
  std::shared_ptr<ModelStats> StatsFor(const std::string& name, const std::string& version);
  // Loads (or reloads) one version; the caller holds the op and load locks.
  absl::Status LoadVersion(const std::string& name, const VersionPlan& plan);
  // Unloads and forgets the versions of `name` that `keep` does not list.
  void DropVersions(const std::string& name, const std::set<std::string>& keep);
  std::shared_ptr<LoadedModel> FindExact(const std::string& name, const std::string& version) const;
  // A Triton folder's settings (config.pbtxt, config.yaml, the main config's entry merged).
  absl::StatusOr<ModelConfig> ResolveTritonConfig(const std::string& name) const;
  void Notify(const std::string& name, ModelState state);
  // The valid model names among the repository's directories; `log_skipped`: warn of the others.
  std::vector<std::string> DirectoryModels(bool log_skipped = false) const;
  // In the config, or a directory of the repository holding a model (FolderHoldsModel).
  bool Known(const std::string& name) const;
  // max_loaded_models and what host memory is left for loading `name`.
  absl::StatusOr<HostMemoryLimit> LimitsFor(const std::string& name, bool reload) const;
  // Records a load of a known model that failed before its session (a broken config.yaml, a
  // model file outside the folder or missing).
  void RecordBrokenConfig(const ModelConfig& config, const absl::Status& status);

  // Constant after construction.
  const std::shared_ptr<const Config> config_;
  const engine::KernelRegistry& registry_;

  mutable std::mutex mu_;
  // State below is protected by mu_.
  std::map<std::string, Versions> models_;  // by name; a name's map is never empty
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelStats>> stats_;
  std::map<std::string, std::shared_ptr<std::mutex>> op_locks_;  // serialize load / unload
  StateListener listener_;

  // Held across each load: one at a time, so that the limits see every loaded model.
  std::mutex load_mu_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_MODEL_REPOSITORY_H_

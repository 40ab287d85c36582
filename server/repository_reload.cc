#include "server/repository_reload.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"

namespace inferd::server {
namespace fs = std::filesystem;

namespace {

RepositoryReloader::FileId Identify(const fs::path& path) {
  RepositoryReloader::FileId id;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return id;  // missing: differs from any existing file
  id.exists = true;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = st.st_size;
  id.mtime = st.st_mtim;
  return id;
}

}  // namespace

bool RepositoryReloader::FileId::operator==(const FileId& o) const {
  return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size &&
         mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
}

std::string RepositoryReloader::Summary::ToString() const {
  return absl::StrCat("SIGHUP: reloaded ", reloaded, ", loaded ", loaded, ", unloaded ", unloaded,
                      ", failed ", failed, ", unchanged ", unchanged,
                      interrupted ? "; interrupted by shutdown" : "",
                      " (the main config file is not re-read: server settings need a restart)");
}

std::vector<RepositoryReloader::FileId> RepositoryReloader::CurrentFiles(
    const std::string& name) const {
  // The config files and the files Load reads (each selected version's), or
  // <repository>/<name>/model.onnx when its settings do not resolve (a broken config, a model
  // gone). A version directory added or removed changes the list.
  std::vector<FileId> ids;
  for (const std::string& file : repository_.ModelFiles(name)) ids.push_back(Identify(file));
  return ids;
}

void RepositoryReloader::Record(const std::string& name) {
  std::vector<FileId> files = CurrentFiles(name);
  std::lock_guard<std::mutex> lock(mu_);
  recorded_[name] = std::move(files);
}

void RepositoryReloader::OnStateChange(const std::string& name, ModelState state) {
  // Recorded as the load starts: a file written during the load reads as changed next time.
  if (state == ModelState::kLoading) Record(name);
}

bool RepositoryReloader::Changed(const std::string& name) const {
  std::vector<FileId> now = CurrentFiles(name);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = recorded_.find(name);
  return it == recorded_.end() || it->second != now;
}

void RepositoryReloader::ReloadReady(const std::shared_ptr<LoadedModel>& model, Summary& summary) {
  const std::string& name = model->name();
  absl::StatusOr<ModelConfig> config = repository_.ResolveModelConfig(name);
  if (absl::IsNotFound(config.status())) {
    spdlog::info("SIGHUP: model '{}': its folder and config entry are gone; unloading", name);
    const absl::Status s = repository_.Unload(name);
    if (s.ok()) {
      ++summary.unloaded;
    } else {
      ++summary.failed;
      spdlog::warn("SIGHUP: model '{}': unload failed: {}", name, std::string(s.message()));
    }
    return;
  }
  bool recorded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    recorded = recorded_.count(name) != 0;
  }
  if (!recorded) Record(name);  // not expected: every load passes through OnStateChange
  if (!recorded || !Changed(name)) {
    ++summary.unchanged;
    return;
  }
  spdlog::info("SIGHUP: model '{}': its files changed since it loaded; reloading", name);
  const absl::Status s = repository_.Load(name);
  if (s.ok()) {
    ++summary.reloaded;
  } else {
    ++summary.failed;
    spdlog::warn("SIGHUP: model '{}': reload failed, the loaded version keeps serving: {}", name,
                 std::string(s.message()));
  }
}

void RepositoryReloader::LoadStartupModel(const std::string& name, Summary& summary) {
  std::shared_ptr<LoadedModel> model = repository_.Find(name);
  if (model != nullptr && model->state() != ModelState::kUnavailable)
    return;  // loading, unloading, or READY since pass 1
  if (model != nullptr && !Changed(name)) {
    ++summary.unchanged;  // failed or unloaded before, and its files are the same
    return;
  }
  spdlog::info("SIGHUP: model '{}': {}; loading", name,
               model == nullptr ? "new in the repository" : "its files changed since it failed");
  const absl::Status s = repository_.Load(name);
  if (s.ok()) {
    ++summary.loaded;
  } else {
    ++summary.failed;
    spdlog::warn("SIGHUP: model '{}': load failed: {}", name, std::string(s.message()));
  }
}

RepositoryReloader::Summary RepositoryReloader::Reload(const std::atomic<bool>* stop) {
  std::lock_guard<std::mutex> reload_lock(reload_mu_);
  const auto stopped = [stop] { return stop != nullptr && stop->load(); };
  Summary summary;
  spdlog::info("SIGHUP: re-reading the model repository {} (the main config file is not re-read)",
               repository_.config().server.model_repository);
  // pass 1: the READY models: reload the changed ones, unload the ones gone. A model with
  // several versions READY is one model (Load reloads its versions together).
  std::set<std::string> seen;
  for (const std::shared_ptr<LoadedModel>& model : repository_.Snapshot()) {
    if (stopped()) break;
    if (model->state() != ModelState::kReady || !seen.insert(model->name()).second) continue;
    ReloadReady(model, summary);
  }
  // pass 2: the start-up models not READY (LoadStartupModel skips the others): the new ones,
  // the failed ones changed since.
  for (const std::string& name : repository_.StartupModels()) {
    if (stopped()) break;
    LoadStartupModel(name, summary);
  }
  summary.interrupted = stopped();
  spdlog::info("{}", summary.ToString());
  return summary;
}

}  // namespace inferd::server

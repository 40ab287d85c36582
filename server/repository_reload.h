// RepositoryReloader: what SIGHUP does (systemd's "reload"): re-reads the model repository and
// brings the loaded models in line with it, through ModelRepository's public API.
//
//   - a READY model whose files (its model.onnx, its <repository>/<name>/config.yaml) changed
//     since it started loading is reloaded: ModelRepository::Load builds the new version, swaps
//     it in and drains the old one, so calls in flight finish on the version they started on
//     (a reload that fails leaves the old version serving);
//   - a start-up model (the config's models, and with load_all_models every folder of the
//     repository) that was never loaded loads; one that is UNAVAILABLE (failed, unloaded) loads
//     again only when its files changed;
//   - a READY model whose folder and config entry are both gone is unloaded;
//   - everything else is left as it is.
// The main config file is not re-read: server settings (addresses, models:, limits) need a
// restart. Every action is logged, and a summary line starting "SIGHUP: ".
//
// The files' identity (inode, size, mtime) is recorded when a model starts loading, by whatever
// path (start-up, reload, RepositoryModelLoad): OnStateChange must be called from the
// repository's state listener. A READY model with no record (none is expected) is recorded and
// counted unchanged.
//
// Example:
//   RepositoryReloader reloader(repository);
//   repository.SetStateListener([&](const std::string& n, ModelState s) {
//     reloader.OnStateChange(n, s);
//   });
//   ... on SIGHUP: RepositoryReloader::Summary s = reloader.Reload(&stop);
//
// Thread-safe; Reload calls are serialized.
#ifndef INFERD_SERVER_REPOSITORY_RELOAD_H_
#define INFERD_SERVER_REPOSITORY_RELOAD_H_

#include <atomic>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <sys/types.h>

#include "server/model_repository.h"

namespace inferd::server {

class RepositoryReloader {
 public:
  // `repository` must outlive the reloader.
  explicit RepositoryReloader(ModelRepository& repository) : repository_(repository) {}

  // Records the model's files when it starts loading (state kLoading).
  void OnStateChange(const std::string& name, ModelState state);

  struct Summary {
    int reloaded = 0;
    int loaded = 0;
    int unloaded = 0;
    int failed = 0;
    int unchanged = 0;
    bool interrupted = false;  // *stop became true; the remaining models were not looked at
    // "SIGHUP: reloaded 1, loaded 0, unloaded 0, failed 0, unchanged 2 (...)"
    std::string ToString() const;
  };
  // One pass over the repository (see the file comment). Between models it checks `*stop` (may
  // be null) and returns early once it is true; a load in progress finishes first.
  Summary Reload(const std::atomic<bool>* stop = nullptr);

  // The identity of one file; equal when the file was not replaced or written since.
  struct FileId {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec mtime{};
    bool operator==(const FileId& o) const;
  };

 private:
  // The files that make up `name` now: its model file, its config.yaml.
  std::vector<FileId> CurrentFiles(const std::string& name) const;
  // True when `name` has a record and its files differ from it, or has none.
  bool Changed(const std::string& name) const;
  void Record(const std::string& name);
  // The actions of one pass; each logs itself.
  void ReloadReady(const std::shared_ptr<LoadedModel>& model, Summary& summary);
  void LoadStartupModel(const std::string& name, Summary& summary);

  ModelRepository& repository_;
  std::mutex reload_mu_;  // one Reload at a time

  mutable std::mutex mu_;
  // Protected by mu_: the files of each model as they were when it last started loading.
  std::map<std::string, std::vector<FileId>> recorded_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_REPOSITORY_RELOAD_H_

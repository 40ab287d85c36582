// Arena selection: the arenas of the loaded models that a (model, device, arena) filter picks,
// for the admin API (which filters) and the metrics collector (which takes everything). Each
// selected arena comes with the session that owns it, so it stays valid while the caller holds
// the selection, even across an unload; hold it only for the duration of one call.
//
// Filters: an empty field matches everything. Order: by model name, then device (cuda:N before
// cpu:N, each by N), then arena (execution before io).
//
// Errors, each message listing what exists:
//   - model given, unknown to the repository (neither loaded, tried, nor in the config or the
//     repository directory): NOT_FOUND;
//   - model known but not loaded (never loaded, LOADING, or UNAVAILABLE after a failed load or
//     an unload): FAILED_PRECONDITION, with its state and reason;
//   - device not of the form cpu[:N] / cuda:N: INVALID_ARGUMENT; well-formed but not a device of
//     the selected model(s): NOT_FOUND;
//   - arena other than "execution" or "io": INVALID_ARGUMENT (admin.proto's contract; only those
//     two names can ever exist).
//
// Thread-safe: reads the repository through its reader contract (model_repository.h).
#ifndef INFERD_SERVER_ARENA_SELECTION_H_
#define INFERD_SERVER_ARENA_SELECTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/session.h"
#include "memory/arena.h"
#include "server/model_repository.h"

namespace inferd::server {

struct ArenaFilter {
  std::string model;   // empty: every loaded model
  std::string device;  // empty: every device; "cpu" reads as "cpu:0"
  std::string arena;   // "execution", "io", or empty: both
};

struct SelectedArena {
  std::string model;
  std::string device;
  memory::ArenaKind kind = memory::ArenaKind::kExecution;
  memory::Arena* arena = nullptr;  // valid while `session` is held
  std::shared_ptr<engine::Session> session;
};

absl::StatusOr<std::vector<SelectedArena>> SelectArenas(const ModelRepository& repository,
                                                        const ArenaFilter& filter);

// A loaded model with its session held.
struct LoadedSession {
  std::shared_ptr<LoadedModel> model;
  std::shared_ptr<engine::Session> session;
};

// Every model with a session (READY or UNLOADING), by name.
std::vector<LoadedSession> LoadedSessions(const ModelRepository& repository);

// The loaded model `name`: NOT_FOUND / FAILED_PRECONDITION as above.
absl::StatusOr<LoadedSession> FindLoadedModel(const ModelRepository& repository,
                                              const std::string& name);

// cuda:N before cpu:N, each by N; anything else after them, by name.
bool DeviceLess(absl::string_view a, absl::string_view b);

}  // namespace inferd::server

#endif  // INFERD_SERVER_ARENA_SELECTION_H_

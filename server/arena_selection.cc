#include "server/arena_selection.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/config.h"

namespace inferd::server {
namespace {

// (rank, index, name): cuda first, then cpu, then anything else.
std::tuple<int, uint64_t, std::string> DeviceKey(absl::string_view device) {
  const size_t colon = device.find(':');
  const absl::string_view type = device.substr(0, colon);
  uint64_t index = 0;
  if (colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(device.substr(colon + 1), &index)) index = UINT64_MAX;
  }
  const int rank = type == "cuda" ? 0 : type == "cpu" ? 1 : 2;
  return {rank, index, std::string(device)};
}

std::string JoinOrNone(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : absl::StrJoin(names, ", ");
}

std::vector<std::string> LoadedNames(const std::vector<LoadedSession>& loaded) {
  std::vector<std::string> names;
  for (const LoadedSession& l : loaded) names.push_back(l.model->name());
  return names;
}

}  // namespace

bool DeviceLess(absl::string_view a, absl::string_view b) { return DeviceKey(a) < DeviceKey(b); }

std::vector<LoadedSession> LoadedSessions(const ModelRepository& repository) {
  std::vector<LoadedSession> out;
  for (std::shared_ptr<LoadedModel>& m : repository.Snapshot()) {
    if (std::shared_ptr<engine::Session> s = m->session()) {
      out.push_back(LoadedSession{std::move(m), std::move(s)});
    }
  }
  std::sort(out.begin(), out.end(), [](const LoadedSession& a, const LoadedSession& b) {
    return a.model->name() < b.model->name();
  });
  return out;
}

absl::StatusOr<LoadedSession> FindLoadedModel(const ModelRepository& repository,
                                              const std::string& name) {
  if (std::shared_ptr<LoadedModel> m = repository.Find(name)) {
    if (std::shared_ptr<engine::Session> s = m->session()) {
      return LoadedSession{std::move(m), std::move(s)};
    }
    const std::string reason = m->reason();
    return absl::FailedPreconditionError(
        absl::StrCat("model '", name, "' is not loaded (", ModelStateName(m->state()),
                     reason.empty() ? "" : ": ", reason,
                     "); loaded models: ", JoinOrNone(LoadedNames(LoadedSessions(repository)))));
  }
  std::vector<std::string> known;
  for (const ModelRepository::IndexEntry& e : repository.Index()) {
    if (e.name == name) {
      return absl::FailedPreconditionError(
          absl::StrCat("model '", name, "' is not loaded (", ModelStateName(e.state),
                       e.reason.empty() ? "" : ": ", e.reason,
                       "); loaded models: ", JoinOrNone(LoadedNames(LoadedSessions(repository)))));
    }
    known.push_back(e.name);
  }
  return absl::NotFoundError(
      absl::StrCat("no model '", name, "'; the repository has: ", JoinOrNone(known)));
}

absl::StatusOr<std::vector<SelectedArena>> SelectArenas(const ModelRepository& repository,
                                                        const ArenaFilter& filter) {
  // pass 1: validate the device and arena names (no repository access needed).
  std::string device;
  if (!filter.device.empty()) {
    absl::StatusOr<std::string> normalized = NormalizeDeviceName(filter.device);
    if (!normalized.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("device '", filter.device,
                                                     "': expected cpu, cpu:N or cuda:N (",
                                                     normalized.status().message(), ")"));
    }
    device = *std::move(normalized);
  }
  bool want_execution = true, want_io = true;
  if (!filter.arena.empty()) {
    want_execution = filter.arena == memory::ArenaKindName(memory::ArenaKind::kExecution);
    want_io = filter.arena == memory::ArenaKindName(memory::ArenaKind::kIO);
    if (!want_execution && !want_io) {
      return absl::InvalidArgumentError(
          absl::StrCat("arena '", filter.arena, "': expected 'execution' or 'io'"));
    }
  }

  // pass 2: the models.
  std::vector<LoadedSession> models;
  if (filter.model.empty()) {
    models = LoadedSessions(repository);
  } else {
    absl::StatusOr<LoadedSession> m = FindLoadedModel(repository, filter.model);
    if (!m.ok()) return m.status();
    models.push_back(*std::move(m));
  }

  // pass 3: their arenas.
  std::vector<SelectedArena> out;
  std::set<std::string> devices_seen;
  for (const LoadedSession& m : models) {
    std::vector<const engine::DeviceArenas*> devices;
    for (const engine::DeviceArenas& d : m.session->devices()) {
      devices_seen.insert(d.device);
      if (device.empty() || d.device == device) devices.push_back(&d);
    }
    std::sort(devices.begin(), devices.end(),
              [](const engine::DeviceArenas* a, const engine::DeviceArenas* b) {
                return DeviceLess(a->device, b->device);
              });
    for (const engine::DeviceArenas* d : devices) {
      if (want_execution && d->execution != nullptr) {
        out.push_back(SelectedArena{m.model->name(), d->device, memory::ArenaKind::kExecution,
                                    d->execution.get(), m.session});
      }
      if (want_io && d->io != nullptr) {
        out.push_back(SelectedArena{m.model->name(), d->device, memory::ArenaKind::kIO, d->io.get(),
                                    m.session});
      }
    }
  }
  if (!device.empty() && devices_seen.count(device) == 0) {
    std::vector<std::string> seen(devices_seen.begin(), devices_seen.end());
    std::sort(seen.begin(), seen.end(),
              [](const std::string& a, const std::string& b) { return DeviceLess(a, b); });
    return absl::NotFoundError(absl::StrCat(
        "device '", device, "' is not used by ",
        filter.model.empty() ? "any loaded model" : absl::StrCat("model '", filter.model, "'"),
        "; devices: ", JoinOrNone(seen)));
  }
  return out;
}

}  // namespace inferd::server

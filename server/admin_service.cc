#include "server/admin_service.h"

#include <malloc.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "memory/process_stats.h"
#include "partition/plan_report.h"
#include "server/arena_selection.h"

namespace inferd::server {
namespace {

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

template <typename Request>
ArenaFilter FilterOf(const Request& r) {
  return ArenaFilter{r.model(), r.device(), r.arena()};
}

template <typename Entry>
void SetArenaKey(const SelectedArena& a, Entry* e) {
  e->set_model(a.model);
  e->set_device(a.device);
  e->set_arena(memory::ArenaKindName(a.kind));
}

void FillStats(const memory::ArenaStats& s, adminpb::ArenaMemoryStats* e) {
  const bool unbounded = s.retention_cap_bytes == memory::Arena::kUnbounded;
  e->set_live_bytes(s.live_bytes);
  e->set_retained_bytes(s.retained_bytes);
  e->set_peak_live_bytes(s.peak_live_bytes);
  e->set_retention_cap_bytes(unbounded ? 0 : s.retention_cap_bytes);
  e->set_unbounded(unbounded);
  e->set_system_allocations(s.system_allocations);
  e->set_system_frees(s.system_frees);
  e->set_evictions(s.evictions);
  e->set_evicted_bytes(s.evicted_bytes);
  e->set_trims(s.trims);
  e->set_trimmed_bytes(s.trimmed_bytes);
  e->set_outstanding_leases(s.outstanding_leases);
  e->set_live_buffers(s.live_buffers);
  e->set_retained_buffers(s.retained_buffers);
  e->set_allocations(s.allocations);
  e->set_reuses(s.reuses);
  e->set_allocation_failures(s.allocation_failures);
  e->set_live_requested_bytes(s.live_requested_bytes);
}

uint64_t Delta(uint64_t after, uint64_t before) { return after >= before ? after - before : 0; }

void FillPartitionReport(const partition::PlanReport& r, adminpb::GetPartitionReportResponse* out) {
  std::vector<const partition::DeviceReport*> devices;
  for (const partition::DeviceReport& d : r.devices) devices.push_back(&d);
  std::stable_sort(devices.begin(), devices.end(),
                   [](const partition::DeviceReport* a, const partition::DeviceReport* b) {
                     return DeviceLess(a->device, b->device);
                   });
  for (const partition::DeviceReport* d : devices) {
    adminpb::DevicePartition* p = out->add_devices();
    p->set_device(d->device);
    p->set_nodes(static_cast<uint64_t>(d->nodes));
    p->set_weight_bytes(d->accounted.weights);
    p->set_activation_peak_bytes(d->activation_peak_bytes);
    p->set_workspace_bytes(d->accounted.workspace);
    p->set_budget_bytes(d->budget_bytes.value_or(0));
    p->set_headroom_bytes(d->headroom_bytes().value_or(0));
    p->set_activation_bytes(d->accounted.activations);
    p->set_accounted_bytes(d->accounted.total());
    p->set_measured_bytes(d->measured_bytes.value_or(0));
    p->set_activation_sum_bytes(d->activation_sum_bytes);
  }
  // One entry per (layer, device), in graph order of the first node, from the node reports (a
  // layer split over two devices gets two entries with their own bytes). No named layer: none.
  const bool named = std::any_of(r.layers.begin(), r.layers.end(),
                                 [](const partition::LayerReport& l) { return !l.layer.empty(); });
  if (named) {
    std::map<std::pair<std::string, std::string>, adminpb::LayerPartition*> by_key;
    for (const partition::NodeReport& n : r.nodes) {
      adminpb::LayerPartition*& l = by_key[{n.layer, n.device}];
      if (l == nullptr) {
        l = out->add_layers();
        l->set_layer(n.layer);
        l->set_device(n.device);
      }
      l->set_nodes(l->nodes() + 1);
      l->set_bytes(l->bytes() + n.cost.cost.total());
    }
  }
  for (const std::string& w : r.warnings) out->add_warnings(w);
  out->set_text(r.ToString());
}

}  // namespace

template <typename Call>
grpc::ServerUnaryReactor* AdminService::Serve(grpc::CallbackServerContext* context,
                                              const char* method, Call call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::Status status = auth_.Authorize(context->client_metadata());
  if (!status.ok()) {
    spdlog::warn("admin {} from {} refused: {}", method, context->peer(),
                 std::string(status.message()));
  } else {
    status = call();
    if (!status.ok()) {
      spdlog::debug("admin {} from {}: {}", method, context->peer(), status.ToString());
    }
  }
  reactor->Finish(ToGrpc(status));
  return reactor;
}

grpc::ServerUnaryReactor* AdminService::GetMemoryStats(
    grpc::CallbackServerContext* context, const adminpb::GetMemoryStatsRequest* request,
    adminpb::GetMemoryStatsResponse* response) {
  return Serve(context, "GetMemoryStats", [&] { return DoGetMemoryStats(*request, response); });
}

grpc::ServerUnaryReactor* AdminService::SetRetentionCap(
    grpc::CallbackServerContext* context, const adminpb::SetRetentionCapRequest* request,
    adminpb::SetRetentionCapResponse* response) {
  return Serve(context, "SetRetentionCap", [&] {
    absl::Status s = DoSetRetentionCap(*request, response);
    if (s.ok()) {
      spdlog::info("admin SetRetentionCap from {}: {{{}}}: {} arena(s), evicted {} bytes",
                   context->peer(), request->ShortDebugString(), response->applied_size(),
                   response->total_evicted_bytes());
    }
    return s;
  });
}

grpc::ServerUnaryReactor* AdminService::Trim(grpc::CallbackServerContext* context,
                                             const adminpb::TrimRequest* request,
                                             adminpb::TrimResponse* response) {
  return Serve(context, "Trim", [&] {
    absl::Status s = DoTrim(*request, response);
    if (s.ok()) {
      spdlog::info(
          "admin Trim from {}: {{{}}}: {} arena(s), released {} bytes; process resident {} -> {} "
          "bytes",
          context->peer(), request->ShortDebugString(), response->arenas_size(),
          response->total_released_bytes(), response->process_resident_bytes_before(),
          response->process_resident_bytes_after());
    }
    return s;
  });
}

grpc::ServerUnaryReactor* AdminService::ResetPeak(grpc::CallbackServerContext* context,
                                                  const adminpb::ResetPeakRequest* request,
                                                  adminpb::ResetPeakResponse* response) {
  return Serve(context, "ResetPeak", [&] {
    absl::Status s = DoResetPeak(*request, response);
    if (s.ok()) {
      spdlog::info("admin ResetPeak from {}: {{{}}}: {} arena(s)", context->peer(),
                   request->ShortDebugString(), response->arenas_size());
    }
    return s;
  });
}

grpc::ServerUnaryReactor* AdminService::GetPartitionReport(
    grpc::CallbackServerContext* context, const adminpb::GetPartitionReportRequest* request,
    adminpb::GetPartitionReportResponse* response) {
  return Serve(context, "GetPartitionReport",
               [&] { return DoGetPartitionReport(*request, response); });
}

absl::Status AdminService::DoGetMemoryStats(const adminpb::GetMemoryStatsRequest& request,
                                            adminpb::GetMemoryStatsResponse* response) const {
  absl::StatusOr<std::vector<SelectedArena>> arenas = SelectArenas(repository_, FilterOf(request));
  if (!arenas.ok()) return arenas.status();
  for (const SelectedArena& a : *arenas) {
    adminpb::ArenaMemoryStats* e = response->add_arenas();
    SetArenaKey(a, e);
    FillStats(a.arena->Stats(), e);
  }
  return absl::OkStatus();
}

absl::Status AdminService::DoSetRetentionCap(const adminpb::SetRetentionCapRequest& request,
                                             adminpb::SetRetentionCapResponse* response) const {
  absl::StatusOr<std::vector<SelectedArena>> arenas = SelectArenas(repository_, FilterOf(request));
  if (!arenas.ok()) return arenas.status();
  const uint64_t cap = request.unbounded() ? memory::Arena::kUnbounded : request.bytes();
  uint64_t total = 0;
  for (const SelectedArena& a : *arenas) {
    const memory::ArenaStats before = a.arena->Stats();
    a.arena->SetRetentionCap(cap);
    const memory::ArenaStats after = a.arena->Stats();
    adminpb::AppliedRetentionCap* e = response->add_applied();
    SetArenaKey(a, e);
    const bool unbounded = after.retention_cap_bytes == memory::Arena::kUnbounded;
    e->set_retention_cap_bytes(unbounded ? 0 : after.retention_cap_bytes);
    e->set_unbounded(unbounded);
    e->set_evicted_buffers(Delta(after.evictions, before.evictions));
    e->set_evicted_bytes(Delta(after.evicted_bytes, before.evicted_bytes));
    e->set_retained_bytes(after.retained_bytes);
    total += e->evicted_bytes();
  }
  response->set_total_evicted_bytes(total);
  return absl::OkStatus();
}

absl::Status AdminService::DoTrim(const adminpb::TrimRequest& request,
                                  adminpb::TrimResponse* response) const {
  absl::StatusOr<std::vector<SelectedArena>> arenas = SelectArenas(repository_, FilterOf(request));
  if (!arenas.ok()) return arenas.status();
  const long resident_before = memory::ResidentBytes();
  uint64_t total = 0;
  for (const SelectedArena& a : *arenas) {
    const uint64_t frees_before = a.arena->Stats().system_frees;
    const uint64_t released = a.arena->Trim();
    const uint64_t frees_after = a.arena->Stats().system_frees;
    adminpb::TrimmedArena* e = response->add_arenas();
    SetArenaKey(a, e);
    e->set_released_bytes(released);
    e->set_released_buffers(Delta(frees_after, frees_before));
    total += released;
  }
  response->set_total_released_bytes(total);
  // The heap's free pages too: what gRPC freed (large receive buffers) stays resident otherwise,
  // since glibc serves messages below its dynamic mmap threshold from the heap.
  malloc_trim(0);
  const long resident_after = memory::ResidentBytes();
  response->set_process_resident_bytes_before(resident_before > 0 ? resident_before : 0);
  response->set_process_resident_bytes_after(resident_after > 0 ? resident_after : 0);
  return absl::OkStatus();
}

absl::Status AdminService::DoResetPeak(const adminpb::ResetPeakRequest& request,
                                       adminpb::ResetPeakResponse* response) const {
  absl::StatusOr<std::vector<SelectedArena>> arenas = SelectArenas(repository_, FilterOf(request));
  if (!arenas.ok()) return arenas.status();
  for (const SelectedArena& a : *arenas) {
    const uint64_t before = a.arena->Stats().peak_live_bytes;
    a.arena->ResetPeak();
    adminpb::PeakReset* e = response->add_arenas();
    SetArenaKey(a, e);
    e->set_previous_peak_live_bytes(before);
    e->set_peak_live_bytes(a.arena->Stats().peak_live_bytes);
  }
  return absl::OkStatus();
}

absl::Status AdminService::DoGetPartitionReport(
    const adminpb::GetPartitionReportRequest& request,
    adminpb::GetPartitionReportResponse* response) const {
  if (request.model().empty()) {
    return absl::InvalidArgumentError("GetPartitionReport: 'model' is required");
  }
  absl::StatusOr<LoadedSession> m = FindLoadedModel(repository_, request.model());
  if (!m.ok()) return m.status();
  if (!request.version().empty() && request.version() != m->model->version()) {
    return absl::NotFoundError(absl::StrCat("model '", request.model(), "' has version '",
                                            m->model->version(), "' loaded, not '",
                                            request.version(), "'"));
  }
  response->set_model(m->model->name());
  response->set_version(m->model->version());
  FillPartitionReport(m->session->partition_report(), response);
  return absl::OkStatus();
}

}  // namespace inferd::server

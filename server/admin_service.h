// AdminService: inferd.admin.v1.Admin (proto/admin.proto) over the ModelRepository: memory
// stats of every (model, device, arena), retention caps, trims, peak resets, and a model's
// partition report. InferdServer serves it on its own listener (config.server.admin_address).
//
// Every call is first checked by AdminAuth (server/admin_auth.h: a bearer token when one is
// configured). Filters and errors are those of SelectArenas (server/arena_selection.h): unknown
// model or device NOT_FOUND, model not loaded FAILED_PRECONDITION, malformed device or arena
// INVALID_ARGUMENT, each message listing what exists. An empty filter selects every arena of
// every loaded model; a selection that is empty because nothing is loaded is not an error.
//
// Changes are applied to the live arenas at once (SetRetentionCap evicts before it returns) and
// logged with the caller's address; they are not persisted: a model that is reloaded starts from
// its configured caps. Evicted / released buffer counts are differences of the arena's counters
// around the change, so traffic on the same arena during the call can add to them.
//
// GetPartitionReport maps the session's partition::PlanReport: devices ordered cuda:N, then
// cpu:N; weight_bytes and workspace_bytes are the accounted figures; headroom_bytes is the
// report's own (budget - accounted total, what the partitioner checked), 0 without a budget;
// layers has one entry per (layer, device) in graph order, with the bytes of that device's nodes
// (a layer split over two devices gets two entries; "" = nodes outside any layer), and is empty
// when no named layer was detected; text is PlanReport::ToString().
//
// Handlers run inline on gRPC's callback threads (they only take arena locks, briefly).
// Thread-safe; the repository must outlive the service.
#ifndef INFERD_SERVER_ADMIN_SERVICE_H_
#define INFERD_SERVER_ADMIN_SERVICE_H_

#include "absl/status/status.h"
#include "proto/admin.grpc.pb.h"
#include "server/admin_auth.h"
#include "server/model_repository.h"

namespace inferd::server {

namespace adminpb = ::inferd::admin::v1;

class AdminService final : public adminpb::Admin::CallbackService {
 public:
  AdminService(const ModelRepository& repository, AdminAuth auth)
      : repository_(repository), auth_(std::move(auth)) {}
  AdminService(const AdminService&) = delete;
  AdminService& operator=(const AdminService&) = delete;

  grpc::ServerUnaryReactor* GetMemoryStats(grpc::CallbackServerContext* context,
                                           const adminpb::GetMemoryStatsRequest* request,
                                           adminpb::GetMemoryStatsResponse* response) override;
  grpc::ServerUnaryReactor* SetRetentionCap(grpc::CallbackServerContext* context,
                                            const adminpb::SetRetentionCapRequest* request,
                                            adminpb::SetRetentionCapResponse* response) override;
  grpc::ServerUnaryReactor* Trim(grpc::CallbackServerContext* context,
                                 const adminpb::TrimRequest* request,
                                 adminpb::TrimResponse* response) override;
  grpc::ServerUnaryReactor* ResetPeak(grpc::CallbackServerContext* context,
                                      const adminpb::ResetPeakRequest* request,
                                      adminpb::ResetPeakResponse* response) override;
  grpc::ServerUnaryReactor* GetPartitionReport(
      grpc::CallbackServerContext* context, const adminpb::GetPartitionReportRequest* request,
      adminpb::GetPartitionReportResponse* response) override;

  // The calls without gRPC (no authorization): what the handlers run after AdminAuth.
  absl::Status DoGetMemoryStats(const adminpb::GetMemoryStatsRequest& request,
                                adminpb::GetMemoryStatsResponse* response) const;
  absl::Status DoSetRetentionCap(const adminpb::SetRetentionCapRequest& request,
                                 adminpb::SetRetentionCapResponse* response) const;
  absl::Status DoTrim(const adminpb::TrimRequest& request, adminpb::TrimResponse* response) const;
  absl::Status DoResetPeak(const adminpb::ResetPeakRequest& request,
                           adminpb::ResetPeakResponse* response) const;
  absl::Status DoGetPartitionReport(const adminpb::GetPartitionReportRequest& request,
                                    adminpb::GetPartitionReportResponse* response) const;

 private:
  // Authorizes, runs `call`, finishes the reactor with its status.
  template <typename Call>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context, const char* method,
                                  Call call);

  // Constant after construction.
  const ModelRepository& repository_;
  const AdminAuth auth_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_ADMIN_SERVICE_H_

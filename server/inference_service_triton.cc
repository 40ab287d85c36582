// InferenceService's Triton methods: ModelConfig and ModelStatistics (answered by
// server/triton_views.h, as HTTP answers them), and the system shared-memory registry
// (SystemSharedMemoryStatus / Register / Unregister over server/shared_memory.h). Thread-safe,
// as the service.
#include <spdlog/spdlog.h>

#include "server/infer_handler.h"
#include "server/inference_service.h"
#include "server/triton_views.h"

namespace inferd::server {
namespace {

grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                 const absl::Status& status = absl::OkStatus()) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

absl::Status NoSharedMemory() {
  return absl::UnimplementedError("system shared memory is not available on this server");
}

}  // namespace

grpc::ServerUnaryReactor* InferenceService::ModelConfig(
    grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  absl::StatusOr<inference::ModelConfig> config =
      ModelConfigOf(repository_, request->name(), request->version());
  if (!config.ok()) return Answer(context, config.status());
  *response->mutable_config() = *std::move(config);
  return Answer(context);
}

grpc::ServerUnaryReactor* InferenceService::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  absl::StatusOr<inference::ModelStatisticsResponse> stats =
      ModelStatisticsOf(repository_, request->name(), request->version());
  if (!stats.ok()) return Answer(context, stats.status());
  *response = *std::move(stats);
  return Answer(context);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
    inference::SystemSharedMemoryStatusResponse* response) {
  if (shared_memory_ == nullptr) return Answer(context, NoSharedMemory());
  absl::StatusOr<std::vector<SharedMemoryRegistry::RegionStatus>> regions =
      shared_memory_->Status(request->name());
  if (!regions.ok()) return Answer(context, regions.status());
  for (const SharedMemoryRegistry::RegionStatus& r : *regions) {
    inference::SystemSharedMemoryStatusResponse::RegionStatus& out =
        (*response->mutable_regions())[r.name];
    out.set_name(r.name);
    out.set_key(r.key);
    out.set_offset(r.offset);
    out.set_byte_size(r.byte_size);
  }
  return Answer(context);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryRegister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryRegisterRequest* request,
    inference::SystemSharedMemoryRegisterResponse*) {
  if (shared_memory_ == nullptr) return Answer(context, NoSharedMemory());
  absl::Status s = shared_memory_->Register(request->name(), request->key(), request->offset(),
                                            request->byte_size());
  if (s.ok()) {
    spdlog::info("shared memory region '{}' registered from {}: key {}, {} bytes at offset {}",
                 request->name(), context->peer(), request->key(), request->byte_size(),
                 request->offset());
  }
  return Answer(context, s);
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryUnregisterRequest* request,
    inference::SystemSharedMemoryUnregisterResponse*) {
  if (shared_memory_ == nullptr) return Answer(context, NoSharedMemory());
  return Answer(context, shared_memory_->Unregister(request->name()));
}

}  // namespace inferd::server

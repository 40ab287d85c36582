#include "server/inference_service.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "base/message_text.h"
#include "base/status_macros.h"
#include "server/admin_auth.h"
#include "server/config.h"
#include "server/infer_handler.h"
#include "server/kserve_types.h"
#include "server/stream_infer_handler.h"
#include "server/triton_views.h"
#include "server/version.h"

namespace inferd::server {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context,
                               const absl::Status& status = absl::OkStatus()) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Whether this call may `method` (RepositoryModelLoad / Unload) the model `name`: model control
// enabled, the admin token when one is configured (a refusal is logged), then a valid name:
// checked after access, so a caller without access learns nothing from it.
absl::Status CheckModelControl(absl::string_view method, const ServerConfig& server,
                               const grpc::CallbackServerContext& context,
                               const std::string& name) {
  INFERD_RETURN_IF_ERROR(
      CheckModelControlAccess(server, context.client_metadata(), method, context.peer()));
  return ValidateModelName(name);
}

}  // namespace

InferenceService::InferenceService(ModelRepository& repository, SharedMemoryRegistry* shared_memory)
    : repository_(repository), shared_memory_(shared_memory) {}

InferenceService::~InferenceService() = default;

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* context,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* response) {
  response->set_live(true);
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* context,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* response) {
  // Triton's strict readiness: start-up is over (and no drain began) and every model tried is
  // READY (ModelRepository::AllServing), so a readiness probe holds traffic back from a server
  // whose model failed to load.
  response->set_ready(ready() && repository_.AllServing());
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* context,
                                                       const inference::ModelReadyRequest* request,
                                                       inference::ModelReadyResponse* response) {
  absl::StatusOr<std::shared_ptr<LoadedModel>> model =
      FindModelVersion(repository_, request->name(), request->version());
  if (!model.ok()) return Done(context, model.status());
  response->set_ready((*model)->state() == ModelState::kReady);
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  response->set_name(kInferdName);
  response->set_version(kInferdVersion);
  for (const std::string& e : ServerExtensions(Transport::kGrpc)) response->add_extensions(e);
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  absl::StatusOr<inference::ModelMetadataResponse> metadata =
      ModelMetadataOf(repository_, request->name(), request->version());
  if (!metadata.ok()) return Done(context, metadata.status());
  *response = *std::move(metadata);
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const grpc::ByteBuffer* request,
                                                       grpc::ByteBuffer* response) {
  return HandleModelInfer(repository_, context, request, response, shared_memory_);
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
InferenceService::ModelStreamInfer(grpc::CallbackServerContext* context) {
  return HandleModelStreamInfer(repository_, context);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  for (const ModelRepository::IndexEntry& e : repository_.Index()) {
    if (request->ready() && e.state != ModelState::kReady) continue;
    auto* m = response->add_models();
    m->set_name(e.name);
    m->set_version(e.version);
    m->set_state(ModelStateName(e.state));
    m->set_reason(e.reason);
  }
  return Done(context);
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse*) {
  if (absl::Status s = CheckModelControl("RepositoryModelLoad", repository_.config().server,
                                         *context, request->model_name());
      !s.ok()) {
    return Done(context, s);
  }
  if (!request->parameters().empty()) {
    return Done(context, absl::InvalidArgumentError(
                             "RepositoryModelLoad parameters are not supported; put the model's "
                             "settings in <repository>/<model>/config.yaml"));
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string name = request->model_name();
  spdlog::info("RepositoryModelLoad '{}' from {}", name, context->peer());
  background_.Run([this, reactor, name] { reactor->Finish(ToGrpcStatus(repository_.Load(name))); });
  return reactor;
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse*) {
  if (absl::Status s = CheckModelControl("RepositoryModelUnload", repository_.config().server,
                                         *context, request->model_name());
      !s.ok()) {
    return Done(context, s);
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::string name = request->model_name();
  spdlog::info("RepositoryModelUnload '{}' from {}", name, context->peer());
  background_.Run(
      [this, reactor, name] { reactor->Finish(ToGrpcStatus(repository_.Unload(name))); });
  return reactor;
}

}  // namespace inferd::server

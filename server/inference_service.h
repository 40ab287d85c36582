// InferenceService: inference.GRPCInferenceService (KServe v2 + Triton's repository extension)
// over the ModelRepository, with gRPC's callback API. ModelInfer is a raw method (ByteBuffer in
// and out) for the zero-copy request reader and response writer (server/infer_handler.h); the
// other methods are typed. Triton extensions not listed in the proto answer UNIMPLEMENTED.
//
// Triton's ModelConfig, ModelStatistics and SystemSharedMemory* methods (and ServerMetadata's
// extension list) are in inference_service_triton.cc, over server/triton_views.h and the
// SharedMemoryRegistry (server/shared_memory.h).
//
// Model control (server.model_control, config.h): with `none` (the default) RepositoryModelLoad
// and Unload answer FAILED_PRECONDITION; with `explicit` they load / unload, and when an admin
// token is configured they must carry it (UNAUTHENTICATED otherwise). Every model name a call
// carries is checked with ValidateModelName first (INVALID_ARGUMENT, quoted at most 64 bytes).
//
// RepositoryModelLoad / Unload block (a load, a drain of in-flight requests), so they run on
// threads of their own, never on gRPC's; the destructor joins them.
//
// Errors (docs/protocol.md, "Errors"): unknown model or version NOT_FOUND; model not ready
// UNAVAILABLE; malformed request INVALID_ARGUMENT; full queue RESOURCE_EXHAUSTED.
//
// Thread-safe.
#ifndef INFERD_SERVER_INFERENCE_SERVICE_H_
#define INFERD_SERVER_INFERENCE_SERVICE_H_

#include <atomic>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "proto/inference.grpc.pb.h"
#include "server/background_threads.h"
#include "server/model_repository.h"
#include "server/shared_memory.h"

namespace inferd::server {

using InferenceServiceBase = inference::GRPCInferenceService::WithRawCallbackMethod_ModelInfer<
    inference::GRPCInferenceService::CallbackService>;

class InferenceService final : public InferenceServiceBase {
 public:
  // `repository` and `shared_memory` (null: no system shared memory) must outlive the service.
  explicit InferenceService(ModelRepository& repository,
                            SharedMemoryRegistry* shared_memory = nullptr);
  ~InferenceService() override;

  // ServerReady's answer: true once start-up loading is done, false again while draining.
  void SetReady(bool ready) { ready_.store(ready); }
  bool ready() const { return ready_.load(); }

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  // Decoupled streaming for generative models (server/stream_infer_handler.h).
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
  ModelStreamInfer(grpc::CallbackServerContext* context) override;
  // inference_service_triton.cc
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryStatus(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryStatusRequest* request,
      inference::SystemSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryRegisterRequest* request,
      inference::SystemSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryUnregisterRequest* request,
      inference::SystemSharedMemoryUnregisterResponse* response) override;

  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;

 private:
  ModelRepository& repository_;
  SharedMemoryRegistry* const shared_memory_;  // may be null
  std::atomic<bool> ready_{false};
  // Loads and unloads; declared last, so its destructor joins them first.
  BackgroundThreads background_;
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_INFERENCE_SERVICE_H_

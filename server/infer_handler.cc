#include "server/infer_handler.h"

#include <chrono>
#include <memory>
#include <utility>

#include "server/infer_job.h"
#include "server/request_reader.h"
#include "server/response_writer.h"

namespace inferd::server {
namespace {

absl::Time ToAbslTime(std::chrono::system_clock::time_point tp) {
  if (tp == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(tp);
}

// gRPC's side of a ModelInfer call: the zero-copy ByteBuffer (response_writer.h), then Finish.
class GrpcResponder final : public InferResponder {
 public:
  GrpcResponder(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
                grpc::ByteBuffer* response)
      : context_(context),
        reactor_(reactor),
        response_(response),
        deadline_(ToAbslTime(context->deadline())) {}

  bool Cancelled() const override { return context_->IsCancelled(); }
  absl::Time deadline() const override { return deadline_; }
  void Respond(const absl::Status& status, InferResult result) override {
    if (status.ok()) {
      *response_ = WriteInferResponse(std::move(result.header), std::move(result.outputs),
                                      std::move(result.on_released));
    }
    reactor_->Finish(ToGrpcStatus(status));
  }

 private:
  grpc::CallbackServerContext* const context_;
  grpc::ServerUnaryReactor* const reactor_;
  grpc::ByteBuffer* const response_;
  const absl::Time deadline_;
};

}  // namespace

grpc::ServerUnaryReactor* HandleModelInfer(ModelRepository& repository,
                                           grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response,
                                           const SharedMemoryRegistry* shared_memory) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const absl::Time received = absl::Now();
  auto responder = std::make_unique<GrpcResponder>(context, reactor, response);
  absl::StatusOr<std::unique_ptr<InferRequest>> req = InferRequest::Parse(*request);
  if (!req.ok()) {
    responder->Respond(req.status(), {});
    return reactor;
  }
  (*req)->set_shared_memory(shared_memory);
  SubmitInfer(repository, *std::move(req), std::move(responder), received);
  return reactor;
}

}  // namespace inferd::server

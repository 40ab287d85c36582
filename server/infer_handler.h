// The ModelInfer call path, from gRPC's raw request bytes to the zero-copy response:
//
//   gRPC thread:   InferRequest::Parse (header only, raw inputs stay in gRPC's slices)
//                  -> find the model, Acquire a Ref (READY only) -> Bind (validate, borrow / stage)
//                  -> ModelWorker::Submit (full queue: RESOURCE_EXHAUSTED at once)
//   worker thread: dropped if cancelled / past its deadline, else Session::Run
//                  -> outputs exported as IOLeases -> WriteInferResponse -> Finish
//
// Each call counts its status code, borrowed / staged input bytes and queue / compute /
// serialize / request latency in the model's ModelStats.
//
// Thread-safe.
#ifndef INFERD_SERVER_INFER_HANDLER_H_
#define INFERD_SERVER_INFER_HANDLER_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include "absl/status/status.h"
#include "base/message_text.h"
#include "server/kserve_types.h"
#include "server/model_repository.h"
#include "server/shared_memory.h"

namespace inferd::server {

// The status a client sees; the message bounded (base/message_text.h: BoundMessage).
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), BoundMessage(s.message()));
}

// Handles one ModelInfer call; returns the call's reactor (finished now or later by a worker).
// `shared_memory` (may be null): the regions inputs and outputs may name.
grpc::ServerUnaryReactor* HandleModelInfer(ModelRepository& repository,
                                           grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response,
                                           const SharedMemoryRegistry* shared_memory = nullptr);

}  // namespace inferd::server

#endif  // INFERD_SERVER_INFER_HANDLER_H_

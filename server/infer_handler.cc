#include "server/infer_handler.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/message_text.h"
#include "server/request_reader.h"
#include "server/response_writer.h"

namespace inferd::server {
namespace {

absl::Time ToAbslTime(std::chrono::system_clock::time_point tp) {
  if (tp == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(tp);
}

// Answers a call that never reached a model's worker.
grpc::ServerUnaryReactor* Reject(grpc::ServerUnaryReactor* reactor, const absl::Status& status,
                                 ModelStats* stats) {
  if (stats != nullptr) stats->CountRequest(status.code());
  spdlog::debug("infer: {}: {}", absl::StatusCodeToString(status.code()),
                std::string(status.message()));
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// One accepted ModelInfer call on its way through the model's queue. Members are destroyed in
// reverse order: the request (staging buffers, slices) goes before the model Ref.
class InferCall final : public WorkItem {
 public:
  InferCall(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
            grpc::ByteBuffer* response, LoadedModel::Ref model,
            std::unique_ptr<InferRequest> request, absl::Time received)
      : model_(std::move(model)),
        context_(context),
        reactor_(reactor),
        response_(response),
        request_(std::move(request)),
        received_(received),
        deadline_(ToAbslTime(context->deadline())) {}

  bool Cancelled() const override { return context_->IsCancelled(); }
  absl::Time deadline() const override { return deadline_; }
  void Drop(const absl::Status& why) override { Finish(why); }

  void Run(absl::Duration queued) override {
    engine::Session& session = model_->session_ref();
    ModelStats& stats = model_->stats();
    engine::RunOptions options;
    grpc::CallbackServerContext* context = context_;
    options.cancelled = [context] { return context->IsCancelled(); };
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<engine::OutputTensor>> outputs =
        session.Run(request_->inputs(), request_->requested_outputs(), options);
    const absl::Duration compute = absl::Now() - start;
    stats.compute.Record(compute);
    request_->ReleaseStaging();
    if (!outputs.ok()) {
      Finish(outputs.status());
      return;
    }
    stats.inferences.fetch_add(1, std::memory_order_relaxed);

    std::vector<LeasedOutput> leased;
    leased.reserve(outputs->size());
    uint64_t bytes = 0;
    for (engine::OutputTensor& out : *outputs) {
      if (!out.buffer.valid()) {  // an empty tensor may come without a buffer
        leased.push_back({std::move(out.name), out.type, std::move(out.shape), {}});
        continue;
      }
      memory::IOArena* arena = nullptr;
      for (const engine::DeviceArenas& d : session.devices()) {
        if (d.io->Owns(out.buffer)) arena = d.io.get();
      }
      if (arena == nullptr) {
        Finish(absl::InternalError(absl::StrCat("output '", out.name, "' is in no IOArena")));
        return;
      }
      absl::StatusOr<memory::IOLease> lease = arena->Export(std::move(out.buffer));
      if (!lease.ok()) {
        Finish(lease.status());
        return;
      }
      bytes += lease->size();
      leased.push_back({std::move(out.name), out.type, std::move(out.shape), *std::move(lease)});
    }
    stats.output_bytes.fetch_add(bytes, std::memory_order_relaxed);

    inference::ModelInferResponse header;
    header.set_model_name(model_->name());
    header.set_model_version(model_->version());
    header.set_id(request_->header().id());
    const absl::Time written = absl::Now();
    *response_ = WriteInferResponse(std::move(header), std::move(leased),
                                    [stats = model_->shared_stats(), written] {
                                      stats->serialize.Record(absl::Now() - written);
                                    });
    spdlog::debug("infer '{}' id '{}': OK, queue {}, compute {}, {} output bytes", model_->name(),
                  request_->header().id(), absl::FormatDuration(queued),
                  absl::FormatDuration(compute), bytes);
    Finish(absl::OkStatus());
  }

  void Finish(const absl::Status& status) {
    ModelStats& stats = model_->stats();
    stats.CountRequest(status.code());
    stats.request.Record(absl::Now() - received_);
    if (!status.ok()) {
      if (status.code() == absl::StatusCode::kInternal ||
          status.code() == absl::StatusCode::kUnknown) {
        spdlog::error("infer '{}': {}", model_->name(), std::string(status.message()));
      } else {
        spdlog::debug("infer '{}': {}: {}", model_->name(), absl::StatusCodeToString(status.code()),
                      std::string(status.message()));
      }
    }
    reactor_->Finish(ToGrpcStatus(status));
  }

 private:
  LoadedModel::Ref model_;
  grpc::CallbackServerContext* const context_;
  grpc::ServerUnaryReactor* const reactor_;
  grpc::ByteBuffer* const response_;
  std::unique_ptr<InferRequest> request_;
  const absl::Time received_;
  const absl::Time deadline_;
};

}  // namespace

grpc::ServerUnaryReactor* HandleModelInfer(ModelRepository& repository,
                                           grpc::CallbackServerContext* context,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const absl::Time received = absl::Now();
  absl::StatusOr<std::unique_ptr<InferRequest>> req = InferRequest::Parse(*request);
  if (!req.ok()) return Reject(reactor, req.status(), nullptr);
  const inference::ModelInferRequest& header = (*req)->header();
  if (header.model_name().empty()) {
    return Reject(reactor, absl::InvalidArgumentError("model_name is empty"), nullptr);
  }
  std::shared_ptr<LoadedModel> model = repository.Find(header.model_name());
  if (model == nullptr) {
    std::vector<std::string> names;
    for (const auto& m : repository.Snapshot()) names.push_back(m->name());
    return Reject(
        reactor,
        absl::NotFoundError(absl::StrCat("unknown model ", QuoteForMessage(header.model_name()),
                                         "; the repository has: ", absl::StrJoin(names, ", "))),
        nullptr);
  }
  ModelStats* stats = &model->stats();
  if (!header.model_version().empty() && header.model_version() != model->version()) {
    return Reject(reactor,
                  absl::NotFoundError(absl::StrCat("model '", model->name(), "' has no version ",
                                                   QuoteForMessage(header.model_version()),
                                                   "; it has version '", model->version(), "'")),
                  stats);
  }
  absl::StatusOr<LoadedModel::Ref> ref = model->Acquire();
  if (!ref.ok()) return Reject(reactor, ref.status(), stats);
  absl::Status bound = (*req)->Bind((*ref)->signature(), (*ref)->session_ref().staging_arena());
  stats->input_bytes_borrowed.fetch_add((*req)->borrowed_bytes(), std::memory_order_relaxed);
  stats->input_bytes_staged.fetch_add((*req)->staged_bytes(), std::memory_order_relaxed);
  if (!bound.ok()) return Reject(reactor, bound, stats);

  ModelWorker& worker = (*ref)->worker();
  auto call = std::make_unique<InferCall>(context, reactor, response, *std::move(ref),
                                          *std::move(req), received);
  InferCall* raw = call.get();
  std::unique_ptr<WorkItem> item = std::move(call);
  absl::Status queued = worker.Submit(item);
  if (!queued.ok()) raw->Finish(queued);  // the item stayed here and goes with it
  return reactor;
}

}  // namespace inferd::server

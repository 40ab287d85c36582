#include "server/infer_job.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace inferd::server {
namespace {

// Answers a request that never reached a model's worker.
void Reject(InferResponder& responder, const absl::Status& status, ModelStats* stats) {
  if (stats != nullptr) stats->CountRequest(status.code());
  spdlog::debug("infer: {}: {}", absl::StatusCodeToString(status.code()),
                std::string(status.message()));
  responder.Respond(status, {});
}

}  // namespace

absl::StatusOr<std::vector<LeasedOutput>> RunAndLease(engine::Session& session,
                                                      absl::Span<const engine::InputTensor> inputs,
                                                      const std::vector<std::string>& requested,
                                                      const engine::RunOptions& options,
                                                      absl::Duration* output_time) {
  absl::StatusOr<std::vector<engine::OutputTensor>> outputs =
      session.Run(inputs, requested, options);
  if (!outputs.ok()) return outputs.status();
  const absl::Time export_start = absl::Now();
  std::vector<LeasedOutput> leased;
  leased.reserve(outputs->size());
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
      return absl::InternalError(absl::StrCat("output '", out.name, "' is in no IOArena"));
    }
    absl::StatusOr<memory::IOLease> lease = arena->Export(std::move(out.buffer));
    if (!lease.ok()) return lease.status();
    leased.push_back({std::move(out.name), out.type, std::move(out.shape), *std::move(lease)});
  }
  if (output_time != nullptr) *output_time = absl::Now() - export_start;
  return leased;
}

InferJob::InferJob(LoadedModel::Ref model, std::unique_ptr<InferRequest> request,
                   std::unique_ptr<InferResponder> responder, absl::Time received,
                   absl::Duration compute_input)
    : model_(std::move(model)),
      request_(std::move(request)),
      responder_(std::move(responder)),
      received_(received),
      deadline_(responder_->deadline()) {
  timings_.compute_input = compute_input;
}

void InferJob::Run(absl::Duration queued) {
  engine::Session& session = model_->session_ref();
  ModelStats& stats = model_->stats();
  engine::RunOptions options;
  InferResponder* responder = responder_.get();
  options.cancelled = [responder] { return responder->Cancelled(); };
  const absl::Time start = absl::Now();
  absl::Duration exported = absl::ZeroDuration();
  absl::StatusOr<std::vector<LeasedOutput>> outputs =
      RunAndLease(session, request_->inputs(), request_->requested_outputs(), options, &exported);
  // Session::Run alone; exporting the outputs is Triton's compute_output.
  const absl::Duration compute = absl::Now() - start - exported;
  stats.compute.Record(compute);
  request_->ReleaseStaging();
  timings_.queue = queued;
  timings_.compute_infer = compute;
  timings_.compute_output = exported;
  if (outputs.ok()) {
    // Triton's execution_count: successful runs only.
    stats.executions.fetch_add(1, std::memory_order_relaxed);
    stats.inferences.fetch_add(1, std::memory_order_relaxed);
    stats.batches.Record(1, timings_.compute_input, compute, exported);
  }
  spdlog::debug("infer '{}' id '{}': {}, queue {}, compute {}", model_->name(),
                request_->header().id(), outputs.ok() ? "OK" : outputs.status().ToString(),
                absl::FormatDuration(queued), absl::FormatDuration(compute));
  Complete(std::move(outputs));
}

void InferJob::Complete(absl::StatusOr<std::vector<LeasedOutput>> outputs) {
  if (!outputs.ok()) {
    Finish(outputs.status(), {});
    return;
  }
  if (absl::Status s = request_->WriteSharedMemoryOutputs(*outputs, &timings_.compute_output);
      !s.ok()) {
    Finish(s, {});
    return;
  }
  uint64_t bytes = 0;
  for (const LeasedOutput& out : *outputs) bytes += out.lease.size();
  model_->stats().output_bytes.fetch_add(bytes, std::memory_order_relaxed);
  Finish(absl::OkStatus(), *std::move(outputs));
}

void InferJob::Finish(const absl::Status& status, std::vector<LeasedOutput> outputs) {
  ModelStats& stats = model_->stats();
  stats.CountRequest(status.code());
  const absl::Time now = absl::Now();
  stats.request.Record(now - received_);
  if (!status.ok()) {
    stats.fail.Add(now - received_);
    if (status.code() == absl::StatusCode::kInternal ||
        status.code() == absl::StatusCode::kUnknown) {
      spdlog::error("infer '{}': {}", model_->name(), std::string(status.message()));
    } else {
      spdlog::debug("infer '{}': {}: {}", model_->name(), absl::StatusCodeToString(status.code()),
                    std::string(status.message()));
    }
    responder_->Respond(status, {});
    return;
  }
  stats.success.Add(now - received_);
  stats.queue_ok.Add(timings_.queue);
  stats.compute_input.Add(timings_.compute_input);
  stats.compute_infer.Add(timings_.compute_infer);
  stats.compute_output.Add(timings_.compute_output);
  stats.inference_count.fetch_add(1, std::memory_order_relaxed);
  stats.last_inference_ms.store(static_cast<uint64_t>(absl::ToUnixMillis(now)),
                                std::memory_order_relaxed);
  InferResult result;
  result.header.set_model_name(model_->name());
  result.header.set_model_version(model_->version());
  result.header.set_id(request_->header().id());
  result.outputs = std::move(outputs);
  const absl::Time written = absl::Now();
  result.on_released = [stats = model_->shared_stats(), written] {
    stats->serialize.Record(absl::Now() - written);
  };
  responder_->Respond(status, std::move(result));
}

void SubmitInfer(ModelRepository& repository, std::unique_ptr<InferRequest> request,
                 std::unique_ptr<InferResponder> responder, absl::Time received) {
  const inference::ModelInferRequest& header = request->header();
  if (header.model_name().empty()) {
    return Reject(*responder, absl::InvalidArgumentError("model_name is empty"), nullptr);
  }
  ModelStats* stats = nullptr;
  absl::StatusOr<LoadedModel::Ref> ref =
      repository.AcquireForInference(header.model_name(), header.model_version(), &stats);
  if (!ref.ok()) return Reject(*responder, ref.status(), stats);
  const absl::Time bind_start = absl::Now();
  absl::Status bound = request->Bind((*ref)->signature(), (*ref)->session_ref().staging_arena());
  const absl::Duration compute_input = absl::Now() - bind_start;
  stats->input_bytes_borrowed.fetch_add(request->borrowed_bytes(), std::memory_order_relaxed);
  stats->input_bytes_staged.fetch_add(request->staged_bytes(), std::memory_order_relaxed);
  if (!bound.ok()) return Reject(*responder, bound, stats);

  ModelWorker& worker = (*ref)->worker();
  auto job = std::make_unique<InferJob>(*std::move(ref), std::move(request), std::move(responder),
                                        received, compute_input);
  InferJob* raw = job.get();
  std::unique_ptr<WorkItem> item = std::move(job);
  absl::Status queued = worker.Submit(item);
  if (!queued.ok()) raw->Finish(queued, {});  // the item stayed here and goes with it
}

}  // namespace inferd::server

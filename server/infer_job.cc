#include "server/infer_job.h"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "memory/allocation_handle.h"

namespace inferd::server {
namespace {

// Answers a request that never reached a model's worker.
void Reject(InferResponder& responder, const absl::Status& status, ModelStats* stats) {
  if (stats != nullptr) stats->CountRequest(status.code());
  spdlog::debug("infer: {}: {}", absl::StatusCodeToString(status.code()),
                std::string(status.message()));
  responder.Respond(status, {});
}

// A request parameter as a non-negative integer (Triton's clients send int64 or uint64);
// `fallback` when absent.
absl::StatusOr<int64_t> IntParameter(const inference::ModelInferRequest& header,
                                     const std::string& name, int64_t fallback) {
  auto it = header.parameters().find(name);
  if (it == header.parameters().end()) return fallback;
  const inference::InferParameter& p = it->second;
  if (p.parameter_choice_case() == inference::InferParameter::kInt64Param && p.int64_param() >= 0) {
    return p.int64_param();
  }
  if (p.parameter_choice_case() == inference::InferParameter::kUint64Param &&
      p.uint64_param() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(p.uint64_param());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("parameter '", name, "': expected a non-negative integer"));
}

// Each input of the batch's jobs copied into one staging buffer per input, in batch order; the
// tensors point into `buffers`.
absl::Status Gather(absl::Span<const WorkItem::Queued> batch, int64_t total_rows,
                    memory::IOArena& arena, std::vector<memory::AllocationHandle>* buffers,
                    std::vector<engine::InputTensor>* inputs) {
  const InferRequest& leader = static_cast<InferJob*>(batch[0].item)->request();
  for (size_t i = 0; i < leader.inputs().size(); ++i) {
    uint64_t bytes = 0;
    for (const WorkItem::Queued& q : batch) {
      const std::optional<uint64_t> sum =
          CheckedAdd<uint64_t>(bytes, static_cast<InferJob*>(q.item)->request().inputs()[i].bytes);
      if (!sum) return absl::InvalidArgumentError("the batch's input bytes overflow");
      bytes = *sum;
    }
    absl::StatusOr<memory::AllocationHandle> buffer = arena.Allocate(bytes);
    if (!buffer.ok()) return buffer.status();
    auto* dst = static_cast<uint8_t*>(buffer->data());
    for (const WorkItem::Queued& q : batch) {
      const engine::InputTensor& in = static_cast<InferJob*>(q.item)->request().inputs()[i];
      if (in.bytes > 0) std::memcpy(dst, in.data, in.bytes);
      dst += in.bytes;
    }
    engine::InputTensor tensor = leader.inputs()[i];
    tensor.shape[0] = total_rows;
    tensor.data = buffer->data();
    tensor.bytes = bytes;
    inputs->push_back(std::move(tensor));
    buffers->push_back(*std::move(buffer));
  }
  return absl::OkStatus();
}

// The batch's outputs cut into each job's rows: slices of the same leases, no copy.
absl::StatusOr<std::vector<std::vector<LeasedOutput>>> Split(
    const std::vector<LeasedOutput>& outputs, absl::Span<const WorkItem::Queued> batch,
    int64_t total_rows, const std::string& model) {
  std::vector<std::vector<LeasedOutput>> out(batch.size());
  for (const LeasedOutput& o : outputs) {
    if (o.shape.rank() == 0 || o.shape[0] != total_rows ||
        o.lease.size() % static_cast<uint64_t>(total_rows) != 0) {
      return absl::InternalError(absl::StrCat(
          "model '", model, "': output '", o.name, "' has shape ", o.shape.ToString(),
          " for a batch of ", total_rows,
          ": its dim 0 is not the batch size, so the model does not batch as max_batch_size "
          "declares; set max_batch_size: 0 or fix the model"));
    }
    const size_t row_bytes = o.lease.size() / static_cast<size_t>(total_rows);
    size_t offset = 0;
    for (size_t j = 0; j < batch.size(); ++j) {
      const int64_t rows = batch[j].item->batch_size();
      LeasedOutput part{o.name, o.type, o.shape, {}};
      part.shape[0] = rows;
      const size_t bytes = row_bytes * static_cast<size_t>(rows);
      if (o.lease.valid()) {
        absl::StatusOr<memory::IOLease> slice = o.lease.Slice(offset, bytes);
        if (!slice.ok()) return slice.status();
        part.lease = *std::move(slice);
      }
      offset += bytes;
      out[j].push_back(std::move(part));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> RequestBatchSize(const InferRequest& request, int max_batch_size) {
  int64_t rows = -1;
  for (const engine::InputTensor& in : request.inputs()) {
    if (in.shape.rank() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", in.name, "' is a scalar; the model has max_batch_size ",
                       max_batch_size, ", so every input's dim 0 is the batch size"));
    }
    if (rows >= 0 && in.shape[0] != rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", in.name, "' has batch size (dim 0) ", in.shape[0], " but an earlier input ",
          rows, "; all inputs of a request share the batch size"));
    }
    rows = in.shape[0];
  }
  if (rows == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request's batch size (dim 0) is 0; send 1 to ", max_batch_size, " rows"));
  }
  if (rows > max_batch_size) {
    return absl::InvalidArgumentError(absl::StrCat("the request's batch size (dim 0) is ", rows,
                                                   ", larger than the model's max_batch_size ",
                                                   max_batch_size));
  }
  return rows < 0 ? 1 : rows;  // a model without inputs counts one
}

// A string output in KServe's BYTES layout (per element a 4-byte little-endian length, then the
// bytes), written into a buffer of the session's host IOArena and leased like any output.
static absl::StatusOr<memory::IOLease> SerializeStrings(const std::vector<std::string>& strings,
                                                        engine::Session& session) {
  uint64_t total = 0;
  for (const std::string& s : strings) {
    if (s.size() > UINT32_MAX) {
      return absl::InvalidArgumentError("a BYTES element over 4 GiB cannot be sent");
    }
    const std::optional<uint64_t> next = CheckedAdd<uint64_t>(total, 4 + s.size());
    if (!next) return absl::InvalidArgumentError("a BYTES output too large to send");
    total = *next;
  }
  memory::IOArena& arena = session.staging_arena();
  INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, arena.Allocate(total));
  auto* p = static_cast<uint8_t*>(h.data());
  for (const std::string& s : strings) {
    const auto n = static_cast<uint32_t>(s.size());
    p[0] = n & 0xff;
    p[1] = (n >> 8) & 0xff;
    p[2] = (n >> 16) & 0xff;
    p[3] = (n >> 24) & 0xff;
    if (n > 0) std::memcpy(p + 4, s.data(), n);
    p += 4 + n;
  }
  return arena.Export(std::move(h));
}

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
    if (out.strings != nullptr) {  // BYTES: serialized into the IOArena (docs/strings.md)
      if (out.strings->empty()) {
        leased.push_back({std::move(out.name), out.type, std::move(out.shape), {}});
        continue;
      }
      absl::StatusOr<memory::IOLease> lease = SerializeStrings(*out.strings, session);
      if (!lease.ok()) return lease.status();
      leased.push_back({std::move(out.name), out.type, std::move(out.shape), *std::move(lease)});
      continue;
    }
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
  RunAlone(queued, [] {});
}

void InferJob::RunAlone(absl::Duration queued, const std::function<void()>& before_answer) {
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
    stats.batches.Record(static_cast<int>(batch_size_), timings_.compute_input, compute, exported);
  }
  spdlog::debug("infer '{}' id '{}': {}, queue {}, compute {}", model_->name(),
                request_->header().id(), outputs.ok() ? "OK" : outputs.status().ToString(),
                absl::FormatDuration(queued), absl::FormatDuration(compute));
  before_answer();
  Complete(std::move(outputs));
}

bool InferJob::BatchesWith(const WorkItem& leader) const {
  const auto* other = dynamic_cast<const InferJob*>(&leader);
  if (other == nullptr || other->model_.operator->() != model_.operator->()) return false;
  const absl::Span<const engine::InputTensor> a = request_->inputs();
  const absl::Span<const engine::InputTensor> b = other->request_->inputs();
  if (a.size() != b.size() ||
      request_->requested_outputs() != other->request_->requested_outputs()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    // BYTES inputs are strings the request owns, not bytes to gather: such requests run alone.
    if (a[i].type == engine::DataType::kString) return false;
    if (a[i].name != b[i].name || a[i].type != b[i].type ||
        a[i].shape.rank() != b[i].shape.rank() || a[i].shape.rank() == 0 ||
        a[i].shape.SizeFrom(1) != b[i].shape.SizeFrom(1)) {
      return false;
    }
    for (size_t d = 1; d < a[i].shape.rank(); ++d) {
      if (a[i].shape[d] != b[i].shape[d]) return false;
    }
  }
  return true;
}

void InferJob::RunBatch(absl::Span<const Queued> batch,
                        const std::function<void()>& before_answer) {
  if (batch.size() == 1) return RunAlone(batch[0].queued, before_answer);  // nothing to gather
  engine::Session& session = model_->session_ref();
  ModelStats& stats = model_->stats();
  int64_t total_rows = 0;
  for (const Queued& q : batch) total_rows += q.item->batch_size();  // <= max_batch_size
  const absl::Time start = absl::Now();
  std::vector<memory::AllocationHandle> buffers;
  std::vector<engine::InputTensor> inputs;
  absl::Status status = Gather(batch, total_rows, session.staging_arena(), &buffers, &inputs);
  const absl::Time gathered = absl::Now();
  engine::RunOptions options;
  options.cancelled = [batch] {  // the run stops only when nobody waits for it
    for (const Queued& q : batch) {
      if (!q.item->Cancelled()) return false;
    }
    return true;
  };
  absl::StatusOr<std::vector<LeasedOutput>> outputs =
      status.ok() ? RunAndLease(session, inputs, request_->requested_outputs(), options)
                  : absl::StatusOr<std::vector<LeasedOutput>>(status);
  const absl::Time ran = absl::Now();
  buffers.clear();
  absl::StatusOr<std::vector<std::vector<LeasedOutput>>> parts =
      outputs.ok() ? Split(*outputs, batch, total_rows, model_->name()) : outputs.status();
  if (outputs.ok()) outputs->clear();  // the slices hold the buffers now
  const absl::Time split = absl::Now();
  stats.compute.Record(ran - gathered);
  if (parts.ok()) {
    // Triton's execution_count: successful runs only.
    stats.executions.fetch_add(1, std::memory_order_relaxed);
    stats.inferences.fetch_add(1, std::memory_order_relaxed);
    stats.batches.Record(static_cast<int>(total_rows), gathered - start, ran - gathered,
                         split - ran);
  }
  spdlog::debug("infer '{}': batch of {} requests ({} rows): {}, run {}", model_->name(),
                batch.size(), total_rows, parts.ok() ? "OK" : parts.status().ToString(),
                absl::FormatDuration(ran - gathered));
  before_answer();
  for (size_t j = 0; j < batch.size(); ++j) {
    auto* job = static_cast<InferJob*>(batch[j].item);
    job->request_->ReleaseStaging();
    job->timings_.queue = batch[j].queued;
    job->timings_.compute_input += gathered - start;
    job->timings_.compute_infer = ran - gathered;
    job->timings_.compute_output = split - ran;
    job->Complete(parts.ok() ? absl::StatusOr<std::vector<LeasedOutput>>(std::move((*parts)[j]))
                             : parts.status());
  }
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
  stats.inference_count.fetch_add(static_cast<uint64_t>(batch_size_), std::memory_order_relaxed);
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
  if ((*ref)->generator() != nullptr) {
    return Reject(*responder,
                  absl::FailedPreconditionError(
                      absl::StrCat("model '", header.model_name(),
                                   "' is generative: use ModelStreamInfer (docs/generation.md)")),
                  stats);
  }
  const absl::Time bind_start = absl::Now();
  absl::Status bound = request->Bind((*ref)->signature(), (*ref)->session_ref().staging_arena());
  const absl::Duration compute_input = absl::Now() - bind_start;
  stats->input_bytes_borrowed.fetch_add(request->borrowed_bytes(), std::memory_order_relaxed);
  stats->input_bytes_staged.fetch_add(request->staged_bytes(), std::memory_order_relaxed);
  if (!bound.ok()) return Reject(*responder, bound, stats);

  const ModelConfig& config = (*ref)->config();
  int64_t batch_size = 1, priority = 0, timeout_us = 0;
  if (config.max_batch_size > 0) {
    absl::StatusOr<int64_t> rows = RequestBatchSize(*request, config.max_batch_size);
    if (!rows.ok()) return Reject(*responder, rows.status(), stats);
    batch_size = *rows;
  }
  if (config.dynamic_batching.has_value()) {
    absl::StatusOr<int64_t> p = IntParameter(header, "priority", 0);
    absl::StatusOr<int64_t> t = IntParameter(header, "timeout", 0);
    if (!p.ok() || !t.ok()) return Reject(*responder, p.ok() ? t.status() : p.status(), stats);
    // Past the levels: the Batcher's Submit names them (INT_MAX stays past any level).
    priority = std::min<int64_t>(*p, INT32_MAX);
    timeout_us = std::min<int64_t>(*t, absl::ToInt64Microseconds(kMaxQueueTimeout));
  }

  ModelWorker& worker = (*ref)->worker();
  auto job = std::make_unique<InferJob>(*std::move(ref), std::move(request), std::move(responder),
                                        received, compute_input);
  job->SetBatching(batch_size, static_cast<int>(priority), absl::Microseconds(timeout_us));
  InferJob* raw = job.get();
  std::unique_ptr<WorkItem> item = std::move(job);
  absl::Status queued = worker.Submit(item);
  if (!queued.ok()) raw->Finish(queued, {});  // the item stayed here and goes with it
}

}  // namespace inferd::server

// The inference path every transport shares (gRPC's ModelInfer, HTTP's /infer), from a parsed
// InferRequest to leased outputs handed back to the transport:
//
//   transport thread: InferRequest (gRPC: Parse; HTTP: FromParts) + an InferResponder
//                     -> SubmitInfer: the model (AcquireForInference: name, version, READY)
//                     -> Bind (validate, borrow / stage) -> the model's ModelWorker::Submit
//   worker thread:    InferJob::Run: dropped if cancelled / past its deadline, else
//                     RunAndLease (Session::Run, outputs exported as IOLeases)
//                     -> InferJob::Complete -> InferResponder::Respond
//
// A transport implements InferResponder: how to tell a cancelled call, the call's deadline, and
// how to send the result (the gRPC one writes the zero-copy ByteBuffer of response_writer.h; the
// HTTP one JSON or binary tensor data from the same leases). Every request is answered exactly
// once through Respond, also when it fails before reaching a worker.
//
// Batching: for a model with max_batch_size > 0, SubmitInfer checks that every input has the
// same dim 0 (the request's batch size) and that it is at most max_batch_size (else
// INVALID_ARGUMENT naming both), and reads the `priority` and `timeout` (microseconds) request
// parameters. A Batcher then hands a batch of compatible jobs to InferJob::RunBatch: each input
// gathered into one staging buffer (the one copy a batch needs), one Session::Run, and each
// job's outputs sliced from the batch's output buffers (IOLease::Slice: no copy; the buffer
// returns to its arena when the last response has been sent).
//
// Statistics: SubmitInfer and InferJob count every request's status code, borrowed / staged
// input bytes and queue / compute / request latency in the model's ModelStats; the transport
// calls InferResult::on_released when it has finished with the output bytes (the serialize
// latency).
//
// Thread-safe.
#ifndef INFERD_SERVER_INFER_JOB_H_
#define INFERD_SERVER_INFER_JOB_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/session.h"
#include "proto/inference.pb.h"
#include "server/model_repository.h"
#include "server/model_worker.h"
#include "server/request_reader.h"
#include "server/response_writer.h"

namespace inferd::server {

// What a successful request produced.
struct InferResult {
  // model_name, model_version, id (and parameters); no outputs.
  inference::ModelInferResponse header;
  std::vector<LeasedOutput> outputs;
  // Call once when the last output byte has been sent (or dropped); may be null.
  std::function<void()> on_released;
};

// One transport's side of a request.
class InferResponder {
 public:
  virtual ~InferResponder() = default;
  // Polled before the model runs and during the run.
  virtual bool Cancelled() const { return false; }
  virtual absl::Time deadline() const { return absl::InfiniteFuture(); }
  // Called exactly once: OK with the result, or the error (result empty).
  virtual void Respond(const absl::Status& status, InferResult result) = 0;
};

// Runs `request` on the model it names. Answers through `responder`, at once when the request
// cannot be queued (unknown model or version, not READY, a bad request, a full queue).
void SubmitInfer(ModelRepository& repository, std::unique_ptr<InferRequest> request,
                 std::unique_ptr<InferResponder> responder, absl::Time received);

// Runs the session on `inputs` and exports every output from the IOArena it lives in as an
// IOLease (no copy). `output_time` (optional): set to how long the export took (Triton's
// compute_output), on success.
absl::StatusOr<std::vector<LeasedOutput>> RunAndLease(engine::Session& session,
                                                      absl::Span<const engine::InputTensor> inputs,
                                                      const std::vector<std::string>& requested,
                                                      const engine::RunOptions& options,
                                                      absl::Duration* output_time = nullptr);

// One accepted request in a model's queue. Members are destroyed in reverse order: the request
// (staging buffers, the transport's bytes) goes before the model Ref.
class InferJob final : public WorkItem {
 public:
  // Where the request's time went (Triton's statistics); a batched run sets them for each of
  // its requests (compute_infer: the whole run's) before Complete.
  struct Timings {
    absl::Duration queue;
    absl::Duration compute_input;   // Bind (+ a batch's gather)
    absl::Duration compute_infer;   // Session::Run
    absl::Duration compute_output;  // exporting the outputs (+ a batch's split)
  };

  // `compute_input`: how long Bind took.
  InferJob(LoadedModel::Ref model, std::unique_ptr<InferRequest> request,
           std::unique_ptr<InferResponder> responder, absl::Time received,
           absl::Duration compute_input);

  bool Cancelled() const override { return responder_->Cancelled(); }
  absl::Time deadline() const override { return deadline_; }
  void Drop(const absl::Status& why) override { Finish(why, {}); }
  // Runs the model on this request alone, then Complete.
  void Run(absl::Duration queued) override;

  // Batching (see above): the request's dim 0, its priority and queue timeout parameters.
  void SetBatching(int64_t batch_size, int priority, absl::Duration timeout) {
    batch_size_ = batch_size;
    priority_ = priority;
    requested_timeout_ = timeout;
  }
  int64_t batch_size() const override { return batch_size_; }
  int priority() const override { return priority_; }
  absl::Duration requested_timeout() const override { return requested_timeout_; }
  // Same model, same input names, datatypes and shapes apart from dim 0, same outputs.
  bool BatchesWith(const WorkItem& leader) const override;
  // Every item of `batch` is an InferJob (BatchesWith this one). One run for all of them; an
  // output whose dim 0 is not the batch's fails them all (INTERNAL).
  void RunBatch(absl::Span<const Queued> batch,
                const std::function<void()>& before_answer) override;

  LoadedModel& model() const { return *model_; }
  InferRequest& request() const { return *request_; }
  absl::Time received() const { return received_; }
  Timings& timings() { return timings_; }

  // Answers with the run's outputs (OK) or its error; counts the request (with timings()).
  void Complete(absl::StatusOr<std::vector<LeasedOutput>> outputs);

  // Answers with `status` (OK: with `outputs`) and records the request's counters: status
  // code, latency, and Triton's success (with timings()) or fail.
  void Finish(const absl::Status& status, std::vector<LeasedOutput> outputs);

 private:
  // Run, with `before_answer` called between the run and the answer (RunBatch's turn).
  void RunAlone(absl::Duration queued, const std::function<void()>& before_answer);

  LoadedModel::Ref model_;
  std::unique_ptr<InferRequest> request_;
  std::unique_ptr<InferResponder> responder_;
  const absl::Time received_;
  const absl::Time deadline_;
  Timings timings_;
  int64_t batch_size_ = 1;  // counted in inference_count and BatchStats
  int priority_ = 0;
  absl::Duration requested_timeout_;
};

// For a model with max_batch_size > 0: the request's batch size (the dim 0 all its inputs
// share), or INVALID_ARGUMENT (a scalar input, inputs that disagree, a batch past the maximum).
absl::StatusOr<int64_t> RequestBatchSize(const InferRequest& request, int max_batch_size);

}  // namespace inferd::server

#endif  // INFERD_SERVER_INFER_JOB_H_

#include "server/stream_infer_handler.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "genai/generator.h"
#include "server/infer_handler.h"

namespace inferd::server {
namespace {

using inference::ModelInferRequest;
using inference::ModelStreamInferResponse;

// One request's generation, parsed.
struct GenerationRequest {
  std::string id, model, version;
  std::string text;
  genai::GenerateParams params;
  bool stream = true;
};

// The bytes of input `i`: raw_input_contents[i] when the request sends raw contents.
const std::string* RawOf(const ModelInferRequest& req, int i) {
  return req.raw_input_contents_size() > i ? &req.raw_input_contents(i) : nullptr;
}

absl::StatusOr<std::vector<std::string>> StringsOf(const ModelInferRequest::InferInputTensor& in,
                                                   const std::string* raw) {
  if (in.datatype() != "BYTES") {
    return absl::InvalidArgumentError(
        absl::StrCat("input '", in.name(), "' must be BYTES, got ", in.datatype()));
  }
  std::vector<std::string> out;
  if (raw == nullptr) {
    for (const std::string& s : in.contents().bytes_contents()) out.push_back(s);
    return out;
  }
  for (size_t pos = 0; pos < raw->size();) {  // each element: uint32 length (LE), bytes
    uint32_t len = 0;
    if (raw->size() - pos < 4) return absl::InvalidArgumentError("truncated BYTES input");
    std::memcpy(&len, raw->data() + pos, 4);
    pos += 4;
    if (len > raw->size() - pos) return absl::InvalidArgumentError("truncated BYTES input");
    out.push_back(raw->substr(pos, len));
    pos += len;
  }
  return out;
}

template <typename T>
double RawScalar(const std::string& raw) {
  T v;
  std::memcpy(&v, raw.data(), sizeof(T));
  return static_cast<double>(v);
}

// The single number of a numeric input (any KServe numeric type, raw or typed).
absl::StatusOr<double> ScalarOf(const ModelInferRequest::InferInputTensor& in,
                                const std::string* raw) {
  const std::string& t = in.datatype();
  const auto& c = in.contents();
  if (raw != nullptr) {
    const size_t size = t == "BOOL" || t == "INT8" || t == "UINT8"     ? 1
                        : t == "INT16" || t == "UINT16"                ? 2
                        : t == "INT32" || t == "UINT32" || t == "FP32" ? 4
                        : t == "INT64" || t == "UINT64" || t == "FP64" ? 8
                                                                       : 0;
    if (size == 0 || raw->size() != size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", in.name(), "' must be one number, got ", raw->size(), " bytes of ", t));
    }
    if (t == "BOOL" || t == "UINT8") return RawScalar<uint8_t>(*raw);
    if (t == "INT8") return RawScalar<int8_t>(*raw);
    if (t == "INT16") return RawScalar<int16_t>(*raw);
    if (t == "UINT16") return RawScalar<uint16_t>(*raw);
    if (t == "INT32") return RawScalar<int32_t>(*raw);
    if (t == "UINT32") return RawScalar<uint32_t>(*raw);
    if (t == "FP32") return RawScalar<float>(*raw);
    if (t == "INT64") return RawScalar<int64_t>(*raw);
    if (t == "UINT64") return RawScalar<uint64_t>(*raw);
    return RawScalar<double>(*raw);
  }
  if (c.bool_contents_size() == 1) return c.bool_contents(0) ? 1.0 : 0.0;
  if (c.int_contents_size() == 1) return c.int_contents(0);
  if (c.int64_contents_size() == 1) return static_cast<double>(c.int64_contents(0));
  if (c.uint_contents_size() == 1) return c.uint_contents(0);
  if (c.uint64_contents_size() == 1) return static_cast<double>(c.uint64_contents(0));
  if (c.fp32_contents_size() == 1) return c.fp32_contents(0);
  if (c.fp64_contents_size() == 1) return c.fp64_contents(0);
  return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' must be one number"));
}

double ParamValue(const inference::InferParameter& p) {
  switch (p.parameter_choice_case()) {
    case inference::InferParameter::kBoolParam:
      return p.bool_param() ? 1 : 0;
    case inference::InferParameter::kInt64Param:
      return static_cast<double>(p.int64_param());
    case inference::InferParameter::kUint64Param:
      return static_cast<double>(p.uint64_param());
    case inference::InferParameter::kDoubleParam:
      return p.double_param();
    default:
      return 0;
  }
}

// Applies one named setting (an input or a parameter) to `r`; false for an unknown name.
bool Apply(const std::string& name, double v, GenerationRequest* r) {
  if (name == "max_tokens") {
    r->params.max_new_tokens = static_cast<int>(v);
  } else if (name == "temperature") {
    r->params.sampling.temperature = static_cast<float>(v);
  } else if (name == "top_k") {
    r->params.sampling.top_k = static_cast<int>(v);
  } else if (name == "top_p") {
    r->params.sampling.top_p = static_cast<float>(v);
  } else if (name == "repetition_penalty") {
    r->params.sampling.repetition_penalty = static_cast<float>(v);
  } else if (name == "random_seed" || name == "seed") {
    r->params.sampling.seed = static_cast<uint64_t>(v);
  } else if (name == "stream") {
    r->stream = v != 0;
  } else if (name == "min_length" || name == "min_tokens") {
    r->params.min_new_tokens = static_cast<int>(v);
  } else if (name == "exclude_input_in_output") {
    // The answer never repeats the prompt.
  } else {
    return false;
  }
  return true;
}

absl::StatusOr<GenerationRequest> Parse(const ModelInferRequest& req, int default_max_tokens) {
  GenerationRequest r;
  r.id = req.id();
  r.model = req.model_name();
  r.version = req.model_version();
  r.params.max_new_tokens = default_max_tokens;
  bool text = false;
  for (const auto& [name, p] : req.parameters()) {
    if (name == "stop" && p.has_string_param()) {
      r.params.stop_strings.push_back(p.string_param());
    } else if (!p.has_string_param()) {
      Apply(name, ParamValue(p), &r);  // other parameters (priority, timeout...) do not apply
    }
  }
  for (int i = 0; i < req.inputs_size(); ++i) {
    const ModelInferRequest::InferInputTensor& in = req.inputs(i);
    if (in.name() == "text_input" || in.name() == "stop") {
      INFERD_ASSIGN_OR_RETURN(std::vector<std::string> s, StringsOf(in, RawOf(req, i)));
      if (in.name() == "stop") {
        r.params.stop_strings.insert(r.params.stop_strings.end(), s.begin(), s.end());
        continue;
      }
      if (s.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("text_input must hold one string, got ", s.size()));
      }
      r.text = std::move(s[0]);
      text = true;
      continue;
    }
    INFERD_ASSIGN_OR_RETURN(double v, ScalarOf(in, RawOf(req, i)));
    if (!Apply(in.name(), v, &r)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input '", in.name(),
          "'; a generative model takes text_input, max_tokens, temperature, top_k, top_p, "
          "repetition_penalty, random_seed, min_length, stop, stream, exclude_input_in_output"));
    }
  }
  if (!text) return absl::InvalidArgumentError("missing input 'text_input'");
  if (r.params.max_new_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_tokens must be >= 1, got ", r.params.max_new_tokens));
  }
  INFERD_RETURN_IF_ERROR(genai::ValidateSamplingParams(r.params.sampling));
  return r;
}

ModelStreamInferResponse Response(const GenerationRequest& r, const std::string& version,
                                  std::optional<int32_t> token, absl::string_view text,
                                  bool with_text, bool final) {
  ModelStreamInferResponse out;
  inference::ModelInferResponse* ir = out.mutable_infer_response();
  ir->set_model_name(r.model);
  ir->set_model_version(version);
  ir->set_id(r.id);
  (*ir->mutable_parameters())["triton_final_response"].set_bool_param(final);
  if (with_text) {
    auto* o = ir->add_outputs();
    o->set_name("text_output");
    o->set_datatype("BYTES");
    o->add_shape(1);
    std::string raw(4, '\0');
    const uint32_t len = static_cast<uint32_t>(text.size());
    std::memcpy(raw.data(), &len, 4);
    raw.append(text.data(), text.size());
    ir->add_raw_output_contents(std::move(raw));
  }
  if (token) {
    auto* o = ir->add_outputs();
    o->set_name("token_id");
    o->set_datatype("INT32");
    o->add_shape(1);
    std::string raw(4, '\0');
    std::memcpy(raw.data(), &*token, 4);
    ir->add_raw_output_contents(std::move(raw));
  }
  return out;
}

ModelStreamInferResponse ErrorResponse(const absl::Status& s) {
  ModelStreamInferResponse out;
  out.set_error_message(absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message()));
  return out;
}

class StreamReactor;

// One sequence: runs on the model's worker, streams through the reactor.
class GenerationItem final : public WorkItem {
 public:
  GenerationItem(StreamReactor* reactor, LoadedModel::Ref model, GenerationRequest request,
                 KvBudget::Reservation kv, int capacity, std::vector<int32_t> prompt)
      : reactor_(reactor),
        model_(std::move(model)),
        request_(std::move(request)),
        kv_(std::move(kv)),
        capacity_(capacity),
        prompt_(std::move(prompt)) {}
  ~GenerationItem() override;
  void Run(absl::Duration queued) override;
  void Drop(const absl::Status& why) override;
  bool Cancelled() const override;

 private:
  StreamReactor* const reactor_;
  LoadedModel::Ref model_;
  GenerationRequest request_;
  KvBudget::Reservation kv_;
  const int capacity_;
  std::vector<int32_t> prompt_;
};

class StreamReactor final
    : public grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse> {
 public:
  StreamReactor(ModelRepository& repository, grpc::CallbackServerContext* context)
      : repository_(repository), context_(context) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      reads_done_ = true;
      MaybeFinishLocked();
      return;
    }
    if (absl::Status s = Start(request_); !s.ok()) Send(ErrorResponse(s));
    request_.Clear();
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) {
      broken_ = true;
      queue_.clear();
    } else if (!queue_.empty()) {
      queue_.pop_front();
    }
    WriteNextLocked();
    MaybeFinishLocked();
  }

  void OnDone() override { delete this; }

  bool cancelled() const { return context_->IsCancelled(); }

  // From any thread.
  void Send(ModelStreamInferResponse r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || finished_) return;
    queue_.push_back(std::move(r));
    WriteNextLocked();
  }

  void ItemDone() {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    MaybeFinishLocked();
  }

 private:
  absl::Status Start(const ModelInferRequest& req) {
    ModelStats* stats = nullptr;
    INFERD_ASSIGN_OR_RETURN(
        LoadedModel::Ref model,
        repository_.AcquireForInference(req.model_name(), req.model_version(), &stats));
    genai::GenerativeModel* gen = model->generator();
    if (gen == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("model '", req.model_name(),
                       "' is not generative: use ModelInfer (ModelStreamInfer "
                       "serves models with `generation` settings)"));
    }
    INFERD_ASSIGN_OR_RETURN(GenerationRequest r,
                            Parse(req, model->config().generation->default_max_tokens));
    INFERD_ASSIGN_OR_RETURN(std::vector<int32_t> prompt,
                            gen->tokenizer().Encode(r.text, /*add_special_tokens=*/true));
    if (prompt.empty()) return absl::InvalidArgumentError("text_input gives no tokens");
    if (static_cast<int64_t>(prompt.size()) >= gen->max_length()) {
      return absl::InvalidArgumentError(absl::StrCat("the prompt has ", prompt.size(),
                                                     " tokens; the model's max_length is ",
                                                     gen->max_length()));
    }
    // The block the sequence can use, reserved before it starts.
    const int capacity = static_cast<int>(std::min<int64_t>(
        static_cast<int64_t>(prompt.size()) + r.params.max_new_tokens, gen->max_length()));
    INFERD_ASSIGN_OR_RETURN(KvBudget::Reservation kv,
                            model->kv_budget()->Reserve(gen->kv_bytes_for(capacity)));
    r.params.cancelled = [this] { return cancelled(); };
    ModelWorker& worker = model->worker();
    std::unique_ptr<WorkItem> item = std::make_unique<GenerationItem>(
        this, std::move(model), std::move(r), std::move(kv), capacity, std::move(prompt));
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++active_;
    }
    if (absl::Status s = worker.Submit(item); !s.ok()) {
      item.reset();  // its destructor calls ItemDone
      return s;
    }
    return absl::OkStatus();
  }

  void WriteNextLocked() {
    if (writing_ || queue_.empty() || finished_) return;
    writing_ = true;
    StartWrite(&queue_.front());
  }

  void MaybeFinishLocked() {
    if (finished_ || !reads_done_ || active_ > 0 || writing_ || !queue_.empty()) return;
    finished_ = true;
    Finish(grpc::Status::OK);
  }

  ModelRepository& repository_;
  grpc::CallbackServerContext* const context_;
  ModelInferRequest request_;  // the read in progress (gRPC's reads are one at a time)
  std::mutex mu_;
  // Protected by mu_.
  std::deque<ModelStreamInferResponse> queue_;  // front: being written
  bool writing_ = false, reads_done_ = false, broken_ = false, finished_ = false;
  int active_ = 0;  // sequences started and not done
};

GenerationItem::~GenerationItem() {
  kv_.Release();
  model_.Reset();
  reactor_->ItemDone();
}

bool GenerationItem::Cancelled() const { return reactor_->cancelled(); }

void GenerationItem::Drop(const absl::Status& why) {
  model_->stats().CountRequest(why.code());
  reactor_->Send(ErrorResponse(why));
}

void GenerationItem::Run(absl::Duration queued) {
  const absl::Time start = absl::Now();
  genai::GenerativeModel& gen = *model_->generator();
  const std::string& version = model_->version();
  absl::StatusOr<std::unique_ptr<genai::Sequence>> seq = genai::Sequence::Start(gen, capacity_);
  absl::StatusOr<genai::GenerateResult> r =
      seq.ok() ? genai::Generate(**seq, prompt_, request_.params,
                                 [&](int32_t id, absl::string_view text) {
                                   if (request_.stream) {
                                     reactor_->Send(Response(request_, version, id, text,
                                                             /*with_text=*/true, false));
                                   }
                                   return true;
                                 })
               : absl::StatusOr<genai::GenerateResult>(seq.status());
  // The KV block goes back before the final response: a client that sends its next request
  // on seeing it finds the budget free.
  if (seq.ok()) seq->reset();
  kv_.Release();
  ModelStats& stats = model_->stats();
  const absl::Duration took = absl::Now() - start;
  if (!r.ok()) {
    stats.CountRequest(r.status().code());
    stats.fail.Add(queued + took);
    reactor_->Send(ErrorResponse(r.status()));
    return;
  }
  // Triton's statistics: the sequence is one request and one inference; each model run (the
  // prefill, then one per token) one execution.
  stats.CountRequest(absl::StatusCode::kOk);
  stats.success.Add(queued + took);
  stats.queue_ok.Add(queued);
  // Triton counts the three compute phases alike (perf_analyzer checks it): the prompt was
  // tokenized on the gRPC thread, and the outputs streamed within the run.
  stats.compute_input.Add(absl::ZeroDuration());
  stats.compute_infer.Add(took);
  stats.compute_output.Add(absl::ZeroDuration());
  stats.inferences.fetch_add(1, std::memory_order_relaxed);
  stats.inference_count.fetch_add(1, std::memory_order_relaxed);
  stats.executions.fetch_add(r->token_ids.size() + 1, std::memory_order_relaxed);
  reactor_->Send(Response(request_, version, std::nullopt, r->text,
                          /*with_text=*/!request_.stream, /*final=*/true));
}

}  // namespace

grpc::ServerBidiReactor<ModelInferRequest, ModelStreamInferResponse>* HandleModelStreamInfer(
    ModelRepository& repository, grpc::CallbackServerContext* context) {
  return new StreamReactor(repository, context);
}

}  // namespace inferd::server

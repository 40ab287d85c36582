#include "server/triton_views.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/message_text.h"
#include "server/kserve_types.h"

namespace inferd::server {
namespace {

// The model `name` (any state) if it exists and `version` is empty or its version.
void FillMetadataTensors(
    const std::vector<TensorSpec>& specs,
    google::protobuf::RepeatedPtrField<inference::ModelMetadataResponse::TensorMetadata>* out) {
  for (const TensorSpec& s : specs) {
    auto* t = out->Add();
    t->set_name(s.name);
    t->set_datatype(KServeDataTypeName(s.type));
    for (int64_t d : KServeShape(s.shape)) t->add_shape(d);
  }
}

// Triton's dims: the shape without the batch dimension when the model batches.
std::vector<int64_t> TritonDims(const TensorSpec& spec, int max_batch_size) {
  std::vector<int64_t> dims = KServeShape(spec.shape);
  if (max_batch_size > 0 && !dims.empty()) dims.erase(dims.begin());
  return dims;
}

void Fill(inference::StatisticDuration* out, const DurationStat& in) {
  out->set_count(in.count.load(std::memory_order_relaxed));
  out->set_ns(in.ns.load(std::memory_order_relaxed));
}

void FillStatistics(const LoadedModel& model, inference::ModelStatistics* out) {
  const ModelStats& st = model.stats();
  out->set_name(model.name());
  out->set_version(model.version());
  out->set_last_inference(st.last_inference_ms.load(std::memory_order_relaxed));
  out->set_inference_count(st.inference_count.load(std::memory_order_relaxed));
  out->set_execution_count(st.executions.load(std::memory_order_relaxed));
  inference::InferStatistics* s = out->mutable_inference_stats();
  Fill(s->mutable_success(), st.success);
  Fill(s->mutable_fail(), st.fail);
  Fill(s->mutable_queue(), st.queue_ok);
  Fill(s->mutable_compute_input(), st.compute_input);
  Fill(s->mutable_compute_infer(), st.compute_infer);
  Fill(s->mutable_compute_output(), st.compute_output);
  for (const auto& [size, e] : st.batches.Read()) {
    inference::InferBatchStatistics* b = out->add_batch_stats();
    b->set_batch_size(size);
    b->mutable_compute_input()->set_count(e.runs);
    b->mutable_compute_input()->set_ns(e.compute_input_ns);
    b->mutable_compute_infer()->set_count(e.runs);
    b->mutable_compute_infer()->set_ns(e.compute_infer_ns);
    b->mutable_compute_output()->set_count(e.runs);
    b->mutable_compute_output()->set_ns(e.compute_output_ns);
  }
  if (std::shared_ptr<engine::Session> session = model.session()) {
    for (const engine::DeviceArenas& d : session->devices()) {
      inference::MemoryUsage* m = out->add_memory_usage();
      const bool gpu = absl::StartsWith(d.device, "cuda");
      int64_t id = 0;
      const size_t colon = d.device.find(':');
      if (colon != std::string::npos) (void)absl::SimpleAtoi(d.device.substr(colon + 1), &id);
      m->set_type(gpu ? "GPU" : "CPU");
      m->set_id(id);
      // What the model holds there: its arenas' live and retained bytes.
      m->set_byte_size(d.execution->Stats().system_bytes() + d.io->Stats().system_bytes());
    }
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<LoadedModel>> FindModelVersion(ModelRepository& repository,
                                                              absl::string_view name,
                                                              absl::string_view version) {
  // Client input: checked before any lookup, quoted bounded and escaped.
  if (absl::Status valid = ValidateModelName(name); !valid.ok()) return valid;
  return repository.FindVersion(name, version);
}

std::vector<std::string> ServerExtensions(Transport transport) {
  std::vector<std::string> out = {"model_repository", "model_configuration", "statistics",
                                  "binary_tensor_data"};
  // The gRPC RPCs; the HTTP front end has no /v2/systemsharedmemory endpoints yet.
  if (transport == Transport::kGrpc) out.push_back("system_shared_memory");
  return out;
}

inference::DataType TritonDataType(engine::DataType type) {
  const std::string name = KServeDataTypeName(type);
  inference::DataType out = inference::TYPE_INVALID;
  inference::DataType_Parse(absl::StrCat("TYPE_", name == "BYTES" ? "STRING" : name), &out);
  return out;
}

namespace {

// The READY model version a metadata or config call names, held for the call.
absl::StatusOr<LoadedModel::Ref> AcquireVersion(ModelRepository& repository, absl::string_view name,
                                                absl::string_view version) {
  absl::StatusOr<std::shared_ptr<LoadedModel>> model = FindModelVersion(repository, name, version);
  if (!model.ok()) return model.status();
  return (*model)->Acquire();
}

}  // namespace

absl::StatusOr<inference::ModelMetadataResponse> ModelMetadataOf(ModelRepository& repository,
                                                                 absl::string_view name,
                                                                 absl::string_view version) {
  absl::StatusOr<LoadedModel::Ref> ref = AcquireVersion(repository, name, version);
  if (!ref.ok()) return ref.status();
  const ModelSignature& sig = (*ref)->signature();
  inference::ModelMetadataResponse response;
  response.set_name(sig.name);
  response.add_versions(sig.version);
  response.set_platform("onnxruntime_onnx");
  FillMetadataTensors(sig.inputs, response.mutable_inputs());
  FillMetadataTensors(sig.outputs, response.mutable_outputs());
  return response;
}

absl::StatusOr<inference::ModelConfig> ModelConfigOf(ModelRepository& repository,
                                                     absl::string_view name,
                                                     absl::string_view version) {
  absl::StatusOr<LoadedModel::Ref> ref = AcquireVersion(repository, name, version);
  if (!ref.ok()) return ref.status();
  // A Triton folder's model: its config.pbtxt, completed from the model at load.
  if ((*ref)->triton_config() != nullptr) return *(*ref)->triton_config();
  const ModelConfig& config = (*ref)->config();
  const ModelSignature& sig = (*ref)->signature();
  inference::ModelConfig out;
  out.set_name(config.name);
  out.set_platform("onnxruntime_onnx");
  out.set_backend("onnxruntime");
  out.mutable_version_policy()->mutable_latest()->set_num_versions(1);
  out.set_max_batch_size(config.max_batch_size);
  for (const TensorSpec& s : sig.inputs) {
    inference::ModelInput* in = out.add_input();
    in->set_name(s.name);
    in->set_data_type(TritonDataType(s.type));
    for (int64_t d : TritonDims(s, config.max_batch_size)) in->add_dims(d);
    // A generative model needs only the text; the sampling settings are optional.
    if (config.generation && s.name != "text_input") in->set_optional(true);
  }
  for (const TensorSpec& s : sig.outputs) {
    inference::ModelOutput* o = out.add_output();
    o->set_name(s.name);
    o->set_data_type(TritonDataType(s.type));
    for (int64_t d : TritonDims(s, config.max_batch_size)) o->add_dims(d);
  }
  inference::ModelInstanceGroup* group = out.add_instance_group();
  group->set_name(absl::StrCat(config.name, "_0"));  // Triton's name for an unnamed first group
  group->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  group->set_count(config.max_concurrent_runs);
  if (config.dynamic_batching) {
    inference::ModelDynamicBatching* b = out.mutable_dynamic_batching();
    for (int size : config.dynamic_batching->preferred_batch_sizes) {
      b->add_preferred_batch_size(size);
    }
    b->set_max_queue_delay_microseconds(
        absl::ToInt64Microseconds(config.dynamic_batching->max_queue_delay));
  }
  out.set_default_model_filename("model.onnx");
  if (config.generation) {
    out.mutable_model_transaction_policy()->set_decoupled(true);  // ModelStreamInfer
    group->set_count(config.generation->max_sequences);
  }
  return out;
}

absl::StatusOr<inference::ModelStatisticsResponse> ModelStatisticsOf(ModelRepository& repository,
                                                                     absl::string_view name,
                                                                     absl::string_view version) {
  inference::ModelStatisticsResponse response;
  if (name.empty()) {
    for (const std::shared_ptr<LoadedModel>& m : repository.Snapshot()) {
      if (m->state() == ModelState::kReady) FillStatistics(*m, response.add_model_stats());
    }
    return response;
  }
  absl::StatusOr<std::shared_ptr<LoadedModel>> model = FindModelVersion(repository, name, version);
  if (!model.ok()) return model.status();
  FillStatistics(**model, response.add_model_stats());
  return response;
}

}  // namespace inferd::server

#include "server/triton_config.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/message_text.h"
#include "server/kserve_types.h"

namespace inferd::server {
namespace {

// Collects the text parser's reports: errors refuse the file, warnings (unknown fields) are
// kept for the log. Lines and columns come 0-based; messages show them 1-based.
class Collector final : public google::protobuf::io::ErrorCollector {
 public:
  explicit Collector(absl::string_view file) : file_(file) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat(file_, ":", line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber /*column*/,
                  const std::string& message) override {
    warnings_.push_back(absl::StrCat(file_, ":", line + 1, ": ", message,
                                     " (a Triton setting inferd does not honour: ignored)"));
  }
  const std::string& error() const { return error_; }
  std::vector<std::string>& warnings() { return warnings_; }

 private:
  const std::string file_;
  std::string error_;
  std::vector<std::string> warnings_;
};

// The model's type as Triton's enum, for comparing with the file's data_type.
std::string TypeName(inference::DataType t) { return inference::DataType_Name(t); }

absl::Status FieldError(absl::string_view file, absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", field, ": ", what));
}

absl::Status MapInstanceGroups(const inference::ModelConfig& t, absl::string_view file,
                               ModelConfig* out) {
  if (t.instance_group_size() > 1) {
    return FieldError(file, "instance_group",
                      "inferd runs one session per model version; give one instance_group (its "
                      "count is the number of concurrent runs)");
  }
  if (t.instance_group_size() == 0) return absl::OkStatus();
  const inference::ModelInstanceGroup& g = t.instance_group(0);
  if (g.count() < 0 || g.count() > kMaxConcurrentRuns) {
    return FieldError(file, "instance_group.count",
                      absl::StrCat("expected 1 to ", kMaxConcurrentRuns, ", got ", g.count()));
  }
  if (g.count() > 0) {
    out->max_concurrent_runs = g.count();
    out->keys_set.insert("max_concurrent_runs");
  }
  switch (g.kind()) {
    case inference::ModelInstanceGroup::KIND_AUTO:
    case inference::ModelInstanceGroup::KIND_CPU:
      return absl::OkStatus();  // inferd's default: the whole model on cpu:0
    case inference::ModelInstanceGroup::KIND_GPU: {
      if (g.gpus_size() > 1) {
        return FieldError(file, "instance_group.gpus",
                          "inferd places a model version on one GPU; list one");
      }
      const int gpu = g.gpus_size() == 0 ? 0 : g.gpus(0);
      if (gpu < 0) return FieldError(file, "instance_group.gpus", "expected a GPU index >= 0");
      const std::string device = absl::StrCat("cuda:", gpu);
      out->partition.devices = {DeviceBudget{device, std::nullopt}};
      out->partition.fallback_device = device;
      out->keys_set.insert("partition.devices");
      out->keys_set.insert("partition.fallback_device");
      return absl::OkStatus();
    }
    default:
      return FieldError(file, "instance_group.kind",
                        absl::StrCat(inference::ModelInstanceGroup::Kind_Name(g.kind()),
                                     " is not served; use KIND_CPU, KIND_GPU or KIND_AUTO"));
  }
}

QueuePolicy MapQueuePolicy(const inference::ModelQueuePolicy& p) {
  QueuePolicy q;
  q.default_timeout =
      absl::Microseconds(std::min<uint64_t>(p.default_timeout_microseconds(), uint64_t{1} << 62));
  q.reject_on_timeout = p.timeout_action() == inference::ModelQueuePolicy::REJECT;
  q.allow_timeout_override = p.allow_timeout_override();
  q.max_queue_size = static_cast<int>(std::min<uint32_t>(p.max_queue_size(), kMaxQueueLength));
  return q;
}

absl::Status MapDynamicBatching(const inference::ModelConfig& t, absl::string_view file,
                                ModelConfig* out) {
  if (!t.has_dynamic_batching()) return absl::OkStatus();
  const inference::ModelDynamicBatching& b = t.dynamic_batching();
  if (t.max_batch_size() == 0) {
    return FieldError(file, "dynamic_batching",
                      "needs max_batch_size > 0 (requests are batched along the first dimension)");
  }
  DynamicBatching d;
  int previous = 0;
  for (int size : b.preferred_batch_size()) {
    if (size <= previous || size > t.max_batch_size()) {
      return FieldError(file, "dynamic_batching.preferred_batch_size",
                        absl::StrCat("expected ascending sizes from 1 to max_batch_size ",
                                     t.max_batch_size(), ", got ", size));
    }
    d.preferred_batch_sizes.push_back(size);
    previous = size;
  }
  // At most about an hour: a longer delay is a mistake, and the Duration stays exact.
  constexpr uint64_t kMaxDelayUs = uint64_t{3600} * 1000 * 1000;
  if (b.max_queue_delay_microseconds() > kMaxDelayUs) {
    return FieldError(
        file, "dynamic_batching.max_queue_delay_microseconds",
        absl::StrCat("at most ", kMaxDelayUs, ", got ", b.max_queue_delay_microseconds()));
  }
  d.max_queue_delay = absl::Microseconds(b.max_queue_delay_microseconds());
  d.preserve_ordering = b.preserve_ordering();
  constexpr uint64_t kMaxPriorityLevels = 1024;
  if (b.priority_levels() > kMaxPriorityLevels ||
      b.default_priority_level() > b.priority_levels()) {
    return FieldError(file, "dynamic_batching.priority_levels",
                      absl::StrCat("expected at most ", kMaxPriorityLevels,
                                   " levels and default_priority_level within them, got ",
                                   b.priority_levels(), " and ", b.default_priority_level()));
  }
  d.priority_levels = static_cast<int>(b.priority_levels());
  d.default_priority_level = static_cast<int>(b.default_priority_level());
  d.default_queue_policy = MapQueuePolicy(b.default_queue_policy());
  for (const auto& [level, policy] : b.priority_queue_policy()) {
    if (level == 0 || level > b.priority_levels()) {
      return FieldError(file, "dynamic_batching.priority_queue_policy",
                        absl::StrCat("level ", level, " is not in 1..priority_levels (",
                                     b.priority_levels(), ")"));
    }
    d.priority_queue_policy[static_cast<int>(level)] = MapQueuePolicy(policy);
  }
  out->dynamic_batching = std::move(d);
  return absl::OkStatus();
}

// Inputs / outputs of the file: names unique, dims within bounds.
template <typename Tensors>
absl::Status CheckTensorList(const Tensors& tensors, absl::string_view field,
                             absl::string_view file) {
  std::set<std::string> names;
  for (const auto& t : tensors) {
    if (t.name().empty()) return FieldError(file, field, "an entry has no name");
    if (!names.insert(t.name()).second) {
      return FieldError(file, field, absl::StrCat("'", t.name(), "' is listed twice"));
    }
    if (t.dims_size() > kMaxShapeRank) {
      return FieldError(
          file, field,
          absl::StrCat("'", t.name(), "' has ", t.dims_size(), " dims; at most ", kMaxShapeRank));
    }
    for (int64_t d : t.dims()) {
      if (d < -1 || d > kMaxShapeDim) {
        return FieldError(file, field,
                          absl::StrCat("'", t.name(), "' dims: expected -1 (variable) or 0 to ",
                                       kMaxShapeDim, ", got ", d));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWarmup(const inference::ModelConfig& t, absl::string_view file) {
  for (const inference::ModelWarmup& w : t.model_warmup()) {
    for (const auto& [name, input] : w.inputs()) {
      if (input.input_data_type_case() == inference::ModelWarmup::Input::kInputDataFile) {
        return FieldError(file, absl::StrCat("model_warmup '", w.name(), "' input '", name, "'"),
                          "input_data_file is not supported; use zero_data or random_data");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<inference::ModelConfig> ParseTritonConfig(absl::string_view text,
                                                         absl::string_view file,
                                                         std::vector<std::string>* warnings) {
  Collector collector(file);
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  parser.RecordErrorsTo(&collector);
  inference::ModelConfig config;
  const bool ok = parser.ParseFromString(std::string(text), &config);
  if (!ok || !collector.error().empty()) {
    return absl::InvalidArgumentError(collector.error().empty()
                                          ? absl::StrCat(file, ": not a valid config.pbtxt")
                                          : collector.error());
  }
  if (warnings != nullptr) {
    for (std::string& w : collector.warnings()) warnings->push_back(std::move(w));
  }
  return config;
}

absl::StatusOr<ModelConfig> TritonToModelConfig(const inference::ModelConfig& t,
                                                absl::string_view folder_name,
                                                absl::string_view file) {
  if (!t.name().empty() && t.name() != folder_name) {
    return FieldError(
        file, "name",
        absl::StrCat(QuoteForMessage(t.name()), " differs from the model's folder '", folder_name,
                     "'; the folder names the model (or leave name out)"));
  }
  if (!t.platform().empty() && t.platform() != "onnxruntime_onnx") {
    return FieldError(file, "platform",
                      absl::StrCat(QuoteForMessage(t.platform()),
                                   " is not served: inferd serves ONNX models (platform "
                                   "\"onnxruntime_onnx\" or backend \"onnxruntime\")"));
  }
  if (!t.backend().empty() && t.backend() != "onnxruntime") {
    return FieldError(file, "backend",
                      absl::StrCat(QuoteForMessage(t.backend()),
                                   " is not served: inferd serves ONNX models (backend "
                                   "\"onnxruntime\")"));
  }
  if (t.max_batch_size() < 0) {
    return FieldError(file, "max_batch_size",
                      absl::StrCat("expected 0 (no batching) or more, got ", t.max_batch_size()));
  }
  ModelConfig out = DefaultModelConfig(folder_name);
  out.source = std::string(file);
  out.max_batch_size = t.max_batch_size();
  if (t.max_batch_size() > 0) out.keys_set.insert("max_batch_size");
  if (absl::Status s = CheckTensorList(t.input(), "input", file); !s.ok()) return s;
  if (absl::Status s = CheckTensorList(t.output(), "output", file); !s.ok()) return s;
  if (absl::Status s = MapInstanceGroups(t, file, &out); !s.ok()) return s;
  if (absl::Status s = MapDynamicBatching(t, file, &out); !s.ok()) return s;
  if (absl::Status s = CheckWarmup(t, file); !s.ok()) return s;
  out.triton = std::make_shared<const inference::ModelConfig>(t);
  return out;
}

absl::StatusOr<std::vector<int64_t>> SelectVersions(const inference::ModelVersionPolicy& policy,
                                                    std::vector<int64_t> available,
                                                    absl::string_view model_name) {
  std::sort(available.begin(), available.end(), std::greater<int64_t>());
  available.erase(std::unique(available.begin(), available.end()), available.end());
  if (available.empty()) {
    return absl::NotFoundError(absl::StrCat("model '", model_name,
                                            "' has no version directory (<model>/<N>/ with the "
                                            "model file, N a number)"));
  }
  switch (policy.policy_choice_case()) {
    case inference::ModelVersionPolicy::kAll:
      return available;
    case inference::ModelVersionPolicy::kSpecific: {
      std::vector<int64_t> out;
      for (int64_t v : policy.specific().versions()) {
        if (std::find(available.begin(), available.end(), v) == available.end()) {
          return absl::NotFoundError(absl::StrCat(
              "model '", model_name, "': version_policy specific lists version ", v,
              " but there is no directory ", v, "; there are: ", absl::StrJoin(available, ", ")));
        }
        out.push_back(v);
      }
      std::sort(out.begin(), out.end(), std::greater<int64_t>());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      return out;
    }
    case inference::ModelVersionPolicy::kLatest:
    case inference::ModelVersionPolicy::POLICY_CHOICE_NOT_SET: {
      uint32_t n = policy.has_latest() ? policy.latest().num_versions() : 1;
      if (n == 0) n = 1;  // Triton's default for latest {} as well
      available.resize(std::min<size_t>(available.size(), n));
      return available;
    }
  }
  return available;
}

inference::DataType TritonTypeOf(engine::DataType type) {
  using engine::DataType;
  switch (type) {
    case DataType::kBool:
      return inference::TYPE_BOOL;
    case DataType::kUint8:
      return inference::TYPE_UINT8;
    case DataType::kUint16:
      return inference::TYPE_UINT16;
    case DataType::kUint32:
      return inference::TYPE_UINT32;
    case DataType::kUint64:
      return inference::TYPE_UINT64;
    case DataType::kInt8:
      return inference::TYPE_INT8;
    case DataType::kInt16:
      return inference::TYPE_INT16;
    case DataType::kInt32:
      return inference::TYPE_INT32;
    case DataType::kInt64:
      return inference::TYPE_INT64;
    case DataType::kFloat16:
      return inference::TYPE_FP16;
    case DataType::kFloat32:
      return inference::TYPE_FP32;
    case DataType::kFloat64:
      return inference::TYPE_FP64;
    case DataType::kString:
      return inference::TYPE_STRING;
    case DataType::kBFloat16:
      return inference::TYPE_BF16;
    default:
      return inference::TYPE_INVALID;
  }
}

namespace {

// The model's dims as Triton writes them (-1: variable).
std::vector<int64_t> ModelDims(const engine::ShapeInfo& shape) {
  std::vector<int64_t> dims;
  for (const engine::DimInfo& d : shape.dims) dims.push_back(d.known() ? d.value : -1);
  return dims;
}

// `config_dims` (the file's, batch dim added) against the model's: same rank, equal where both
// are known. A model of unknown rank accepts any.
bool DimsCompatible(const std::vector<int64_t>& config_dims, const engine::ShapeInfo& model) {
  if (!model.rank_known) return true;
  if (config_dims.size() != model.dims.size()) return false;
  for (size_t i = 0; i < config_dims.size(); ++i) {
    if (config_dims[i] >= 0 && model.dims[i].known() && config_dims[i] != model.dims[i].value) {
      return false;
    }
  }
  return true;
}

template <typename Tensor>
absl::Status CheckTensor(const Tensor& t, absl::string_view kind, int max_batch_size,
                         const std::vector<TensorSpec>& specs, absl::string_view model) {
  auto it = std::find_if(specs.begin(), specs.end(),
                         [&](const TensorSpec& s) { return s.name == t.name(); });
  if (it == specs.end()) {
    std::vector<std::string> names;
    for (const TensorSpec& s : specs) names.push_back(s.name);
    return absl::InvalidArgumentError(absl::StrCat("model '", model, "' config.pbtxt: ", kind, " '",
                                                   t.name(), "' is not in the model; its ", kind,
                                                   "s are: ", absl::StrJoin(names, ", ")));
  }
  const inference::DataType type = TritonTypeOf(it->type);
  if (t.data_type() != inference::TYPE_INVALID && t.data_type() != type) {
    return absl::InvalidArgumentError(
        absl::StrCat("model '", model, "' config.pbtxt: ", kind, " '", t.name(), "' data_type ",
                     TypeName(t.data_type()), " but the model's is ", TypeName(type)));
  }
  std::vector<int64_t> dims;
  if (t.has_reshape()) {
    dims.assign(t.reshape().shape().begin(), t.reshape().shape().end());
  } else {
    dims.assign(t.dims().begin(), t.dims().end());
  }
  if (max_batch_size > 0) dims.insert(dims.begin(), -1);
  if (!DimsCompatible(dims, it->shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", model, "' config.pbtxt: ", kind, " '", t.name(), "' dims ",
        engine::ShapeForMessage(dims), max_batch_size > 0 ? " (with the batch dimension)" : "",
        " do not match the model's ", it->shape.ToString(),
        max_batch_size > 0 ? "" : " (with max_batch_size > 0, dims leave out the batch dim)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTritonSignature(const inference::ModelConfig& t,
                                  const ModelSignature& signature) {
  for (const inference::ModelInput& in : t.input()) {
    if (absl::Status s =
            CheckTensor(in, "input", t.max_batch_size(), signature.inputs, signature.name);
        !s.ok()) {
      return s;
    }
  }
  for (const inference::ModelOutput& out : t.output()) {
    if (absl::Status s =
            CheckTensor(out, "output", t.max_batch_size(), signature.outputs, signature.name);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

namespace {

bool DynamicFirstDim(const TensorSpec& s) {
  return s.shape.rank_known && !s.shape.dims.empty() && !s.shape.dims[0].known();
}

template <typename Tensor>
void FillTensor(const TensorSpec& s, int max_batch_size, Tensor* t) {
  t->set_name(s.name);
  t->set_data_type(TritonTypeOf(s.type));
  std::vector<int64_t> dims = ModelDims(s.shape);
  if (max_batch_size > 0 && !dims.empty()) dims.erase(dims.begin());
  if (dims.empty()) {
    // A scalar per batch entry: Triton writes dims [1] reshaped to [] (never without a batch).
    t->add_dims(1);
    if (max_batch_size > 0) t->mutable_reshape();
    return;
  }
  for (int64_t d : dims) t->add_dims(d);
}

// onnxruntime_backend's AutoCompleteMaxBatch: a model whose every input and output has a
// dynamic first dimension can batch; max_batch_size 0 becomes the default, and a batch size
// above 1 turns dynamic batching on. A model that cannot batch keeps 0 (else an error).
absl::Status CompleteMaxBatch(const ModelSignature& signature, inference::ModelConfig* out) {
  bool batchable = true;
  for (const TensorSpec& s : signature.inputs) batchable = batchable && DynamicFirstDim(s);
  for (const TensorSpec& s : signature.outputs) batchable = batchable && DynamicFirstDim(s);
  if (!batchable) {
    if (out->max_batch_size() == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "model '", signature.name, "' config.pbtxt: max_batch_size ", out->max_batch_size(),
        " but the model does not batch (an input or output has a fixed first dimension); set "
        "max_batch_size: 0"));
  }
  if (out->max_batch_size() == 0) out->set_max_batch_size(kTritonAutoMaxBatchSize);
  if (out->max_batch_size() > 1 && !out->has_dynamic_batching()) out->mutable_dynamic_batching();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<inference::ModelConfig> CompleteTritonConfig(const inference::ModelConfig& triton,
                                                            const ModelSignature& signature) {
  inference::ModelConfig out = triton;
  out.set_name(signature.name);
  if (out.platform().empty()) out.set_platform("onnxruntime_onnx");
  if (out.backend().empty()) out.set_backend("onnxruntime");
  if (out.default_model_filename().empty()) out.set_default_model_filename("model.onnx");
  if (!out.has_version_policy())
    out.mutable_version_policy()->mutable_latest()->set_num_versions(1);
  // As the backend: a config listing both inputs and outputs is taken as written.
  if (out.input_size() == 0 || out.output_size() == 0) {
    if (absl::Status s = CompleteMaxBatch(signature, &out); !s.ok()) return s;
  }
  if (out.input_size() == 0) {
    for (const TensorSpec& s : signature.inputs)
      FillTensor(s, out.max_batch_size(), out.add_input());
  }
  if (out.output_size() == 0) {
    for (const TensorSpec& s : signature.outputs) {
      FillTensor(s, out.max_batch_size(), out.add_output());
    }
  }
  if (out.instance_group_size() == 0) {
    inference::ModelInstanceGroup* g = out.add_instance_group();
    g->set_name(signature.name);
    g->set_count(1);
    g->set_kind(inference::ModelInstanceGroup::KIND_CPU);
  }
  return out;
}

namespace {

engine::DataType EngineTypeOf(inference::DataType type) {
  for (engine::DataType t :
       {engine::DataType::kBool, engine::DataType::kUint8, engine::DataType::kUint16,
        engine::DataType::kUint32, engine::DataType::kUint64, engine::DataType::kInt8,
        engine::DataType::kInt16, engine::DataType::kInt32, engine::DataType::kInt64,
        engine::DataType::kFloat16, engine::DataType::kFloat32, engine::DataType::kFloat64,
        engine::DataType::kBFloat16}) {
    if (TritonTypeOf(t) == type) return t;
  }
  return engine::DataType::kUndefined;  // TYPE_STRING, TYPE_INVALID: no fixed-size data
}

// Random values a model can take without NaNs: integers any bits, bool 0/1, floats in [0, 1)
// (half types in [1, 2): exponent fixed, mantissa random).
void FillRandom(engine::DataType type, std::vector<uint8_t>& bytes, std::mt19937_64& rng) {
  switch (type) {
    case engine::DataType::kBool:
      for (uint8_t& b : bytes) b = rng() & 1;
      return;
    case engine::DataType::kFloat32:
      for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        const float f = std::uniform_real_distribution<float>(0, 1)(rng);
        std::memcpy(&bytes[i], &f, 4);
      }
      return;
    case engine::DataType::kFloat64:
      for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
        const double d = std::uniform_real_distribution<double>(0, 1)(rng);
        std::memcpy(&bytes[i], &d, 8);
      }
      return;
    case engine::DataType::kFloat16:
    case engine::DataType::kBFloat16:
      for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
        const uint16_t h = type == engine::DataType::kFloat16
                               ? static_cast<uint16_t>(0x3C00 | (rng() & 0x3FF))
                               : static_cast<uint16_t>(0x3F80 | (rng() & 0x7F));
        std::memcpy(&bytes[i], &h, 2);
      }
      return;
    default:
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  }
}

}  // namespace

absl::Status RunWarmup(const inference::ModelConfig& triton, engine::Session& session) {
  constexpr int64_t kMaxWarmupBytes = int64_t{256} << 20;
  std::mt19937_64 rng(0x1f2e3d4c);
  for (const inference::ModelWarmup& w : triton.model_warmup()) {
    const auto error = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat("model_warmup '", w.name(), "': ", what));
    };
    std::vector<std::vector<uint8_t>> data;
    std::vector<engine::InputTensor> inputs;
    int64_t total = 0;
    for (const auto& [name, in] : w.inputs()) {
      const engine::DataType type = EngineTypeOf(in.data_type());
      if (type == engine::DataType::kUndefined) {
        return error(absl::StrCat("input '", name, "': data_type ",
                                  inference::DataType_Name(in.data_type()),
                                  " has no fixed-size data to warm up with"));
      }
      std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
      if (triton.max_batch_size() > 0)
        dims.insert(dims.begin(), std::max<uint32_t>(w.batch_size(), 1));
      const std::optional<int64_t> n = engine::CheckedNumElements(dims, engine::ElementSize(type));
      const int64_t bytes = n ? *n * static_cast<int64_t>(engine::ElementSize(type)) : -1;
      if (!n || bytes > kMaxWarmupBytes - total) {
        return error(absl::StrCat("input '", name, "' dims ", engine::ShapeForMessage(dims),
                                  ": expected known dims of at most 256 MiB of data in all"));
      }
      total += bytes;
      data.emplace_back(static_cast<size_t>(bytes), 0);
      if (in.random_data()) FillRandom(type, data.back(), rng);
      inputs.push_back({name, type, engine::Shape(dims), data.back().data(), data.back().size()});
    }
    for (uint32_t i = 0; i < std::max<uint32_t>(w.count(), 1); ++i) {
      absl::StatusOr<std::vector<engine::OutputTensor>> out = session.Run(inputs);
      if (!out.ok()) return error(std::string(out.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::server

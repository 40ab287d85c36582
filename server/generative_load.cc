// LoadedModel::LoadGenerative: a model with `generation` settings (config.h) is loaded as a
// decoder through genai/ (the in-place KV cache, the tokenizer, the configs of its folder) and
// served by ModelStreamInfer (server/stream_infer_handler.h). Its signature is the text one
// Triton's LLM backends show (GenerationSignature), its KV budget is set up here.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "genai/generator.h"
#include "server/model_repository.h"

namespace inferd::server {

ModelSignature GenerationSignature(const std::string& name, const std::string& version) {
  ModelSignature s;
  s.name = name;
  s.version = version;
  const engine::ShapeInfo one = engine::ShapeInfo::FromShape(engine::Shape{1});
  s.inputs = {{"text_input", engine::DataType::kString, one},
              {"max_tokens", engine::DataType::kInt32, one},
              {"temperature", engine::DataType::kFloat32, one},
              {"top_k", engine::DataType::kInt32, one},
              {"top_p", engine::DataType::kFloat32, one},
              {"repetition_penalty", engine::DataType::kFloat32, one},
              {"random_seed", engine::DataType::kUint64, one},
              {"min_length", engine::DataType::kInt32, one},
              {"stop", engine::DataType::kString, engine::ShapeInfo::FromShape(engine::Shape{-1})},
              {"stream", engine::DataType::kBool, one},
              {"exclude_input_in_output", engine::DataType::kBool, one}};
  s.outputs = {{"text_output", engine::DataType::kString, one},
               {"token_id", engine::DataType::kInt32, one}};
  return s;
}

std::shared_ptr<KvBudget> LoadedModel::shared_kv_budget() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kv_budget_;
}

absl::Status LoadedModel::LoadGenerative(const std::string& path,
                                         const engine::KernelRegistry& registry,
                                         const HostMemoryLimit& host) {
  const GenerationSettings& gen = *config_.generation;
  genai::GeneratorOptions options;
  options.session = ToSessionOptions(config_);
  // Each running sequence steps on its own: as many concurrent runs as sequences.
  options.session.max_concurrent_runs = std::max(config_.max_concurrent_runs, gen.max_sequences);
  options.max_length = gen.max_length;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::shared_ptr<genai::GenerativeModel> generator;
  std::unique_ptr<ModelWorker> worker;
  try {
    INFERD_ASSIGN_OR_RETURN(std::unique_ptr<genai::GenerativeModel> g,
                            genai::GenerativeModel::Load(dir, options, registry));
    generator = std::move(g);
    worker = std::make_unique<ModelWorker>(config_.name, gen.max_sequences, config_.queue_length,
                                           stats_.get());
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot start the model's threads (max_sequences ", gen.max_sequences, "): ", e.what()));
  }
  // The session lives as long as the generator (an aliasing pointer: readers of session()
  // keep both).
  std::shared_ptr<engine::Session> session(generator, &generator->session());
  INFERD_RETURN_IF_ERROR(host.Check(*session));
  const uint64_t per_sequence = generator->kv_bytes_per_sequence();
  const uint64_t budget = gen.kv_cache_budget.value_or(per_sequence * gen.max_sequences);
  if (budget < generator->kv_bytes_for(2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("generation.kv_cache_budget of ", budget, " bytes holds no sequence (",
                     generator->kv_bytes_for(1), " bytes per position)"));
  }
  spdlog::info(
      "model '{}' version {} loaded from {} (generative: {} KV cache, max_length {}, {} bytes "
      "per full-length sequence, budget {} bytes, {} sequences at once)",
      config_.name, config_.version, dir, generator->kv_in_place() ? "in-place" : "copying",
      generator->max_length(), per_sequence, budget, gen.max_sequences);
  spdlog::info("model '{}' partition:\n{}", config_.name, session->partition_report().ToString());
  std::lock_guard<std::mutex> lock(mu_);
  session_ = std::move(session);
  generator_ = std::move(generator);
  kv_budget_ = std::make_shared<KvBudget>(budget);
  signature_ = GenerationSignature(config_.name, config_.version);
  worker_ = std::move(worker);
  state_ = ModelState::kReady;
  reason_.clear();
  return absl::OkStatus();
}

}  // namespace inferd::server

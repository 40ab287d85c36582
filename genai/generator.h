// The decode loop over a loaded decoder model.
//   GenerativeModel  a model folder loaded once: the session (with the KV-cache rewrite, so the
//                    present of step t is the past of step t+1 without a copy), the tokenizer,
//                    the config. Thread-safe: many Sequences run on it at once (up to the
//                    session's max_concurrent_runs run together; the others wait).
//   Sequence         one sequence's state: its KV block per cache input, one per layer's keys
//                    and values, each [1, kv_heads, max_length, head_dim] in the execution arena
//                    of the device that layer runs on (accounted and shown like any arena), and
//                    the tokens it holds. Feed runs the model on new tokens (the prompt: prefill;
//                    one token: a decode step). Not thread-safe (one user at a time).
//   Generate         prefill, then one token per step, sampled (sampler.h) and streamed through
//                    a callback as text; stops on an EOS id, a stop string, max_new_tokens, the
//                    sequence's maximum length, or cancellation.
//
// Example:
//   auto model = GenerativeModel::Load("/models/llama", GeneratorOptions{}, registry);
//   auto seq = Sequence::Start(**model);
//   auto prompt = (*model)->tokenizer().Encode("Once upon a time", true);
//   GenerateParams p;  p.max_new_tokens = 32;
//   auto result = Generate(**seq, *prompt, p, [](int32_t id, absl::string_view text) {
//     std::cout << text << std::flush;  return true;
//   });
#ifndef INFERD_GENAI_GENERATOR_H_
#define INFERD_GENAI_GENERATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/kernel_registry.h"
#include "engine/kv_cache_rewrite.h"
#include "engine/session.h"
#include "genai/model_config.h"
#include "genai/sampler.h"
#include "genai/tokenizer.h"

namespace inferd::genai {

struct GeneratorOptions {
  engine::SessionOptions session;  // threads, devices and rules, concurrent runs
  // Positions each sequence's KV block holds (prompt + answer, over all turns of a chat).
  // 0: the model's maximum (generation_config max_length, else max_position_embeddings), capped
  // at kDefaultMaxLength.
  int max_length = 0;
  // The in-place KV cache (engine/kv_cache_rewrite.h). false runs the export as it is: each
  // step's Concat copies the whole past into the present (for comparison; counted).
  bool kv_in_place = true;
};

inline constexpr int kDefaultMaxLength = 2048;

class GenerativeModel {
 public:
  // One cache input of the model (a layer's keys or values).
  struct CacheInput {
    std::string input;    // "past_key_values.0.key"
    std::string present;  // "present.0.key"
    size_t device = 0;    // index into session().devices()
    int64_t kv_heads = 0, head_dim = 0;
  };

  static absl::StatusOr<std::unique_ptr<GenerativeModel>> Load(
      const std::string& dir, const GeneratorOptions& options,
      const engine::KernelRegistry& registry);

  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  engine::Session& session() const { return *session_; }
  int max_length() const { return max_length_; }
  bool kv_in_place() const { return in_place_; }
  // How the in-place cache is bound (engine/kv_cache_rewrite.h): "KvCacheAppend" (a Concat-based
  // Hugging Face export, rewritten), "GroupQueryAttention" (an ONNX Runtime GenAI export's shared
  // buffer), or "copy" (neither: each step's presents are fed back as pasts).
  const std::string& kv_form() const { return kv_form_; }
  const std::vector<CacheInput>& caches() const { return caches_; }
  // Bytes of one sequence's KV blocks at max_length, and for `positions` positions.
  uint64_t kv_bytes_per_sequence() const { return kv_bytes_for(max_length_); }
  uint64_t kv_bytes_for(int positions) const;
  int32_t vocab_size() const { return vocab_size_; }

 private:
  GenerativeModel() = default;
  absl::Status FindCaches(const engine::KvCacheRewrite* rewrite);

  ModelConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<engine::Session> session_;
  std::vector<CacheInput> caches_;
  int max_length_ = 0;
  bool in_place_ = false;
  std::string kv_form_ = "copy";
  bool past_length_input_ = false;  // feed engine::kKvPastLengthInput
  bool has_mask_ = false, has_positions_ = false;
  int32_t vocab_size_ = 0;
  friend class Sequence;
};

class Sequence {
 public:
  // Allocates the sequence's KV blocks for `capacity` positions (0 or more than max_length:
  // max_length); RESOURCE_EXHAUSTED with the figures when an arena cannot hold them.
  static absl::StatusOr<std::unique_ptr<Sequence>> Start(const GenerativeModel& model,
                                                         int capacity = 0);

  // Runs the model on `ids`, placed after the tokens the sequence holds; afterwards
  // last_logits() is the next-token distribution. INVALID_ARGUMENT when they do not fit.
  absl::Status Feed(absl::Span<const int32_t> ids, const engine::RunOptions& run = {});
  absl::Span<float> last_logits() { return absl::MakeSpan(logits_); }

  const GenerativeModel& model() const { return model_; }
  int length() const { return length_; }
  int capacity() const { return capacity_; }
  // Every id the sequence holds (for the repetition penalty).
  const std::vector<int32_t>& tokens() const { return tokens_; }
  uint64_t kv_bytes() const;
  // Bytes of past keys / values copied so far (0 with the in-place cache).
  uint64_t kv_bytes_copied() const { return kv_bytes_copied_; }

 private:
  explicit Sequence(const GenerativeModel& model) : model_(model) {}

  const GenerativeModel& model_;
  std::vector<memory::AllocationHandle> blocks_;  // in place: one per cache input
  std::vector<engine::OutputTensor> presents_;    // copying: last step's presents
  std::vector<int32_t> tokens_;
  std::vector<int64_t> ids_, mask_, positions_;
  int64_t past_length_ = 0;
  std::vector<engine::InputTensor> inputs_;
  std::vector<std::string> outputs_;
  std::vector<float> logits_;
  int length_ = 0;
  int capacity_ = 0;
  uint64_t kv_bytes_copied_ = 0;
};

struct GenerateParams {
  SamplingParams sampling;
  int max_new_tokens = 128;
  // EOS ids are masked out until this many tokens are generated (Hugging Face's min_new_tokens).
  int min_new_tokens = 0;
  std::vector<std::string> stop_strings;
  std::function<bool()> cancelled;  // checked between steps (and between nodes of a step)
};

struct GenerateResult {
  std::vector<int32_t> token_ids;  // generated (an EOS that stopped it is not included)
  std::string text;                // decoded, special tokens skipped, a stop string cut off
  std::string stop_reason;         // eos, stop_string, max_new_tokens, max_length, cancelled
  // The last token sampled (the EOS that stopped it, or the last generated one), not yet fed to
  // the model: a chat's next turn starts with it so the cache holds the whole conversation.
  std::optional<int32_t> unfed_token;
  int prompt_tokens = 0;
  double prefill_ms = 0;
  double decode_ms = 0;  // steps after the first token
  double decode_tokens_per_second = 0;
  uint64_t kv_bytes_copied_per_token = 0;
  // System allocations of every arena of the session during the decode steps after the first.
  uint64_t system_allocations_after_first_token = 0;
};

// Feeds `prompt` to `seq` (after what it holds) and generates. `on_token` receives each id and
// the text it completes (possibly empty); returning false stops.
absl::StatusOr<GenerateResult> Generate(
    Sequence& seq, absl::Span<const int32_t> prompt, const GenerateParams& params,
    const std::function<bool(int32_t, absl::string_view)>& on_token);

// Sum of system allocations over every arena of the session (for the steady-state check).
uint64_t SystemAllocations(const engine::Session& session);

}  // namespace inferd::genai

#endif  // INFERD_GENAI_GENERATOR_H_

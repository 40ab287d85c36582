// ModelConfig: what the decode loop needs from a model folder's JSON files:
//   config.json             model_type, max_position_embeddings (n_positions), bos / eos ids
//   generation_config.json  eos_token_id (one or a list), max_length, sampling defaults
//   tokenizer_config.json   chat_template (which of the common templates it is)
//   genai_config.json       (ONNX Runtime GenAI exports) the model file, eos / bos, context length,
//                           the decoder's input and output names
// Missing files or keys leave defaults; a file that is not valid JSON is an error naming it.
// Plain value type.
#ifndef INFERD_GENAI_MODEL_CONFIG_H_
#define INFERD_GENAI_MODEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace inferd::genai {

enum class ChatTemplate { kPlain, kChatMl, kLlama3, kLlama2 };

// The decoder's input and output names: genai_config.json's model.decoder.inputs / outputs where
// given, else these (the Hugging Face and builder defaults). The cache names are templates with
// one %d, the layer index.
struct DecoderNames {
  std::string input_ids = "input_ids";
  std::string attention_mask = "attention_mask";
  std::string position_ids = "position_ids";
  std::string logits = "logits";
  std::string past_key = "past_key_values.%d.key";
  std::string past_value = "past_key_values.%d.value";
  std::string present_key = "present.%d.key";
  std::string present_value = "present.%d.value";
  // genai_config.json named the cache inputs: they are found by these templates only (else
  // also by the prefixes "past_key_values." and "past." with "present." outputs).
  bool caches_configured = false;
};

// `name_template` with its %d replaced by `layer`.
std::string LayerName(const std::string& name_template, int layer);
const char* ChatTemplateName(ChatTemplate t);

struct ModelConfig {
  std::string dir;
  std::string model_file = "model.onnx";
  std::string model_type;           // "llama", "gpt2", ...
  bool genai_layout = false;        // genai_config.json present
  int max_position_embeddings = 0;  // 0: unknown
  std::vector<int32_t> eos_token_ids;
  std::optional<int32_t> bos_token_id;
  ChatTemplate chat_template = ChatTemplate::kPlain;
  // generation_config.json defaults (the command line overrides them).
  std::optional<int> max_length;
  // genai_config.json's decoder head_size and num_key_value_heads (0: not given): the builder's
  // past inputs leave head_size symbolic.
  int head_size = 0;
  int kv_heads = 0;
  DecoderNames names;
};

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& dir);

}  // namespace inferd::genai

#endif  // INFERD_GENAI_MODEL_CONFIG_H_

// `inferctl generate DIR --prompt TEXT`: loads a decoder model folder (model.onnx, config.json,
// generation_config.json, tokenizer.json or tokenizer.model) and generates: the text streams to
// stdout as it is produced, then tokens/s for prefill and decode, the KV cache (bytes, bytes
// copied per token) and memory per device. With --devices / --rules the partition report is
// printed first. With --json, only one JSON object is printed, as the last stdout line:
// prompt_token_ids, token_ids, text, tokens_per_second, prefill_ms, decode_ms,
// kv_cache_bytes_copied_per_token, kv_cache_bytes, devices (arena bytes per device), ...
// `inferctl chat DIR` (chat_command.h) shares the loading and the figures.
#ifndef INFERD_TOOLS_INFERCTL_GENERATE_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_GENERATE_COMMAND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/flags.h"
#include "engine/kernel_registry.h"
#include "genai/generator.h"

namespace inferd::tools {

// argv after "generate"; returns the process exit code.
int GenerateCommand(const std::vector<std::string>& args);

// Shared with chat: the model loaded as the flags say (--threads, --devices, --rules,
// --max-length, --no-kv-in-place), and the sampling flags.
struct LoadedGenerator {
  std::unique_ptr<engine::KernelRegistry> registry;
  std::unique_ptr<genai::GenerativeModel> model;
};
absl::StatusOr<LoadedGenerator> LoadGeneratorFromFlags(const std::string& dir,
                                                       const ParsedArgs& parsed);
absl::StatusOr<genai::GenerateParams> GenerateParamsFromFlags();
// "prefill: N tokens in X ms (T tok/s); decode: ...", the KV cache and per-device arenas.
std::string FiguresText(const genai::GenerativeModel& model, const genai::GenerateResult& r);
// Arena bytes per device as a JSON array (for --json).
std::string DevicesJson(const genai::GenerativeModel& model);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_GENERATE_COMMAND_H_

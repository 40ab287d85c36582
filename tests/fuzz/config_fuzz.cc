// libFuzzer target over the YAML config readers: random and mutated inferd.yaml / config.yaml
// text must give a config or a clear error, never a crash, a hang, an uncaught exception or a
// sanitizer report. The same text is read as a main config and as a model directory's
// config.yaml; when both parse, the model entry is merged with the first model of the main
// config, as the repository does at load.
#include <cstddef>
#include <cstdint>

#include "server/config.h"

namespace {

void CheckError(const absl::Status& status) {
  // Every refusal must tell the operator what is wrong.
  if (!status.ok() && status.message().empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::shared_ptr<const inferd::server::Config>> config =
      inferd::server::ParseConfig(text, "inferd.yaml");
  CheckError(config.status());
  absl::StatusOr<inferd::server::ModelConfig> model =
      inferd::server::ParseModelConfig(text, "models/fuzz/config.yaml", "fuzz");
  CheckError(model.status());
  if (config.ok() && model.ok() && !(*config)->models.empty()) {
    CheckError(inferd::server::MergeModelConfig((*config)->models.front(), *model).status());
  }
  return 0;
}

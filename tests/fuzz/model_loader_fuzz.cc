// libFuzzer target over the model loader: random and mutated ONNX bytes must give a model or a
// clear error, never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>

#include "engine/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<std::shared_ptr<const inferd::engine::Model>> model = inferd::engine::Model::Parse(
      absl::string_view(reinterpret_cast<const char*>(data), size), /*model_dir=*/"");
  if (!model.ok() && model.status().message().empty()) __builtin_trap();
  return 0;
}

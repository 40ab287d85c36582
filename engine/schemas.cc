#include "engine/schemas.h"

#include <mutex>

#include "engine/contrib_schemas.h"
#include "engine/genai_schemas.h"
#include "engine/onnx_schemas.h"
#include "engine/quant_schemas.h"

namespace inferd::engine {

void RegisterInferdSchemas() {
  // One after another: the com.microsoft families share the domain's version range
  // (SchemaFamily::EnsureMicrosoftDomain).
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterNewerOnnxSchemas();
    RegisterContribSchemas();
    RegisterGenAiSchemas();
    RegisterQuantSchemas();
  });
}

}  // namespace inferd::engine

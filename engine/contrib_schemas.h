// The schemas of ONNX Runtime's transformer contrib operators that optimized BERT / GPT-2 exports
// carry (ORT's transformer optimizer writes them): Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd,
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, Attention, MultiHeadAttention and
// EmbedLayerNormalization in domain com.microsoft (version 1), and SimplifiedLayerNormalization,
// which ORT registers in the default ONNX domain (version 1). libonnx 1.12 knows none of them;
// registering them lets the ONNX checker validate such nodes and shape inference type and shape
// their outputs, with inferd's own inference functions. docs/contrib-ops.md lists them.
//
// Thread-safety: RegisterContribSchemas is idempotent and safe to call from any thread; the
// registry is only read afterwards.
#ifndef INFERD_ENGINE_CONTRIB_SCHEMAS_H_
#define INFERD_ENGINE_CONTRIB_SCHEMAS_H_

#include <string>
#include <vector>

namespace inferd::engine {

// Registers the schemas once per process (and com.microsoft's version range, 1 to 1, when no
// other registration has made it known). engine/schemas.h registers it with the others.
void RegisterContribSchemas();

// "domain:Op-version" for every schema RegisterContribSchemas adds, sorted (docs and tests).
std::vector<std::string> ContribSchemaNames();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CONTRIB_SCHEMAS_H_

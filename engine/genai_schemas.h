// Schemas of the operators the onnxruntime-genai model builder writes that libonnx does not know
// (ONNX Runtime's contrib ops): com.microsoft MatMulNBits, RotaryEmbedding, GroupQueryAttention,
// SkipSimplifiedLayerNormalization, and SimplifiedLayerNormalization of the default domain
// (version 1, where ORT registers it). Each is registered into libonnx's schema registry with
// ORT's inputs, outputs, attributes and type constraints and inferd's own type and shape
// inference, so the checker validates such nodes and shape inference types their outputs.
// docs/genai-ops.md lists them.
//
// Thread-safety: RegisterGenAiSchemas is idempotent and safe to call from any thread; the
// registry is only read afterwards.
#ifndef INFERD_ENGINE_GENAI_SCHEMAS_H_
#define INFERD_ENGINE_GENAI_SCHEMAS_H_

#include <string>
#include <vector>

namespace inferd::engine {

// Registers the schemas once per process (and the com.microsoft domain's version range, 1 to 1,
// with libonnx when it does not know the domain). engine/schemas.h registers it with the others.
void RegisterGenAiSchemas();

// "domain:Op-version" for every schema RegisterGenAiSchemas adds, sorted.
std::vector<std::string> GenAiSchemaNames();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_GENAI_SCHEMAS_H_

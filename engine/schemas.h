// The operator schemas inferd adds to libonnx's registry, so that the ONNX checker and shape
// inference know every operator inferd runs. One family per file, each a SchemaFamily
// (engine/schema_family.h):
//   onnx_schemas.h     ONNX opsets 18 to 21 (libonnx 1.12 stops at 17)
//   contrib_schemas.h  ONNX Runtime's transformer contrib ops (Attention, SkipLayerNorm, ...)
//   quant_schemas.h    ONNX Runtime's quantization contrib ops (QLinearAdd, ...)
//   genai_schemas.h    the onnxruntime-genai model builder's ops (MatMulNBits, GQA, ...)
//
// Thread-safety: safe to call from any thread; registers once per process.
#ifndef INFERD_ENGINE_SCHEMAS_H_
#define INFERD_ENGINE_SCHEMAS_H_

namespace inferd::engine {

// Registers every family, one after another. Model::Load calls it before checking a model.
void RegisterInferdSchemas();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_SCHEMAS_H_

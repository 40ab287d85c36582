// The ONNX operator schemas of opsets 18 to 21 that libonnx 1.12 (the library the loader links,
// which stops at opset 17) does not have: the operators those opsets added or changed (Reduce*
// with axes as an input, Split's num_outputs, Pad's axes and wrap mode, Resize's antialias and
// aspect-ratio policies, GroupNormalization, Col2Im, DFT's axis input, Gelu, ...). Each is
// registered into libonnx's schema registry with inferd's own type and shape inference function,
// so the ONNX checker validates such nodes (inputs, attributes, types) and shape inference types
// and shapes them, exactly as for the operators libonnx knows. Operators whose newer versions
// only add element types the engine has no type for (float8, int4) keep libonnx's older schema.
// docs/opsets.md lists them and says what each registration checks.
//
// Thread-safety: RegisterNewerOnnxSchemas is idempotent and safe to call from any thread; the
// registry is only read afterwards.
#ifndef INFERD_ENGINE_ONNX_SCHEMAS_H_
#define INFERD_ENGINE_ONNX_SCHEMAS_H_

#include <string>
#include <vector>

namespace inferd::engine {

// The newest opset of the default ONNX domain that models may import.
inline constexpr int kMaxOnnxOpset = 22;

// Registers the schemas (once per process) and raises libonnx's version range of the default
// domain to kMaxOnnxOpset. engine/schemas.h registers it with the others.
void RegisterNewerOnnxSchemas();

// "Op-version" for every schema RegisterNewerOnnxSchemas adds, sorted (for docs and tests).
std::vector<std::string> NewerOnnxSchemaNames();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_ONNX_SCHEMAS_H_

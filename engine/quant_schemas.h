// The schemas of ONNX Runtime's quantization contrib operators (domain com.microsoft, version 1)
// that inferd runs: QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu and
// QLinearGlobalAveragePool (its quantizer's QOperator format), MatMulIntegerToFloat and
// DynamicQuantizeMatMul (its optimizer's forms of dynamically quantized MatMuls). libonnx 1.12
// knows none of them; registering them lets the ONNX checker validate such nodes and shape
// inference type and shape their outputs. docs/quantization.md lists them.
//
// Thread-safety: RegisterQuantSchemas is idempotent and safe to call from any thread; the
// registry is only read afterwards.
#ifndef INFERD_ENGINE_QUANT_SCHEMAS_H_
#define INFERD_ENGINE_QUANT_SCHEMAS_H_

#include <string>
#include <vector>

namespace inferd::engine {

// Registers the schemas once per process (and com.microsoft's version range, 1 to 1, when no
// other registration has made it known). engine/schemas.h registers it with the others.
void RegisterQuantSchemas();

// "domain:Op-version" for every schema RegisterQuantSchemas adds, sorted (docs and tests).
std::vector<std::string> QuantSchemaNames();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_QUANT_SCHEMAS_H_

// The QDQ fusion, pass 1 of ApplyFusions (engine/rewrites.h): DequantizeLinear(x) and
// DequantizeLinear(constant W) into MatMul / Conv, then QuantizeLinear, become QLinearMatMul /
// QLinearConv (a Conv bias from DequantizeLinear of an int32 constant becomes its B); a MatMul
// without the QuantizeLinear becomes com.microsoft MatMulIntegerToFloat; a Gemm (alpha, beta 1)
// becomes com.microsoft QGemm with or without the QuantizeLinear (an int32 DequantizeLinear bias
// as its C; a float constant bias added after a float-output QGemm, "<op>/QdqFusionBias"). x per
// tensor, W per tensor or per output channel; the DequantizeLinear nodes go with the group when
// it is their only reader. Then DQ(a), DQ(b) -> Add -> Q becomes com.microsoft QLinearAdd, and
// DQ(x) -> MaxPool -> Q with equal scales and zero points becomes MaxPool on x's 8-bit tensor.
// DequantizeLinear nodes left with no reader (several fused groups read them) are removed.
// Fused nodes are named "<op>/QdqFusion" (the MaxPool keeps its name). Internal to //engine.
#ifndef INFERD_ENGINE_QDQ_FUSION_H_
#define INFERD_ENGINE_QDQ_FUSION_H_

#include "absl/status/statusor.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

// Returns how many groups were fused; only where the registry has the fused op's kernel.
absl::StatusOr<int> FuseQdq(Graph& g, const KernelRegistry& registry);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_QDQ_FUSION_H_

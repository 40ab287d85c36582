// Graph rewrites applied at load, before partitioning. Each fused node is named after the node
// it replaces with a suffix ("<original name>/MatMulAddFusion"), so name-based partition rules
// written for the original graph still match it. A rewrite applies only where the registry has
// a kernel for the fused op. First, an Identity of a weight (exporters write them for shared
// parameters) is dropped and its readers read the weight, so that the fusions see a constant.
//   - Pad (constant 0, spatial dims, constant pads) + Conv -> the Conv (its name kept) with the
//     pads added to its own
//   - Conv + BatchNormalization (inference form, constant float32 weights) -> the Conv (its name
//     kept) with the BN folded into new weights "<W>/ConvBatchNormFusion", which live in the
//     session's DerivedWeights
//   - MatMul + Add(bias over the last dim, a weight) -> com.inferd::FusedMatMul(A, B, bias);
//     MatMul + Mul or Div by a scalar constant -> FusedMatMul(A, B) with `alpha`
//     ("/MatMulScaleFusion"); then FusedMatMul + GELU in its erf form (Div or Mul by sqrt 2, Erf,
//     Add 1, two Muls) -> the FusedMatMul with activation "Gelu" (its name kept); a GELU left
//     (its input not a FusedMatMul's: a quantized model's MatMulInteger, say) -> one
//     com.microsoft::Gelu named after its Erf ("/GeluFusion")
//   - Conv + an activation -> com.inferd::FusedConv(..., activation, activation_params), applied
//     by the convolution as a post-op: Relu ("/ConvReluFusion"); LeakyRelu [alpha], Elu [alpha],
//     HardSigmoid [alpha, beta], HardSwish, Sigmoid, Tanh, Clip [min, max] with constant bounds,
//     and SiLU written as Sigmoid + Mul (activation "Silu") ("/ConvActivationFusion")
//   - QDQ (first): DequantizeLinear(x) and DequantizeLinear(constant W) into MatMul / Conv, then
//     QuantizeLinear -> QLinearMatMul / QLinearConv (a Conv bias from DequantizeLinear of an int32
//     constant with scale x_scale * w_scale becomes its B); MatMul without the QuantizeLinear ->
//     com.microsoft::MatMulIntegerToFloat; Gemm -> com.microsoft::QGemm (engine/qdq_fusion.h).
//     x per tensor, W per tensor or per output channel. A DequantizeLinear with other readers
//     stays for them.
//   - quantize_dynamic's MatMulInteger -> Cast(float) -> Mul(a_scale * b_scale) [-> Add(bias)]
//     -> com.microsoft::MatMulIntegerToFloat ("/MatMulIntegerToFloatFusion")
// The intermediate between the pair must have no other reader and must not be a graph output.
#ifndef INFERD_ENGINE_REWRITES_H_
#define INFERD_ENGINE_REWRITES_H_

#include "absl/status/statusor.h"
#include "engine/derived_weights.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

inline constexpr char kMatMulAddSuffix[] = "/MatMulAddFusion";
inline constexpr char kMatMulScaleSuffix[] = "/MatMulScaleFusion";
inline constexpr char kConvReluSuffix[] = "/ConvReluFusion";
inline constexpr char kConvActivationSuffix[] = "/ConvActivationFusion";
inline constexpr char kConvBatchNormSuffix[] = "/ConvBatchNormFusion";
inline constexpr char kQdqSuffix[] = "/QdqFusion";
inline constexpr char kGeluSuffix[] = "/GeluFusion";
inline constexpr char kMatMulIntegerToFloatSuffix[] = "/MatMulIntegerToFloatFusion";

// Applies every fusion; returns how many fused nodes were made. New weights go into `derived`,
// which must outlive every kernel made from `graph`.
absl::StatusOr<int> ApplyFusions(Graph& graph, const KernelRegistry& registry,
                                 DerivedWeights& derived);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_REWRITES_H_

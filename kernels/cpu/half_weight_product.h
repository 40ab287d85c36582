// The kernel of MatMul, FusedMatMul and Gemm when their B input is a float16 or bfloat16 2-D weight
// left in half precision by the precision widening pass (A, the bias / C and the output float32):
// HalfWeightGemm (half_weight_gemm.h) for the product, then FusedMatMul's bias and activation or
// Gemm's beta * C. docs/half-precision.md "Half weights".
#ifndef INFERD_KERNELS_CPU_HALF_WEIGHT_PRODUCT_H_
#define INFERD_KERNELS_CPU_HALF_WEIGHT_PRODUCT_H_

#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

// `def` (a float32 MatMul, FusedMatMul or Gemm definition) with B declared a half-weight input:
// nodes whose B is float16 / bfloat16 get the half-weight kernel and its workspace estimate, the
// others `def`'s own.
engine::KernelDef WithHalfWeights(engine::KernelDef def);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_HALF_WEIGHT_PRODUCT_H_

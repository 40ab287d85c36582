// One registration function per kernel family (one .cc file each); RegisterCpuKernels calls them
// all. Internal to //kernels/cpu.
#ifndef INFERD_KERNELS_CPU_REGISTRATION_H_
#define INFERD_KERNELS_CPU_REGISTRATION_H_

#include "absl/status/status.h"
#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

absl::Status RegisterMatMulKernels(engine::KernelRegistry& registry);  // MatMul, FusedMatMul
absl::Status RegisterGemmKernels(engine::KernelRegistry& registry);    // Gemm
absl::Status RegisterConvKernels(engine::KernelRegistry& registry);    // Conv, FusedConv
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
absl::Status RegisterPoolKernels(engine::KernelRegistry& registry);
absl::Status RegisterConvTransposeKernels(engine::KernelRegistry& registry);  // ConvTranspose
absl::Status RegisterBinaryKernels(engine::KernelRegistry& registry);  // Add, Div, Pow, Mod..
absl::Status RegisterUnaryKernels(engine::KernelRegistry& registry);   // Exp, Relu, Clip..
absl::Status RegisterCompareLogicalKernels(engine::KernelRegistry& registry);  // Less, Where..
absl::Status RegisterCastKernels(engine::KernelRegistry& registry);            // Cast, CastLike
absl::Status RegisterVariadicKernels(engine::KernelRegistry& registry);   // Sum, Mean, Max, Min
absl::Status RegisterSoftmaxKernels(engine::KernelRegistry& registry);    // Softmax, Hardmax..
absl::Status RegisterLayerNormKernels(engine::KernelRegistry& registry);  // LayerNormalization
absl::Status RegisterNormKernels(engine::KernelRegistry& registry);       // BatchNorm, InstanceNorm
absl::Status RegisterReduceKernels(engine::KernelRegistry& registry);     // ReduceSum, ReduceMax..
absl::Status RegisterArgReduceKernels(engine::KernelRegistry& registry);  // ArgMax, ArgMin
absl::Status RegisterTopKKernels(engine::KernelRegistry& registry);       // TopK
absl::Status RegisterCumSumKernels(engine::KernelRegistry& registry);     // CumSum
absl::Status RegisterEinsumKernels(engine::KernelRegistry& registry);     // Einsum
absl::Status RegisterGatherKernels(engine::KernelRegistry& registry);     // Gather
absl::Status RegisterShapeKernels(engine::KernelRegistry& registry);      // Reshape, Concat
absl::Status RegisterTransposeKernels(engine::KernelRegistry& registry);  // Transpose
absl::Status RegisterMovementKernels(engine::KernelRegistry& registry);   // Slice, Pad, Resize..

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_REGISTRATION_H_

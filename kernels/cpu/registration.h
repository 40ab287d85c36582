// One registration function per kernel family (one .cc file each); RegisterCpuKernels calls them
// all. Internal to //kernels/cpu.
#ifndef INFERD_KERNELS_CPU_REGISTRATION_H_
#define INFERD_KERNELS_CPU_REGISTRATION_H_

#include "absl/status/status.h"
#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

absl::Status RegisterMatMulKernels(engine::KernelRegistry& registry);       // MatMul, FusedMatMul
absl::Status RegisterGemmKernels(engine::KernelRegistry& registry);         // Gemm
absl::Status RegisterConvKernels(engine::KernelRegistry& registry);         // Conv, FusedConv
absl::Status RegisterPoolKernels(engine::KernelRegistry& registry);         // MaxPool
absl::Status RegisterElementwiseKernels(engine::KernelRegistry& registry);  // Add, Mul, Relu
absl::Status RegisterSoftmaxKernels(engine::KernelRegistry& registry);      // Softmax
absl::Status RegisterLayerNormKernels(engine::KernelRegistry& registry);    // LayerNormalization
absl::Status RegisterGatherKernels(engine::KernelRegistry& registry);       // Gather
absl::Status RegisterShapeKernels(engine::KernelRegistry& registry);        // Reshape, Concat
absl::Status RegisterTransposeKernels(engine::KernelRegistry& registry);    // Transpose

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_REGISTRATION_H_

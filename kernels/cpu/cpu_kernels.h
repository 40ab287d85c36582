// The CPU kernels: oneDNN for MatMul, Gemm, Conv and MaxPool (and the com.inferd fusions
// FusedMatMul, FusedConv), own code for the elementwise, normalization and data-movement ops.
// Registration is explicit and happens once at start-up; the kernels' Compute is thread-safe.
//
// Example:
//   engine::KernelRegistry registry;
//   INFERD_RETURN_IF_ERROR(kernels::cpu::RegisterCpuKernels(registry));
#ifndef INFERD_KERNELS_CPU_CPU_KERNELS_H_
#define INFERD_KERNELS_CPU_CPU_KERNELS_H_

#include "absl/status/status.h"
#include "engine/kernel_registry.h"

namespace inferd::kernels::cpu {

// Registers every CPU kernel (device type "cpu"). Fails if one overlaps a definition already in
// `registry`.
absl::Status RegisterCpuKernels(engine::KernelRegistry& registry);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_CPU_KERNELS_H_

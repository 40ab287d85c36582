// The CUDA kernels (device kind "cuda"): Add, Sub, Mul, Div (float32, int32, int64, numpy
// broadcasting), Relu, Sigmoid, Tanh (float32), MatMul, Gemm (float32 on cuBLAS), Conv,
// ConvTranspose (float32 on cuDNN), MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool and
// BatchNormalization (float32, own kernels). Each runs
// on the stream of the CudaKernelContext it is given (engine/cuda_kernel_context.h) and reads and
// writes device memory only. Registration is explicit and happens once at start-up; Compute is
// thread-safe. Built only with --config=cuda.
//
// Example:
//   engine::KernelRegistry registry;
//   INFERD_RETURN_IF_ERROR(kernels::cpu::RegisterCpuKernels(registry));
//   INFERD_RETURN_IF_ERROR(kernels::cuda::RegisterCudaKernels(registry));
#ifndef INFERD_KERNELS_CUDA_CUDA_KERNELS_H_
#define INFERD_KERNELS_CUDA_CUDA_KERNELS_H_

#include "absl/status/status.h"
#include "engine/kernel_registry.h"

namespace inferd::kernels::cuda {

// Registers every CUDA kernel (device type "cuda"). Fails if one overlaps a definition already in
// `registry`.
absl::Status RegisterCudaKernels(engine::KernelRegistry& registry);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_CUDA_KERNELS_H_

// The CUDA kernel families' definition tables, one function per family (at the bottom of its
// .cc); cuda_kernels.cc registers them all. Internal to //kernels/cuda.
#ifndef INFERD_KERNELS_CUDA_REGISTRATION_H_
#define INFERD_KERNELS_CUDA_REGISTRATION_H_

#include <vector>

#include "engine/kernel_registry.h"

namespace inferd::kernels::cuda {

// The latest opset the kernels claim: the bound the CPU kernels use (kernels/cpu/kernel_util.h,
// kMaxOpset), so that a later opset that changes an operator is refused rather than misread.
inline constexpr int kMaxOpset = 22;

std::vector<engine::KernelDef> BinaryKernelDefs();     // binary_kernel.cc (and Pow)
std::vector<engine::KernelDef> UnaryKernelDefs();      // unary_kernel.cc (activations, Clip)
std::vector<engine::KernelDef> MatMulKernelDefs();     // matmul.cc: MatMul, Gemm
std::vector<engine::KernelDef> ConvKernelDefs();       // conv.cc: Conv, ConvTranspose (cuDNN)
std::vector<engine::KernelDef> PoolKernelDefs();       // pool_kernel.cc: Max/Average/Global pools
std::vector<engine::KernelDef> BatchNormKernelDefs();  // batch_norm_kernel.cc

// Softmax, norms, reductions, data movement and views (the kernels after MatMul / elementwise).
std::vector<engine::KernelDef> SoftmaxKernelDefs();    // softmax_kernel.cc: Softmax, LogSoftmax
std::vector<engine::KernelDef> LayerNormKernelDefs();  // layer_norm_kernel.cc (and fused forms)
std::vector<engine::KernelDef> ReduceKernelDefs();     // reduce_kernel.cc: Sum, Mean, Max, Min,
                                                       // ArgMax, ArgMin
std::vector<engine::KernelDef> MovementKernelDefs();   // movement_kernel.cc: Transpose, Concat,
                                                       // Split, Slice, Expand, Pad
std::vector<engine::KernelDef> SelectKernelDefs();     // select_kernel.cc: Gather, Cast, Where
std::vector<engine::KernelDef> ViewKernelDefs();       // view_kernels.cc: Reshape, Flatten,
                                                       // Squeeze, Unsqueeze, Identity

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_REGISTRATION_H_

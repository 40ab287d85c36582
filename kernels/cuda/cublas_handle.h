// cuBLAS handles for the CUDA kernels: one per (thread, device), created on first use, bound to
// the caller's stream on every call, destroyed when the thread ends. cuBLAS handles must not be
// used by two threads at once; a thread's own handle never is. cuBLAS allocates its own workspace
// with each handle (outside the arenas). Built only with --config=cuda.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(cublasHandle_t h, CublasHandleFor(device, stream));
//   INFERD_RETURN_IF_ERROR(CublasStatus(cublasSgemm(h, ...), "node 'mm'"));
#ifndef INFERD_KERNELS_CUDA_CUBLAS_HANDLE_H_
#define INFERD_KERNELS_CUDA_CUBLAS_HANDLE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::kernels::cuda {

// This thread's handle for `device`, bound to `stream`. The device becomes the thread's current
// device (cuBLAS works on the current one).
absl::StatusOr<cublasHandle_t> CublasHandleFor(int device, cudaStream_t stream);

// Whether MatMul and Gemm may use TF32 tensor cores (10-bit mantissa products, float32 sums):
// INFERD_CUDA_TF32=1 in the environment, read once per process. Off by default: full float32,
// as on the CPU. New handles take it as their math mode (CUBLAS_TF32_TENSOR_OP_MATH).
bool Tf32Enabled();
// How an INFERD_CUDA_TF32 value reads: "1", "true", "on", "yes" (any case) enable it.
bool ParseTf32(const char* value);

// OK for CUBLAS_STATUS_SUCCESS; otherwise "<what>: <cublas status name>: <description>",
// RESOURCE_EXHAUSTED for CUBLAS_STATUS_ALLOC_FAILED, INVALID_ARGUMENT for invalid values,
// INTERNAL for the rest.
absl::Status CublasStatus(cublasStatus_t status, absl::string_view what);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_CUBLAS_HANDLE_H_

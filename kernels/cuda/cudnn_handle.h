// cuDNN handles for the CUDA kernels: one per (thread, device), created on first use, bound to
// the caller's stream on every call, destroyed when the thread ends. A cuDNN handle must not be
// used by two threads at once; a thread's own handle never is. Built only with --config=cuda.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(cudnnHandle_t h, CudnnHandleFor(device, stream));
//   INFERD_RETURN_IF_ERROR(CudnnStatus(cudnnConvolutionForward(h, ...), "node 'conv'"));
#ifndef INFERD_KERNELS_CUDA_CUDNN_HANDLE_H_
#define INFERD_KERNELS_CUDA_CUDNN_HANDLE_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::kernels::cuda {

// This thread's handle for `device`, bound to `stream` (nullptr: the legacy default stream, for
// calls that enqueue nothing, such as the algorithm heuristics). The device becomes the thread's
// current device (cuDNN works on the current one). FAILED_PRECONDITION where there is no
// device.
absl::StatusOr<cudnnHandle_t> CudnnHandleFor(int device, cudaStream_t stream);

// OK for CUDNN_STATUS_SUCCESS; otherwise "<what>: <cudnn status string>" with a code a caller can
// act on, by the status's category: RESOURCE_EXHAUSTED for a failed allocation, INVALID_ARGUMENT
// for bad parameters, UNIMPLEMENTED for what cuDNN does not support, FAILED_PRECONDITION for an
// uninitialized library or a version mismatch, INTERNAL for the rest.
absl::Status CudnnStatus(cudnnStatus_t status, absl::string_view what);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_CUDNN_HANDLE_H_

// CudaKernelContext: what a CUDA kernel needs from the run it is part of, beside the
// KernelContext every kernel gets: the device and the stream its work goes on. The runtime of a
// CUDA run implements both interfaces on one object; a CUDA kernel finds this one with
// CudaContextOf(ctx) and enqueues everything on cuda_stream() (no synchronization of its own).
// The tensors such a context hands out (inputs, outputs, temporaries, workspaces) are device
// memory of cuda_device(). Built only with --config=cuda.
//
// Example (a kernel's Compute):
//   INFERD_ASSIGN_OR_RETURN(const CudaKernelContext* cuda, CudaContextOf(ctx, node_name_));
//   LaunchRelu(x->data<float>(), y->mutable_data<float>(), n, cuda->cuda_stream());
//   return CudaLaunchStatus(node_name_);
#ifndef INFERD_ENGINE_CUDA_KERNEL_CONTEXT_H_
#define INFERD_ENGINE_CUDA_KERNEL_CONTEXT_H_

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/kernel.h"

namespace inferd::engine {

class CudaKernelContext {
 public:
  virtual ~CudaKernelContext() = default;
  virtual int cuda_device() const = 0;
  virtual cudaStream_t cuda_stream() const = 0;
};

// The CudaKernelContext of `ctx`, or FAILED_PRECONDITION naming `node` when the kernel is run in
// a context without one (a host run).
absl::StatusOr<const CudaKernelContext*> CudaContextOf(const KernelContext& ctx,
                                                       absl::string_view node);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CUDA_KERNEL_CONTEXT_H_

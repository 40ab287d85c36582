#include "engine/cuda_kernel_context.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/device_runtime.h"

namespace inferd::engine {

absl::StatusOr<const CudaKernelContext*> CudaContextOf(const KernelContext& ctx,
                                                       absl::string_view node) {
  // The kernel harness's context is one itself; a session's run hands out its stream on the
  // step's device, which the CUDA runtime's streams implement (engine/cuda_device_runtime.h).
  const auto* cuda = dynamic_cast<const CudaKernelContext*>(&ctx);
  if (cuda == nullptr) cuda = dynamic_cast<const CudaKernelContext*>(ctx.device_stream());
  if (cuda == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("node '", node,
                     "': a CUDA kernel was run without a CUDA stream (the run has no CUDA "
                     "device context)"));
  }
  return cuda;
}

}  // namespace inferd::engine

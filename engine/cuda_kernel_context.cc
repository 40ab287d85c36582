#include "engine/cuda_kernel_context.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::engine {

absl::StatusOr<const CudaKernelContext*> CudaContextOf(const KernelContext& ctx,
                                                       absl::string_view node) {
  const auto* cuda = dynamic_cast<const CudaKernelContext*>(&ctx);
  if (cuda == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("node '", node,
                     "': a CUDA kernel was run without a CUDA stream (the run has no CUDA "
                     "device context)"));
  }
  return cuda;
}

}  // namespace inferd::engine

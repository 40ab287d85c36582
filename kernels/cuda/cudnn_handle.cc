#include "kernels/cuda/cudnn_handle.h"

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "kernels/cuda/thread_handles.h"

namespace inferd::kernels::cuda {

absl::StatusOr<cudnnHandle_t> CudnnHandleFor(int device, cudaStream_t stream) {
  thread_local ThreadHandles<cudnnHandle_t, &cudnnDestroy> handles;
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  INFERD_ASSIGN_OR_RETURN(
      cudnnHandle_t handle, handles.Get(device, [device]() -> absl::StatusOr<cudnnHandle_t> {
        cudnnHandle_t h = nullptr;
        INFERD_RETURN_IF_ERROR(
            CudnnStatus(cudnnCreate(&h), absl::StrCat("cudnnCreate on cuda:", device)));
        return h;
      }));
  INFERD_RETURN_IF_ERROR(CudnnStatus(cudnnSetStream(handle, stream), "cudnnSetStream"));
  return handle;
}

absl::Status CudnnStatus(cudnnStatus_t status, absl::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(what, ": ", cudnnGetErrorString(status), " (cuDNN status ", status, ")");
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_BAD_PARAM:
      return absl::InvalidArgumentError(message);
    case CUDNN_STATUS_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    case CUDNN_STATUS_NOT_INITIALIZED:  // category 1000: initialization and versions
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace inferd::kernels::cuda

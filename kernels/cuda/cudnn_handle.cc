#include "kernels/cuda/cudnn_handle.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"

namespace inferd::kernels::cuda {
namespace {

// The calling thread's handles, by device; destroyed with the thread.
class ThreadHandles {
 public:
  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    for (auto& [device, handle] : handles_) {
      if (cudaSetDevice(device) == cudaSuccess) cudnnDestroy(handle);
    }
  }

  absl::StatusOr<cudnnHandle_t> Get(int device) {
    auto it = handles_.find(device);
    if (it != handles_.end()) return it->second;
    cudnnHandle_t handle = nullptr;
    INFERD_RETURN_IF_ERROR(
        CudnnStatus(cudnnCreate(&handle), absl::StrCat("cudnnCreate on cuda:", device)));
    handles_.emplace(device, handle);
    return handle;
  }

 private:
  std::map<int, cudnnHandle_t> handles_;
};

}  // namespace

absl::StatusOr<cudnnHandle_t> CudnnHandleFor(int device, cudaStream_t stream) {
  thread_local ThreadHandles handles;
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  INFERD_ASSIGN_OR_RETURN(cudnnHandle_t handle, handles.Get(device));
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

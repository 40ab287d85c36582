#include "kernels/cuda/cublas_handle.h"

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
      if (cudaSetDevice(device) == cudaSuccess) cublasDestroy(handle);
    }
  }

  absl::StatusOr<cublasHandle_t> Get(int device) {
    auto it = handles_.find(device);
    if (it != handles_.end()) return it->second;
    cublasHandle_t handle = nullptr;
    INFERD_RETURN_IF_ERROR(
        CublasStatus(cublasCreate(&handle), absl::StrCat("cublasCreate on cuda:", device)));
    handles_.emplace(device, handle);
    return handle;
  }

 private:
  std::map<int, cublasHandle_t> handles_;
};

}  // namespace

absl::StatusOr<cublasHandle_t> CublasHandleFor(int device, cudaStream_t stream) {
  thread_local ThreadHandles handles;
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  INFERD_ASSIGN_OR_RETURN(cublasHandle_t handle, handles.Get(device));
  INFERD_RETURN_IF_ERROR(CublasStatus(cublasSetStream(handle, stream), "cublasSetStream"));
  return handle;
}

absl::Status CublasStatus(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(what, ": ", cublasGetStatusName(status), ": ", cublasGetStatusString(status));
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::InvalidArgumentError(message);
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace inferd::kernels::cuda

#include "kernels/cuda/cublas_handle.h"

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "kernels/cuda/thread_handles.h"

namespace inferd::kernels::cuda {

absl::StatusOr<cublasHandle_t> CublasHandleFor(int device, cudaStream_t stream) {
  thread_local ThreadHandles<cublasHandle_t, &cublasDestroy> handles;
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  INFERD_ASSIGN_OR_RETURN(
      cublasHandle_t handle, handles.Get(device, [device]() -> absl::StatusOr<cublasHandle_t> {
        cublasHandle_t h = nullptr;
        INFERD_RETURN_IF_ERROR(
            CublasStatus(cublasCreate(&h), absl::StrCat("cublasCreate on cuda:", device)));
        if (Tf32Enabled()) {
          absl::Status st = CublasStatus(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH),
                                         "cublasSetMathMode (TF32)");
          if (!st.ok()) {
            cublasDestroy(h);
            return st;
          }
        }
        return h;
      }));
  INFERD_RETURN_IF_ERROR(CublasStatus(cublasSetStream(handle, stream), "cublasSetStream"));
  return handle;
}

bool ParseTf32(const char* value) {
  if (value == nullptr) return false;
  const std::string v = absl::AsciiStrToLower(value);
  return v == "1" || v == "true" || v == "on" || v == "yes";
}

bool Tf32Enabled() {
  static const bool enabled = ParseTf32(std::getenv("INFERD_CUDA_TF32"));
  return enabled;
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

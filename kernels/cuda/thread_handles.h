// ThreadHandles<Handle, kDestroy>: a CUDA library's handles (cuBLAS, cuDNN) for one thread, one
// per device, made on first use and destroyed with the thread (declare it thread_local). Such
// handles must not be used by two threads at once; a thread's own never are. Not thread-safe
// itself: one instance per thread. Built only with --config=cuda.
//
// Example:
//   thread_local ThreadHandles<cublasHandle_t, &cublasDestroy> handles;
//   INFERD_ASSIGN_OR_RETURN(cublasHandle_t h, handles.Get(device, [] { ... cublasCreate ... }));
#ifndef INFERD_KERNELS_CUDA_THREAD_HANDLES_H_
#define INFERD_KERNELS_CUDA_THREAD_HANDLES_H_

#include <cuda_runtime_api.h>

#include <map>

#include "absl/status/statusor.h"

namespace inferd::kernels::cuda {

template <typename Handle, auto kDestroy>
class ThreadHandles {
 public:
  ThreadHandles() = default;
  ThreadHandles(const ThreadHandles&) = delete;
  ThreadHandles& operator=(const ThreadHandles&) = delete;
  ~ThreadHandles() {
    for (auto& [device, handle] : handles_) {
      if (cudaSetDevice(device) == cudaSuccess) kDestroy(handle);
    }
  }

  // The handle for `device` (the current device: the caller sets it first), made by `create`
  // (returning absl::StatusOr<Handle>) the first time.
  template <typename CreateFn>
  absl::StatusOr<Handle> Get(int device, CreateFn&& create) {
    auto it = handles_.find(device);
    if (it != handles_.end()) return it->second;
    absl::StatusOr<Handle> handle = create();
    if (handle.ok()) handles_.emplace(device, *handle);
    return handle;
  }

 private:
  std::map<int, Handle> handles_;
};

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_THREAD_HANDLES_H_

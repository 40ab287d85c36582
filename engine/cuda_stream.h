// CudaStream and CudaEvent: owned CUDA streams and events, destroyed exactly once (move-only
// RAII). A CUDA run owns one stream; kernels enqueue their work on it; events order one stream
// after another (a boundary copy after the kernel that made its value) without a device-wide
// synchronization. Built only with --config=cuda.
//
// Example:
//   INFERD_ASSIGN_OR_RETURN(CudaStream compute, CudaStream::Create(0));
//   INFERD_ASSIGN_OR_RETURN(CudaStream copies, CudaStream::Create(0));
//   INFERD_ASSIGN_OR_RETURN(CudaEvent made, CudaEvent::Create(0));
//   ... kernels on compute.get() ...
//   INFERD_RETURN_IF_ERROR(made.Record(compute));
//   INFERD_RETURN_IF_ERROR(copies.Wait(made));  // copies' later work runs after the kernels
//   INFERD_RETURN_IF_ERROR(copies.Synchronize());
//
// Thread-compatible: one thread uses a stream or event at a time; CUDA itself allows more.
#ifndef INFERD_ENGINE_CUDA_STREAM_H_
#define INFERD_ENGINE_CUDA_STREAM_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace inferd::engine {

class CudaEvent;

class CudaStream {
 public:
  // A non-blocking stream (it does not wait for the legacy default stream) on device `device`;
  // FAILED_PRECONDITION when the device does not exist.
  static absl::StatusOr<CudaStream> Create(int device);

  CudaStream() = default;
  ~CudaStream() { Reset(); }
  CudaStream(CudaStream&& other) noexcept { *this = std::move(other); }
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  int device() const { return device_; }
  bool valid() const { return stream_ != nullptr; }

  // Later work on this stream waits until `event`'s recorded work is done.
  absl::Status Wait(const CudaEvent& event) const;
  // Blocks the calling thread until all work enqueued so far is done; reports its errors.
  absl::Status Synchronize() const;

 private:
  void Reset();
  cudaStream_t stream_ = nullptr;
  int device_ = -1;
};

class CudaEvent {
 public:
  // `timing`: the event records a time, for ElapsedMillis (otherwise cheaper to record).
  static absl::StatusOr<CudaEvent> Create(int device, bool timing = false);

  CudaEvent() = default;
  ~CudaEvent() { Reset(); }
  CudaEvent(CudaEvent&& other) noexcept { *this = std::move(other); }
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  bool valid() const { return event_ != nullptr; }

  // Captures the work enqueued on `stream` so far.
  absl::Status Record(const CudaStream& stream);
  // Whether the captured work is done (never blocks).
  absl::StatusOr<bool> Done() const;
  absl::Status Synchronize() const;
  // Milliseconds between two recorded timing events, once `end` is done.
  static absl::StatusOr<float> ElapsedMillis(const CudaEvent& start, const CudaEvent& end);

 private:
  void Reset();
  cudaEvent_t event_ = nullptr;
  int device_ = -1;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CUDA_STREAM_H_

#include "engine/cuda_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"

namespace inferd::engine {
namespace {

// Runs `fn` with `device` current on this thread, restoring the previous device.
template <typename Fn>
absl::Status OnDevice(int device, Fn fn) {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  INFERD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  absl::Status status = fn();
  if (previous >= 0 && previous != device) cudaSetDevice(previous);
  return status;
}

}  // namespace

absl::StatusOr<CudaStream> CudaStream::Create(int device) {
  INFERD_RETURN_IF_ERROR(CheckCudaDevice(device));
  CudaStream s;
  INFERD_RETURN_IF_ERROR(OnDevice(device, [&] {
    return CudaStatus(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking),
                      absl::StrCat("cudaStreamCreateWithFlags on cuda:", device));
  }));
  s.device_ = device;
  return s;
}

CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    Reset();
    stream_ = std::exchange(other.stream_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void CudaStream::Reset() {
  // Destroying a stream with work pending is allowed: the work completes, then it is released.
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  stream_ = nullptr;
  device_ = -1;
}

absl::Status CudaStream::Wait(const CudaEvent& event) const {
  return CudaStatus(cudaStreamWaitEvent(stream_, event.get(), 0), "cudaStreamWaitEvent");
}

absl::Status CudaStream::Synchronize() const {
  return CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::StatusOr<CudaEvent> CudaEvent::Create(int device, bool timing) {
  INFERD_RETURN_IF_ERROR(CheckCudaDevice(device));
  CudaEvent e;
  INFERD_RETURN_IF_ERROR(OnDevice(device, [&] {
    return CudaStatus(
        cudaEventCreateWithFlags(&e.event_, timing ? cudaEventDefault : cudaEventDisableTiming),
        absl::StrCat("cudaEventCreateWithFlags on cuda:", device));
  }));
  e.device_ = device;
  return e;
}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    Reset();
    event_ = std::exchange(other.event_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void CudaEvent::Reset() {
  if (event_ != nullptr) cudaEventDestroy(event_);
  event_ = nullptr;
  device_ = -1;
}

absl::Status CudaEvent::Record(const CudaStream& stream) {
  return CudaStatus(cudaEventRecord(event_, stream.get()), "cudaEventRecord");
}

absl::StatusOr<bool> CudaEvent::Done() const {
  const cudaError_t error = cudaEventQuery(event_);
  if (error == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: do not leave it for the next launch check
    return false;
  }
  INFERD_RETURN_IF_ERROR(CudaStatus(error, "cudaEventQuery"));
  return true;
}

absl::Status CudaEvent::Synchronize() const {
  return CudaStatus(cudaEventSynchronize(event_), "cudaEventSynchronize");
}

absl::StatusOr<float> CudaEvent::ElapsedMillis(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  INFERD_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

}  // namespace inferd::engine

// DeviceRuntime: what the engine needs from a device whose memory the host does not read
// directly (a GPU): its memory, whether it is there, copies between it and the host, and one
// ordered queue of work (a stream) per concurrent run. Host devices ("cpu:N") have none. The
// engine sees only this interface; the CUDA implementation is engine/cuda_device_runtime.h
// (built with --config=cuda), and engine/testing/fake_device.h is a host-memory stand-in that
// lets the device paths of the engine (partition fallback, uploads, boundary copies, stream
// order) be tested on a machine without a GPU.
//
// Ordering contract, the same as CUDA streams': work enqueued on one DeviceStream (copies,
// kernels) runs in enqueue order; the host sees a device's results only after Synchronize (or
// a copy to the host followed by Synchronize). The engine never synchronizes a whole device:
// it synchronizes the run's own stream where the host is about to read (a device-to-host copy
// at a partition boundary or of a graph output) and once at the end of each run, before the
// run's device buffers go back to the shared arenas.
//
// Example (the engine's DeviceCopy kernel, host to device):
//   DeviceStream* stream = ctx.device_stream();
//   INFERD_RETURN_IF_ERROR(stream->CopyToDevice(out->raw_mutable_data(), in->raw_data(), n));
#ifndef INFERD_ENGINE_DEVICE_RUNTIME_H_
#define INFERD_ENGINE_DEVICE_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/kernel_registry.h"
#include "memory/system_allocator.h"

namespace inferd::engine {

// One run's queue of work on one device. Used by one thread at a time (the run's).
class DeviceStream {
 public:
  virtual ~DeviceStream() = default;

  // The device ordinal ("cuda:1" -> 1).
  virtual int ordinal() const = 0;
  // Makes the device current for the calling thread (before a step of this device runs).
  virtual absl::Status Enter() = 0;
  // Host memory -> device memory, in stream order. Returns once `src` may be reused by the host
  // (its bytes have been read or staged); `dst` is written in stream order.
  virtual absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) = 0;
  // Device memory -> host memory, in stream order: `dst` holds the bytes after Synchronize.
  virtual absl::Status CopyToHost(void* dst, const void* src, size_t bytes) = 0;
  // Device memory -> device memory of the same device, in stream order.
  virtual absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) = 0;
  // Blocks the calling thread until everything enqueued so far has run; reports the first error
  // of that work (a kernel fault) as a status.
  virtual absl::Status Synchronize() = 0;
};

struct DeviceMemoryInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

// A device kind's runtime ("cuda"): shared by every session that uses such devices; thread-safe.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // The kind of device it runs (never kCpu).
  virtual DeviceKind kind() const = 0;
  // OK when device `ordinal` exists and can be used; otherwise why not ("no CUDA device: ...").
  virtual absl::Status CheckPresent(int ordinal) const = 0;
  // How many devices of this kind the machine has (0 when the driver finds none).
  virtual int DeviceCount() const = 0;
  // Free and total memory of device `ordinal` now (free: the budget of a device configured
  // without one; both: the server's device memory gauges).
  virtual absl::StatusOr<DeviceMemoryInfo> MemoryInfo(int ordinal) const = 0;
  // The system allocator of device `device` ("cuda:1"), under its two arenas.
  virtual absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeAllocator(
      const std::string& device, int ordinal) const = 0;
  // The system allocator for the host IOArena of a session that uses such a device (page-locked
  // memory, so that device-to-host copies of outputs are DMA), named `device` ("cpu:0").
  virtual absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeHostIoAllocator(
      const std::string& device) const = 0;
  // A new stream on device `ordinal`.
  virtual absl::StatusOr<std::unique_ptr<DeviceStream>> MakeStream(int ordinal) const = 0;
  // Host -> device, complete when it returns (weights at load).
  virtual absl::Status Upload(int ordinal, void* dst, const void* src, size_t bytes) const = 0;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DEVICE_RUNTIME_H_

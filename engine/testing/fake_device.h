// A fake GPU, for testing the engine's device paths on a machine without one (a mock: what it
// cannot show is said below). FakeDeviceRuntime is a "cuda"-kind DeviceRuntime whose device
// memory is host memory from its own allocator:
//   - every live device range is known, so the fake kernels check that what they are handed is
//     device memory (a weight that was not uploaded, a graph input that was not copied, a host
//     input that was, all fail the run), and device memory starts poisoned (0xCD);
//   - a stream runs device work at once but writes device-to-host copies only at Synchronize:
//     a host read the engine did not order after a synchronization sees the destination's old
//     bytes, and the outputs differ from a host run;
//   - host-to-device copies stage the source when enqueued (CUDA's rule for pageable memory).
// RegisterFakeDeviceKernels registers, for "cuda", a kernel per listed op that runs the CPU
// kernel of the same node on the device buffers after those checks (so the outputs can be
// compared with a CPU run exactly); Reshape's shape is a host input, as a CUDA kernel's is.
// Not modelled: asynchronous device work (a second run's stream racing the first on a reused
// buffer), peer copies, device faults.
//
// Example:
//   auto fake = std::make_shared<FakeDeviceRuntime>(/*devices=*/1, /*capacity=*/64 << 20);
//   KernelRegistry registry;
//   RegisterCpuKernels(registry);
//   RegisterFakeDeviceKernels(registry, {"MatMul", "Add", "Relu"});
//   SessionOptions options;
//   options.device_runtimes = {fake};
//   options.partition.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
#ifndef INFERD_ENGINE_TESTING_FAKE_DEVICE_H_
#define INFERD_ENGINE_TESTING_FAKE_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/device_runtime.h"
#include "engine/kernel_registry.h"

namespace inferd::engine::testing {

struct FakeDeviceCounters {
  std::atomic<uint64_t> device_allocations{0};   // system allocations of device memory
  std::atomic<uint64_t> host_io_allocations{0};  // of the "page-locked" host IOArena memory
  std::atomic<uint64_t> uploads{0};              // weights, at load
  std::atomic<uint64_t> to_device{0}, to_host{0}, on_device{0};  // copies on streams
  std::atomic<uint64_t> synchronizations{0};
  std::atomic<uint64_t> kernels{0};  // fake kernels run
  std::atomic<uint64_t> streams{0};  // made
};

class FakeDeviceRuntime final : public DeviceRuntime,
                                public std::enable_shared_from_this<FakeDeviceRuntime> {
 public:
  // `devices` fake GPUs (cuda:0 ... cuda:devices-1) of `capacity` bytes each.
  FakeDeviceRuntime(int devices, uint64_t capacity) : devices_(devices), capacity_(capacity) {}

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  absl::Status CheckPresent(int ordinal) const override;
  int DeviceCount() const override { return devices_; }
  absl::StatusOr<DeviceMemoryInfo> MemoryInfo(int ordinal) const override;
  absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeAllocator(
      const std::string& device, int ordinal) const override;
  absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> MakeHostIoAllocator(
      const std::string& device) const override;
  absl::StatusOr<std::unique_ptr<DeviceStream>> MakeStream(int ordinal) const override;
  absl::Status Upload(int ordinal, void* dst, const void* src, size_t bytes) const override;

  // Whether [p, p + bytes) lies inside one live allocation of device memory.
  bool IsDeviceMemory(const void* p, size_t bytes) const;
  FakeDeviceCounters& counters() const { return counters_; }

  // Used by the fake allocator.
  void AddRange(int ordinal, const void* p, size_t bytes) const;
  void RemoveRange(int ordinal, const void* p) const;

 private:
  const int devices_;
  const uint64_t capacity_;
  mutable std::mutex mu_;
  mutable std::map<uintptr_t, std::pair<size_t, int>> ranges_;  // start -> (bytes, ordinal)
  mutable std::vector<uint64_t> in_use_;                        // by ordinal
  mutable FakeDeviceCounters counters_;
};

// Registers, for DeviceKind::kCuda, a fake kernel for each op of `ops` (ONNX domain) wrapping
// each CPU definition of that op in `registry` (which must hold the CPU kernels). The runtime
// whose memory the kernels check is the one of the stream the run hands them.
absl::Status RegisterFakeDeviceKernels(KernelRegistry& registry,
                                       const std::vector<std::string>& ops);

}  // namespace inferd::engine::testing

#endif  // INFERD_ENGINE_TESTING_FAKE_DEVICE_H_

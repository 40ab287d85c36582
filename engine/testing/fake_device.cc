#include "engine/testing/fake_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"
#include "engine/kernel.h"

namespace inferd::engine::testing {
namespace {

constexpr unsigned char kPoison = 0xCD;

// Device memory: host memory the runtime knows the ranges of, poisoned when allocated, within
// the device's capacity.
class FakeDeviceAllocator final : public memory::SystemAllocator {
 public:
  FakeDeviceAllocator(std::string device, std::shared_ptr<const FakeDeviceRuntime> runtime,
                      int ordinal)
      : SystemAllocator(std::move(device)), runtime_(std::move(runtime)), ordinal_(ordinal) {}

 protected:
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override {
    absl::StatusOr<DeviceMemoryInfo> memory = runtime_->MemoryInfo(ordinal_);
    if (!memory.ok()) return memory.status();
    if (bytes > memory->free_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "fake ", device(), ": ", bytes, " bytes asked, ", memory->free_bytes, " free"));
    }
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, std::max(rounded, alignment));
    if (p == nullptr) return absl::ResourceExhaustedError("fake device: host allocation failed");
    std::memset(p, kPoison, bytes);
    runtime_->AddRange(ordinal_, p, bytes);
    runtime_->counters().device_allocations++;
    return p;
  }
  void DoFree(void* ptr, size_t) override {
    runtime_->RemoveRange(ordinal_, ptr);
    std::free(ptr);
  }

 private:
  const std::shared_ptr<const FakeDeviceRuntime> runtime_;
  const int ordinal_;
};

// "Page-locked" host memory: host memory, counted.
class FakePinnedAllocator final : public memory::SystemAllocator {
 public:
  FakePinnedAllocator(std::string device, std::shared_ptr<const FakeDeviceRuntime> runtime)
      : SystemAllocator(std::move(device)), runtime_(std::move(runtime)) {}

 protected:
  absl::StatusOr<void*> DoAllocate(size_t bytes, size_t alignment) override {
    const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, std::max(rounded, alignment));
    if (p == nullptr) return absl::ResourceExhaustedError("fake pinned: host allocation failed");
    runtime_->counters().host_io_allocations++;
    return p;
  }
  void DoFree(void* ptr, size_t) override { std::free(ptr); }

 private:
  const std::shared_ptr<const FakeDeviceRuntime> runtime_;
};

// Device work runs at once; device-to-host copies land at Synchronize (see the header).
class FakeStream final : public DeviceStream {
 public:
  FakeStream(std::shared_ptr<const FakeDeviceRuntime> runtime, int ordinal)
      : runtime_(std::move(runtime)), ordinal_(ordinal) {}
  ~FakeStream() override { RunPending(); }

  int ordinal() const override { return ordinal_; }
  absl::Status Enter() override { return absl::OkStatus(); }

  absl::Status CopyToDevice(void* dst, const void* src, size_t bytes) override {
    if (!runtime_->IsDeviceMemory(dst, bytes) || runtime_->IsDeviceMemory(src, bytes)) {
      return absl::InternalError("fake device: host-to-device copy not from host to device");
    }
    std::memcpy(dst, src, bytes);  // staged at once: the source may be reused on return
    runtime_->counters().to_device++;
    return absl::OkStatus();
  }
  absl::Status CopyToHost(void* dst, const void* src, size_t bytes) override {
    if (!runtime_->IsDeviceMemory(src, bytes) || runtime_->IsDeviceMemory(dst, bytes)) {
      return absl::InternalError("fake device: device-to-host copy not from device to host");
    }
    pending_.push_back([dst, src, bytes] { std::memcpy(dst, src, bytes); });
    runtime_->counters().to_host++;
    return absl::OkStatus();
  }
  absl::Status CopyOnDevice(void* dst, const void* src, size_t bytes) override {
    if (!runtime_->IsDeviceMemory(dst, bytes) || !runtime_->IsDeviceMemory(src, bytes)) {
      return absl::InternalError("fake device: device copy not within device memory");
    }
    std::memmove(dst, src, bytes);
    runtime_->counters().on_device++;
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    RunPending();
    runtime_->counters().synchronizations++;
    return absl::OkStatus();
  }

  const FakeDeviceRuntime& runtime() const { return *runtime_; }

 private:
  void RunPending() {
    for (auto& work : pending_) work();
    pending_.clear();
  }

  const std::shared_ptr<const FakeDeviceRuntime> runtime_;
  const int ordinal_;
  std::vector<std::function<void()>> pending_;
};

// A CPU kernel run on device buffers, after checking that each input is where a device kernel
// reads it: device memory, or host memory for its host inputs.
class FakeDeviceKernel final : public OpKernel {
 public:
  FakeDeviceKernel(std::unique_ptr<OpKernel> cpu, std::vector<int> host_inputs, std::string node)
      : cpu_(std::move(cpu)), host_inputs_(std::move(host_inputs)), node_(std::move(node)) {}

  absl::Status Compute(KernelContext& ctx) const override {
    auto* stream = dynamic_cast<FakeStream*>(ctx.device_stream());
    if (stream == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("node '", node_, "': a fake device kernel was run without a device stream"));
    }
    const FakeDeviceRuntime& runtime = stream->runtime();
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr || !t->is_tensor() || t->bytes() == 0) continue;
      const bool host =
          std::find(host_inputs_.begin(), host_inputs_.end(), i) != host_inputs_.end();
      const bool on_device = runtime.IsDeviceMemory(t->raw_data(), t->bytes());
      if (host == on_device) {
        return absl::InternalError(
            absl::StrCat("node '", node_, "': input ", i,
                         host ? " is a host input but is device memory" : " is not device memory"));
      }
    }
    runtime.counters().kernels++;
    return cpu_->Compute(ctx);
  }
  std::vector<WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    return cpu_->DeclareWorkspaceRequirements(input_shapes);
  }
  std::vector<std::pair<int, int>> OutputAliases() const override { return cpu_->OutputAliases(); }
  size_t PersistentBytes() const override { return cpu_->PersistentBytes(); }

 private:
  const std::unique_ptr<OpKernel> cpu_;
  const std::vector<int> host_inputs_;
  const std::string node_;
};

}  // namespace

absl::Status FakeDeviceRuntime::CheckPresent(int ordinal) const {
  if (ordinal < 0 || ordinal >= devices_) {
    return absl::FailedPreconditionError(absl::StrCat("no CUDA device: fake runtime has ", devices_,
                                                      " devices, asked for ", ordinal));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceMemoryInfo> FakeDeviceRuntime::MemoryInfo(int ordinal) const {
  if (absl::Status st = CheckPresent(ordinal); !st.ok()) return st;
  std::lock_guard<std::mutex> lock(mu_);
  if (in_use_.size() <= static_cast<size_t>(ordinal)) in_use_.resize(ordinal + 1, 0);
  return DeviceMemoryInfo{capacity_ - in_use_[ordinal], capacity_};
}

absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> FakeDeviceRuntime::MakeAllocator(
    const std::string& device, int ordinal) const {
  if (absl::Status st = CheckPresent(ordinal); !st.ok()) return st;
  return std::make_shared<FakeDeviceAllocator>(device, shared_from_this(), ordinal);
}

absl::StatusOr<std::shared_ptr<memory::SystemAllocator>> FakeDeviceRuntime::MakeHostIoAllocator(
    const std::string& device) const {
  return std::make_shared<FakePinnedAllocator>(device, shared_from_this());
}

absl::StatusOr<std::unique_ptr<DeviceStream>> FakeDeviceRuntime::MakeStream(int ordinal) const {
  if (absl::Status st = CheckPresent(ordinal); !st.ok()) return st;
  counters_.streams++;
  return std::make_unique<FakeStream>(shared_from_this(), ordinal);
}

absl::Status FakeDeviceRuntime::Upload(int ordinal, void* dst, const void* src,
                                       size_t bytes) const {
  if (!IsDeviceMemory(dst, bytes)) return absl::InternalError("fake upload: not device memory");
  std::memcpy(dst, src, bytes);
  counters_.uploads++;
  return absl::OkStatus();
}

bool FakeDeviceRuntime::IsDeviceMemory(const void* p, size_t bytes) const {
  const auto start = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ranges_.upper_bound(start);
  if (it == ranges_.begin()) return false;
  --it;
  return start >= it->first && start + bytes <= it->first + it->second.first;
}

void FakeDeviceRuntime::AddRange(int ordinal, const void* p, size_t bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  ranges_[reinterpret_cast<uintptr_t>(p)] = {bytes, ordinal};
  if (in_use_.size() <= static_cast<size_t>(ordinal)) in_use_.resize(ordinal + 1, 0);
  in_use_[ordinal] += bytes;
}

void FakeDeviceRuntime::RemoveRange(int ordinal, const void* p) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(p));
  if (it == ranges_.end()) return;
  in_use_[ordinal] -= it->second.first;
  ranges_.erase(it);
}

absl::Status RegisterFakeDeviceKernels(KernelRegistry& registry,
                                       const std::vector<std::string>& ops) {
  std::vector<KernelDef> fakes;
  for (const KernelDef* def : registry.Defs()) {
    if (def->device_type != DeviceKind::kCpu || def->domain != kOnnxDomain ||
        std::find(ops.begin(), ops.end(), def->op_type) == ops.end()) {
      continue;
    }
    KernelDef fake = *def;
    fake.device_type = DeviceKind::kCuda;
    if (def->op_type == "Reshape") fake.host_inputs = {1};  // as a CUDA Reshape reads its shape
    const KernelFactory cpu_create = def->create;
    const std::vector<int> host_inputs = fake.host_inputs;
    fake.create = [cpu_create, host_inputs](
                      const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
      absl::StatusOr<std::unique_ptr<OpKernel>> cpu = cpu_create(info);
      if (!cpu.ok()) return cpu.status();
      return std::make_unique<FakeDeviceKernel>(*std::move(cpu), host_inputs, info.node_name());
    };
    fakes.push_back(std::move(fake));
  }
  for (KernelDef& def : fakes) {
    if (absl::Status st = registry.Register(std::move(def)); !st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace inferd::engine::testing

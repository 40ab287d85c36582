// RunCudaKernel (tests and benchmarks only): the device side of the kernel harness
// (engine/testing/kernel_tester.h). A CUDA kernel created by KernelTester
// (DeviceType(DeviceKind::kCuda)) runs once on device 0: inputs are uploaded into a device
// ExecutionArena, Compute runs with a KernelContext that is also a CudaKernelContext (one stream;
// outputs, temporaries and workspaces in device arenas), the stream is synchronized and the outputs
// are downloaded. Fails with FAILED_PRECONDITION "no CUDA device: ..." where there is none.
//
// Example:
//   KernelTester t("Add", 14);
//   t.Input(a).Input(b);
//   auto cpu = t.Create(CpuRegistry());
//   auto gpu = t.DeviceType(DeviceKind::kCuda).Create(CudaRegistry());
//   auto want = RunKernel(**cpu, {&a, &b}, 1, 1);
//   auto got = RunCudaKernel(**gpu, {&a, &b}, 1);
#ifndef INFERD_KERNELS_CUDA_TESTING_CUDA_KERNEL_RUNNER_H_
#define INFERD_KERNELS_CUDA_TESTING_CUDA_KERNEL_RUNNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cuda_stream.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/testing/kernel_tester.h"
#include "memory/cuda_system_allocator.h"
#include "memory/execution_arena.h"

namespace inferd::kernels::cuda::testing {

// The registry with every CUDA kernel (RegisterCudaKernels), built once.
const engine::KernelRegistry& CudaRegistry();

class DeviceContext;

// One CUDA kernel on device 0 with its inputs uploaded once, run any number of times on one
// stream: each Enqueue is one Compute, not waited for. Outputs and temporaries come from a
// device ExecutionArena, so after the first run they reuse its buffers (stream order makes that
// safe: a later run's writes follow an earlier run's reads). For timings and RunCudaKernel.
class CudaKernelRun {
 public:
  // nullptr inputs are absent; the inputs listed in `host_inputs` (KernelDef::host_inputs) stay
  // in host memory, as the engine binds them. FAILED_PRECONDITION "no CUDA device: ..." without a
  // GPU.
  static absl::StatusOr<std::unique_ptr<CudaKernelRun>> Create(
      const engine::OpKernel& kernel, const std::vector<const engine::testing::TestTensor*>& inputs,
      int num_outputs, const std::vector<int>& host_inputs = {});
  ~CudaKernelRun();

  absl::Status Enqueue();
  absl::Status Synchronize() { return stream_.Synchronize(); }
  const engine::CudaStream& stream() const { return stream_; }
  // The last run's outputs in slot order, copied to the host (synchronizes first).
  absl::StatusOr<std::vector<engine::testing::TestTensor>> Download();
  // cudaMalloc calls so far (the arena's system allocations).
  uint64_t device_allocations() const { return gpu_->stats().allocations; }

 private:
  CudaKernelRun(const engine::OpKernel& kernel, std::shared_ptr<memory::CudaSystemAllocator> gpu,
                engine::CudaStream stream);

  const engine::OpKernel& kernel_;
  std::shared_ptr<memory::CudaSystemAllocator> gpu_;
  engine::CudaStream stream_;
  std::unique_ptr<memory::ExecutionArena> arena_;
  std::vector<engine::Tensor> inputs_;
  std::map<int, memory::AllocationHandle> workspaces_;
  std::unique_ptr<DeviceContext> ctx_;
};

// Creates, runs once and downloads: the outputs in slot order, copied to the host.
absl::StatusOr<std::vector<engine::testing::TestTensor>> RunCudaKernel(
    const engine::OpKernel& kernel, const std::vector<const engine::testing::TestTensor*>& inputs,
    int num_outputs, const std::vector<int>& host_inputs = {});

// The node `tester` describes (with `inputs`, which it was given too), run by the CPU kernel and
// by the CUDA kernel (its definition's host_inputs bound in host memory): each one's outputs.
struct CpuAndCuda {
  std::vector<engine::testing::TestTensor> cpu, cuda;
};
absl::StatusOr<CpuAndCuda> RunOnCpuAndCuda(
    engine::testing::KernelTester& tester,
    const std::vector<const engine::testing::TestTensor*>& inputs, int num_outputs = 1);

// max |a[i] - b[i]| (infinity when the sizes differ; NaN counts as infinitely wrong).
float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);

// The float comparisons of one test: ExpectNear EXPECTs output 0 of the CUDA kernel within
// `tolerance` of the CPU kernel's (same shape) and keeps the worst error; Record writes it and the
// number of comparisons as the test's properties "worst_abs_error" and "comparisons" (in the
// gtest XML, where tests/gpu/run.sh reads them).
class CpuComparison {
 public:
  void ExpectNear(const CpuAndCuda& out, float tolerance);
  void Record() const;

 private:
  float worst_ = 0;
  int comparisons_ = 0;
};

// `count` values uniform in [lo, hi) from `seed` (tests draw a fresh seed per run from
// std::random_device and print it with SCOPED_TRACE).
std::vector<float> RandomFloats(size_t count, float lo, float hi, uint32_t seed);

}  // namespace inferd::kernels::cuda::testing

#endif  // INFERD_KERNELS_CUDA_TESTING_CUDA_KERNEL_RUNNER_H_

#include "kernels/cuda/testing/cuda_kernel_runner.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/status_macros.h"
#include "engine/cuda_kernel_context.h"
#include "engine/cuda_stream.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cuda/cuda_kernels.h"
#include "memory/cuda_system_allocator.h"
#include "memory/execution_arena.h"

namespace inferd::kernels::cuda::testing {

using engine::DataType;
using engine::Shape;
using engine::Tensor;
using engine::testing::TestTensor;

// The KernelContext of a CudaKernelRun: a CudaKernelContext too, with device buffers.
class DeviceContext final : public engine::KernelContext, public engine::CudaKernelContext {
 public:
  DeviceContext(std::vector<const Tensor*> inputs, int num_outputs, memory::ExecutionArena& arena,
                const engine::CudaStream& stream,
                std::map<int, memory::AllocationHandle>& workspaces)
      : inputs_(std::move(inputs)),
        outputs_(num_outputs),
        arena_(arena),
        stream_(stream),
        workspaces_(workspaces) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override {
    return i >= 0 && i < num_inputs() ? inputs_[i] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int slot) const override { return slot >= 0 && slot < num_outputs(); }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("no output slot ", slot));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor t, MakeTemporaryTensor(type, shape));
    outputs_[slot] = std::move(t);
    return &outputs_[slot];
  }
  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) return absl::InvalidArgumentError("alias of an absent input");
    INFERD_ASSIGN_OR_RETURN(Tensor * out, MakeOutputTensor(slot, in->dtype(), shape));
    INFERD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out->raw_mutable_data(), in->raw_data(),
                                                in->bytes(), cudaMemcpyDeviceToDevice,
                                                stream_.get()));
    return out;
  }
  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    const size_t bytes = static_cast<size_t>(shape.NumElements()) * engine::ElementSize(type);
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, arena_.Allocate(bytes));
    return Tensor::Owned(type, shape, std::move(h));
  }
  absl::StatusOr<void*> GetWorkspace(int slot_id) override {
    auto it = workspaces_.find(slot_id);
    if (it == workspaces_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("workspace ", slot_id, " was not declared"));
    }
    return it->second.data();
  }
  engine::ThreadPool& threads() override { return pool_; }

  int cuda_device() const override { return stream_.device(); }
  cudaStream_t cuda_stream() const override { return stream_.get(); }

  std::vector<Tensor>& outputs() { return outputs_; }
  // Before a run: the last run's outputs go back to the arena (reused in stream order).
  void ClearOutputs() {
    for (Tensor& t : outputs_) t.Reset();
  }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
  memory::ExecutionArena& arena_;
  const engine::CudaStream& stream_;
  std::map<int, memory::AllocationHandle>& workspaces_;
  engine::ThreadPool pool_{1};
};

const engine::KernelRegistry& CudaRegistry() {
  static const engine::KernelRegistry* registry = [] {
    auto* r = new engine::KernelRegistry;
    const absl::Status s = RegisterCudaKernels(*r);
    if (!s.ok()) std::abort();  // a test-only registry: overlapping definitions are a bug
    return r;
  }();
  return *registry;
}

CudaKernelRun::CudaKernelRun(const engine::OpKernel& kernel,
                             std::shared_ptr<memory::CudaSystemAllocator> gpu,
                             engine::CudaStream stream)
    : kernel_(kernel),
      gpu_(std::move(gpu)),
      stream_(std::move(stream)),
      arena_(std::make_unique<memory::ExecutionArena>(gpu_)) {}

// The context (and its outputs) goes before the arena, and the arena before the stream.
CudaKernelRun::~CudaKernelRun() {
  if (stream_.valid()) stream_.Synchronize().IgnoreError();
  ctx_.reset();
  workspaces_.clear();
  inputs_.clear();
  arena_.reset();
}

absl::StatusOr<std::unique_ptr<CudaKernelRun>> CudaKernelRun::Create(
    const engine::OpKernel& kernel, const std::vector<const TestTensor*>& inputs, int num_outputs,
    const std::vector<int>& host_inputs) {
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<memory::CudaSystemAllocator> gpu,
                          memory::CudaSystemAllocator::Create(0));
  INFERD_ASSIGN_OR_RETURN(engine::CudaStream stream, engine::CudaStream::Create(0));
  std::unique_ptr<CudaKernelRun> run(new CudaKernelRun(kernel, std::move(gpu), std::move(stream)));

  // pass 1: upload the inputs (host inputs stay where they are: borrowed views).
  run->inputs_.reserve(inputs.size());
  std::vector<const Tensor*> ptrs;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TestTensor* t = inputs[i];
    if (t == nullptr) {
      run->inputs_.emplace_back();
      shapes.emplace_back();
      continue;
    }
    if (std::find(host_inputs.begin(), host_inputs.end(), static_cast<int>(i)) !=
        host_inputs.end()) {
      run->inputs_.push_back(Tensor::Borrowed(t->type, t->shape, t->bytes.data()));
      shapes.push_back(t->shape);
      continue;
    }
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, run->arena_->Allocate(t->bytes.size()));
    if (!t->bytes.empty()) {
      INFERD_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(h.data(), t->bytes.data(), t->bytes.size(), cudaMemcpyHostToDevice));
    }
    run->inputs_.push_back(Tensor::Owned(t->type, t->shape, std::move(h)));
    shapes.push_back(t->shape);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    ptrs.push_back(inputs[i] == nullptr ? nullptr : &run->inputs_[i]);
  }
  // pass 2: the declared workspaces, once.
  for (const engine::WorkspaceRequirement& w : kernel.DeclareWorkspaceRequirements(shapes)) {
    INFERD_ASSIGN_OR_RETURN(run->workspaces_[w.slot_id], run->arena_->Allocate(w.bytes));
  }
  run->ctx_ = std::make_unique<DeviceContext>(std::move(ptrs), num_outputs, *run->arena_,
                                              run->stream_, run->workspaces_);
  return run;
}

absl::Status CudaKernelRun::Enqueue() {
  ctx_->ClearOutputs();
  return kernel_.Compute(*ctx_);
}

absl::StatusOr<std::vector<TestTensor>> CudaKernelRun::Download() {
  INFERD_RETURN_IF_ERROR(stream_.Synchronize());
  std::vector<TestTensor> out;
  for (const Tensor& t : ctx_->outputs()) {
    TestTensor o;
    o.type = t.dtype();
    o.shape = t.shape();
    o.bytes.resize(t.empty() ? 0 : t.bytes());
    if (!o.bytes.empty()) {
      INFERD_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(o.bytes.data(), t.raw_data(), o.bytes.size(), cudaMemcpyDeviceToHost));
    }
    out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<std::vector<TestTensor>> RunCudaKernel(const engine::OpKernel& kernel,
                                                      const std::vector<const TestTensor*>& inputs,
                                                      int num_outputs,
                                                      const std::vector<int>& host_inputs) {
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<CudaKernelRun> run,
                          CudaKernelRun::Create(kernel, inputs, num_outputs, host_inputs));
  INFERD_RETURN_IF_ERROR(run->Enqueue());
  return run->Download();
}

absl::StatusOr<CpuAndCuda> RunOnCpuAndCuda(engine::testing::KernelTester& tester,
                                           const std::vector<const TestTensor*>& inputs,
                                           int num_outputs) {
  CpuAndCuda out;
  tester.DeviceType(engine::DeviceKind::kCpu);
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> cpu,
                          tester.Create(cpu::testing::CpuRegistry()));
  INFERD_ASSIGN_OR_RETURN(out.cpu, engine::testing::RunKernel(*cpu, inputs, num_outputs, 1));
  tester.DeviceType(engine::DeviceKind::kCuda);
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> gpu, tester.Create(CudaRegistry()));
  const engine::KernelDef* def = tester.Find(CudaRegistry());
  const std::vector<int> host_inputs = def != nullptr ? def->host_inputs : std::vector<int>{};
  INFERD_ASSIGN_OR_RETURN(out.cuda, RunCudaKernel(*gpu, inputs, num_outputs, host_inputs));
  return out;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float d = std::fabs(a[i] - b[i]);
    if (!(d <= worst)) worst = d;  // NaN counts as worse than anything
  }
  return worst;
}

void CpuComparison::ExpectNear(const CpuAndCuda& out, float tolerance) {
  ASSERT_FALSE(out.cuda.empty());
  ASSERT_FALSE(out.cpu.empty());
  EXPECT_EQ(out.cuda[0].shape, out.cpu[0].shape);
  const std::vector<float> cuda = out.cuda[0].values<float>();
  const std::vector<float> cpu = out.cpu[0].values<float>();
  cpu::testing::ExpectNear(cuda, cpu, tolerance);
  const float d = MaxAbsDiff(cuda, cpu);
  if (!(d <= worst_)) worst_ = d;
  ++comparisons_;
}

void CpuComparison::Record() const {
  ::testing::Test::RecordProperty("worst_abs_error", absl::StrCat(worst_));
  ::testing::Test::RecordProperty("comparisons", comparisons_);
}

std::vector<float> RandomFloats(size_t count, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace inferd::kernels::cuda::testing

// Helpers for the kernel benchmark programs and the allocation tests of //kernels/cpu (testonly).
//
// BenchContext is a minimal KernelContext that runs one kernel repeatedly: inputs are borrowed;
// outputs, temporaries and declared workspaces live in buffers kept across runs, so once the
// first runs have sized them a run allocates nothing here. Not thread-safe: one run at a time.
//
// Example:
//   BenchContext ctx(inputs, /*outputs=*/1, pool);
//   ctx.Declare(kernel->DeclareWorkspaceRequirements(shapes));
//   for (...) {
//     ctx.NextRun();
//     absl::Status s = kernel->Compute(ctx);
//   }
#ifndef INFERD_KERNELS_CPU_TESTING_BENCH_SUPPORT_H_
#define INFERD_KERNELS_CPU_TESTING_BENCH_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/kernel.h"
#include "engine/tensor.h"
#include "engine/testing/kernel_tester.h"
#include "engine/thread_pool.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu::testing {

class BenchContext final : public engine::KernelContext {
 public:
  BenchContext(std::vector<const engine::Tensor*> inputs, int outputs, engine::ThreadPool& pool);

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const engine::Tensor* input(int i) const override;
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int slot) const override { return slot >= 0 && slot < num_outputs(); }
  absl::StatusOr<engine::Tensor*> MakeOutputTensor(int slot, engine::DataType type,
                                                   const engine::Shape& shape) override;
  // A view of the input's bytes.
  absl::StatusOr<engine::Tensor*> MakeOutputAlias(int slot, int input_index,
                                                  const engine::Shape& shape) override;
  absl::StatusOr<engine::Tensor> MakeTemporaryTensor(engine::DataType type,
                                                     const engine::Shape& shape) override;
  // NOT_FOUND for a slot that Declare did not size.
  absl::StatusOr<void*> GetWorkspace(int slot_id) override;
  engine::ThreadPool& threads() override { return pool_; }

  // Sizes the workspaces the kernel declared.
  void Declare(const std::vector<engine::WorkspaceRequirement>& reqs);
  // Before each run: the previous run's temporaries are dead (their buffers are reused).
  void NextRun() { next_temp_ = 0; }
  // Bytes of the last run's outputs.
  size_t OutputBytes() const;

 private:
  std::vector<const engine::Tensor*> inputs_;
  std::vector<engine::Tensor> outputs_;
  std::vector<std::vector<unsigned char>> output_storage_;  // per output slot
  std::deque<std::vector<unsigned char>> temps_;
  size_t next_temp_ = 0;
  std::map<int, std::vector<unsigned char>> workspaces_;
  engine::ThreadPool& pool_;
};

// Seconds per call of `run` (returning absl::Status): the best of `batches` batches of at least
// 0.1 s after 3 warm-up calls. With one thread the clock is the calling thread's CPU time (which
// other load on the machine barely disturbs), with more, wall time. An error from `run` is
// returned as it is.
absl::StatusOr<double> SecondsPerCall(int threads, absl::FunctionRef<absl::Status()> run,
                                      int batches = 5);

// Node attributes: the kernel tester's builders.
using engine::testing::IntAttr;
using engine::testing::IntsAttr;
using engine::testing::StringAttr;

}  // namespace inferd::kernels::cpu::testing

#endif  // INFERD_KERNELS_CPU_TESTING_BENCH_SUPPORT_H_

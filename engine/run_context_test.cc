#include "engine/run_context.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "memory/system_allocator.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

// Y = X + 1 (float32), in a buffer the runtime context gives for output slot 0.
class AddOne : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    absl::StatusOr<Tensor*> y = ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape());
    if (!y.ok()) return y.status();
    for (int64_t i = 0; i < x->NumElements(); ++i) {
      (*y)->mutable_data<float>()[i] = x->data<float>()[i] + 1;
    }
    return absl::OkStatus();
  }
};

class RunContextTest : public ::testing::Test {
 protected:
  RunContextTest() {
    KernelDef def;
    def.op_type = "AddOne";
    def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
      return std::make_unique<AddOne>();
    };
    EXPECT_TRUE(registry_.Register(std::move(def)).ok());
    // x[4] -> A -> a -> B -> b (graph output)
    b_.Input("x", {4});
    b_.Node("A", "AddOne", {"x"}, {"a"}, {4});
    b_.Node("B", "AddOne", {"a"}, {"b"}, {4});
    b_.Output("b");
    graph_ = &b_.graph();
    auto plan = ExecutionPlan::Build(*graph_, registry_, {"cpu:0"}, 1);
    EXPECT_TRUE(plan.ok()) << plan.status();
    plan_ = std::move(*plan);
    arenas_.device = "cpu:0";
    arenas_.system = std::make_shared<memory::CpuSystemAllocator>("cpu:0");
    arenas_.execution = std::make_unique<memory::ExecutionArena>(arenas_.system);
    arenas_.io = std::make_unique<memory::IOArena>(arenas_.system);
  }
  RunEnv Env(const RunOptions* options) {
    return RunEnv{&threads_, &misses_, options, plan_.get()};
  }

  KernelRegistry registry_;
  GraphBuilder b_;
  Graph* graph_ = nullptr;
  std::unique_ptr<ExecutionPlan> plan_;
  DeviceArenas arenas_;
  ThreadPool threads_{1};
  std::atomic<uint64_t> misses_{0};
  std::vector<float> x_ = {0, 1, 2, 3};
};

TEST_F(RunContextTest, OutputsLandInTheIOArenaIntermediatesInTheBlock) {
  RunSlot slot(*plan_, {&arenas_});
  const int x = graph_->FindValue("x"), b = graph_->FindValue("b");
  slot.values[x] = Tensor::Borrowed(DataType::kFloat32, Shape{4}, x_.data());
  const RunOptions options;
  ASSERT_TRUE(ExecutePlan(Env(&options), slot).ok());
  const Tensor& out = slot.values[b];
  ASSERT_EQ(out.NumElements(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.data<float>()[i], x_[i] + 2);
  EXPECT_TRUE(out.owns_buffer());
  EXPECT_EQ(arenas_.io->Stats().live_bytes, 64u);  // b, one 64-byte-aligned buffer
  ASSERT_EQ(slot.blocks.size(), 1u);               // the static block for a
  EXPECT_TRUE(slot.blocks[0].valid());
  EXPECT_EQ(misses_.load(), 0u);
  slot.Clear();
  EXPECT_EQ(arenas_.io->Stats().live_bytes, 0u);
}

TEST_F(RunContextTest, CancelledRunStopsWithCancelled) {
  RunSlot slot(*plan_, {&arenas_});
  slot.values[graph_->FindValue("x")] = Tensor::Borrowed(DataType::kFloat32, Shape{4}, x_.data());
  RunOptions options;
  options.cancelled = [] { return true; };
  EXPECT_EQ(ExecutePlan(Env(&options), slot).code(), absl::StatusCode::kCancelled);
  slot.Clear();
  EXPECT_EQ(arenas_.io->Stats().live_bytes, 0u);
}

}  // namespace
}  // namespace inferd::engine

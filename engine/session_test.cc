// Session tests with small test kernels (domain "test.inferd"): output-slot routing, workspaces,
// aliasing, run slots, input validation, output lifetime, pre-allocation.
#include "engine/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/copy.h"
#include "engine/testing/model_builder.h"
#include "memory/fake_system_allocator.h"
#include "memory/testing/arena_inspector.h"

namespace inferd::engine {
namespace {

using testing::ModelBuilder;
constexpr char kTest[] = "test.inferd";

// Pointers the kernels saw, to check which arena each allocation came from.
struct Recorder {
  std::mutex mu;
  std::vector<const void*> slot0, slot1, workspace;
  void Clear() {
    std::lock_guard<std::mutex> l(mu);
    slot0.clear();
    slot1.clear();
    workspace.clear();
  }
};
Recorder g_rec;
std::atomic<bool> g_block{false};
std::atomic<int> g_blocked{0};

// Split2: Y0 = X + 1, Y1 = X + 2; declares one 256-byte workspace (slot 7) and fills it.
class Split2 : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    auto y0 = ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape());
    if (!y0.ok()) return y0.status();
    auto y1 = ctx.MakeOutputTensor(1, DataType::kFloat32, x->shape());
    if (!y1.ok()) return y1.status();
    auto ws = ctx.GetWorkspace(7);
    if (!ws.ok()) return ws.status();
    std::memset(*ws, 0xAB, 256);
    for (int64_t i = 0; i < x->NumElements(); ++i) {
      (*y0)->mutable_data<float>()[i] = x->data<float>()[i] + 1;
      (*y1)->mutable_data<float>()[i] = x->data<float>()[i] + 2;
    }
    std::lock_guard<std::mutex> l(g_rec.mu);
    g_rec.slot0.push_back((*y0)->raw_data());
    g_rec.slot1.push_back((*y1)->raw_data());
    g_rec.workspace.push_back(*ws);
    return absl::OkStatus();
  }
  std::vector<WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape>) const override {
    return {{7, 256}};
  }
};

// Copy: Y = X * 10. Blocks while g_block is set (for run-slot tests).
class Copy : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    if (g_block.load()) {
      g_blocked++;
      while (g_block.load()) std::this_thread::yield();
    }
    const Tensor* x = ctx.input(0);
    auto y = ctx.MakeOutputTensor(0, DataType::kFloat32, x->shape());
    if (!y.ok()) return y.status();
    for (int64_t i = 0; i < x->NumElements(); ++i) {
      (*y)->mutable_data<float>()[i] = x->data<float>()[i] * 10;
    }
    return absl::OkStatus();
  }
};

// Flat: a view op: Y = X seen as 1-D.
class Flat : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    auto y = ctx.MakeOutputAlias(0, 0, Shape{x->NumElements()});
    if (!y.ok()) return y.status();
    std::lock_guard<std::mutex> l(g_rec.mu);
    g_rec.slot0.push_back((*y)->raw_data());
    return absl::OkStatus();
  }
  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }
};

template <typename K>
KernelDef TestDef(const std::string& op) {
  KernelDef d;
  d.domain = kTest;
  d.op_type = op;
  d.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<K>();
  };
  return d;
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() {
    EXPECT_TRUE(registry_.Register(TestDef<Split2>("Split2")).ok());
    EXPECT_TRUE(registry_.Register(TestDef<Copy>("Copy")).ok());
    EXPECT_TRUE(registry_.Register(TestDef<Flat>("Flat")).ok());
    g_rec.Clear();
  }

  // x[2,3] -> Split2 -> (a, b); `first_is_output` picks which slot is a graph output; the other
  // goes through Copy to a second graph output. `static_shapes` declares every shape.
  std::shared_ptr<const Model> MixedOutputModel(bool first_is_output, bool static_shapes) {
    ModelBuilder b(13);
    b.ImportDomain(kTest, 1);
    const std::vector<int64_t> dims =
        static_shapes ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{-1, 3};
    b.Input("x", DataType::kFloat32, dims);
    b.Node("Split2", {"x"}, {"a", "b"}, "split", kTest);
    const std::string out = first_is_output ? "a" : "b", mid = first_is_output ? "b" : "a";
    b.Node("Copy", {mid}, {"c"}, "copy", kTest);
    b.Output(out, DataType::kFloat32, dims);
    b.Output("c", DataType::kFloat32, dims);
    b.ValueInfo(mid, DataType::kFloat32, dims);
    auto m = Model::Parse(b.Serialize(), "");
    EXPECT_TRUE(m.ok()) << m.status();
    return *m;
  }

  std::unique_ptr<Session> Make(std::shared_ptr<const Model> m, SessionOptions opts = {}) {
    auto s = Session::Create(std::move(m), opts, registry_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  absl::StatusOr<std::vector<OutputTensor>> RunX(Session& s, const std::vector<float>& x,
                                                 Shape shape = Shape{2, 3}) {
    InputTensor in{"x", DataType::kFloat32, shape, x.data(), x.size() * sizeof(float)};
    return s.Run({in});
  }

  KernelRegistry registry_;
  std::vector<float> x_ = {0, 1, 2, 3, 4, 5};
};

// Output-slot routing: a node with a declared graph output and an intermediate, in both orders,
// plus a workspace: each allocation's arena is checked.
TEST_F(SessionTest, RoutesEachOutputSlotToItsArenaInBothOrders) {
  for (bool first_is_output : {true, false}) {
    for (bool static_shapes : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << "first_is_output=" << first_is_output << " static=" << static_shapes);
      g_rec.Clear();
      auto s = Make(MixedOutputModel(first_is_output, static_shapes));
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->plan().is_static(), static_shapes);
      auto out = RunX(*s, x_);
      ASSERT_TRUE(out.ok()) << out.status();
      const memory::ExecutionArena& exec = *s->devices()[0].execution;
      const memory::IOArena& io = *s->devices()[0].io;
      const void* declared = first_is_output ? g_rec.slot0[0] : g_rec.slot1[0];
      const void* intermediate = first_is_output ? g_rec.slot1[0] : g_rec.slot0[0];
      EXPECT_TRUE(memory::testing::HoldsPointer(io, declared));
      EXPECT_FALSE(memory::testing::HoldsPointer(exec, declared));
      EXPECT_TRUE(memory::testing::HoldsPointer(exec, intermediate));
      EXPECT_FALSE(memory::testing::HoldsPointer(io, intermediate));
      EXPECT_TRUE(memory::testing::HoldsPointer(exec, g_rec.workspace[0]));
      EXPECT_FALSE(memory::testing::HoldsPointer(io, g_rec.workspace[0]));
      // Outputs are IOArena handles, with the right values.
      ASSERT_EQ(out->size(), 2u);
      EXPECT_EQ((*out)[0].buffer.data(), declared);
      EXPECT_EQ((*out)[0].buffer.arena_kind(), memory::ArenaKind::kIO);
      const float add = first_is_output ? 1 : 2, mid_add = first_is_output ? 2 : 1;
      EXPECT_EQ(static_cast<const float*>((*out)[0].buffer.data())[5], 5 + add);
      EXPECT_EQ(static_cast<const float*>((*out)[1].buffer.data())[5], (5 + mid_add) * 10);
    }
  }
}

TEST_F(SessionTest, OutputsOutliveLaterRunsOtherShapesAndTheSession) {
  auto s = Make(MixedOutputModel(true, false));
  auto first = RunX(*s, x_);
  ASSERT_TRUE(first.ok());
  std::vector<float> other(12, 100.f);
  auto second = RunX(*s, other, Shape{4, 3});
  ASSERT_TRUE(second.ok()) << second.status();
  auto third = RunX(*s, x_);
  ASSERT_TRUE(third.ok());
  EXPECT_NE((*third)[0].buffer.data(), (*first)[0].buffer.data());  // the first is still pinned
  s.reset();
  const float* a = static_cast<const float*>((*first)[0].buffer.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a[i], x_[i] + 1);
  EXPECT_EQ(static_cast<const float*>((*second)[1].buffer.data())[11], 1020.f);
}

TEST_F(SessionTest, SecondRunWithTheSameShapesMakesNoSystemAllocation) {
  for (bool static_shapes : {true, false}) {
    auto s = Make(MixedOutputModel(true, static_shapes));
    ASSERT_TRUE(RunX(*s, x_).ok());
    const auto e0 = s->devices()[0].execution->Stats(), i0 = s->devices()[0].io->Stats();
    for (int k = 0; k < 5; ++k) ASSERT_TRUE(RunX(*s, x_).ok());
    const auto e1 = s->devices()[0].execution->Stats(), i1 = s->devices()[0].io->Stats();
    EXPECT_EQ(e1.system_allocations, e0.system_allocations) << static_shapes;
    EXPECT_EQ(i1.system_allocations, i0.system_allocations) << static_shapes;
    EXPECT_EQ(e1.system_frees, e0.system_frees);
    EXPECT_EQ(e1.live_bytes, 0u);
    EXPECT_EQ(i1.live_bytes, 0u);
  }
}

TEST_F(SessionTest, ViewOpsAliasInsteadOfCopying) {
  ModelBuilder b(13);
  b.ImportDomain(kTest, 1);
  b.Input("x", DataType::kFloat32, {2, 3});
  b.Node("Copy", {"x"}, {"m"}, "copy", kTest);
  b.Node("Flat", {"m"}, {"f"}, "flat", kTest);
  b.Node("Copy", {"f"}, {"y"}, "copy2", kTest);
  b.Node("Flat", {"y"}, {"z"}, "flat2", kTest);  // a view of y that is itself the graph output
  b.ValueInfo("m", DataType::kFloat32, {2, 3});
  b.ValueInfo("f", DataType::kFloat32, {6});
  b.ValueInfo("y", DataType::kFloat32, {6});
  b.Output("z", DataType::kFloat32, {6});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  auto s = Make(*m);
  const uint64_t copied = PayloadBytesCopied();
  auto out = RunX(*s, x_);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(PayloadBytesCopied(), copied);
  EXPECT_EQ((*out)[0].shape, Shape{6});
  EXPECT_EQ(static_cast<const float*>((*out)[0].buffer.data())[5], 500.f);
  // y's buffer was made in the IOArena so that its view z can be returned without a copy.
  EXPECT_EQ((*out)[0].buffer.data(), g_rec.slot0[1]);
  EXPECT_TRUE(memory::testing::HoldsPointer(*s->devices()[0].io, g_rec.slot0[1]));
}

TEST_F(SessionTest, InputValidationNamesTheProblem) {
  auto s = Make(MixedOutputModel(true, true));
  auto expect = [&](std::vector<InputTensor> inputs, const std::string& needle) {
    auto r = s->Run(inputs);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status();
  };
  const size_t bytes = x_.size() * 4;
  expect({}, "'x' is missing");
  expect({{"y", DataType::kFloat32, Shape{2, 3}, x_.data(), bytes}}, "unknown input 'y'");
  expect({{"x", DataType::kInt32, Shape{2, 3}, x_.data(), bytes}}, "expected float32, got int32");
  expect({{"x", DataType::kFloat32, Shape{3, 2}, x_.data(), bytes}}, "expected shape [2,3]");
  expect({{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), bytes - 4}}, "needs 24 bytes, got 20");
  InputTensor ok{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), bytes};
  expect({ok, ok}, "given twice");
  std::vector<std::string> wrong = {"nope"};
  EXPECT_FALSE(s->Run({ok}, wrong).ok());
  EXPECT_TRUE(s->Run({ok}).ok());  // and the session still serves
}

TEST_F(SessionTest, MisalignedInputsAreStagedAndCounted) {
  auto s = Make(MixedOutputModel(true, true));
  std::vector<unsigned char> raw(x_.size() * 4 + 1);
  std::memcpy(raw.data() + 1, x_.data(), x_.size() * 4);
  InputTensor in{"x", DataType::kFloat32, Shape{2, 3}, raw.data() + 1, x_.size() * 4};
  auto out = s->Run({in});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<const float*>((*out)[0].buffer.data())[5], 6.f);
  EXPECT_EQ(s->stats().input_bytes_staged, 24u);
  ASSERT_TRUE(RunX(*s, x_).ok());
  EXPECT_EQ(s->stats().input_bytes_borrowed, 24u);
}

TEST_F(SessionTest, SelectsRequestedOutputs) {
  auto s = Make(MixedOutputModel(true, true));
  InputTensor in{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), 24};
  std::vector<std::string> names = {"c"};
  auto out = s->Run({in}, names);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "c");
  EXPECT_EQ(s->devices()[0].io->Stats().live_bytes, 64u);  // the unrequested output went back
}

TEST_F(SessionTest, BusyRunSlotsWaitOrFailFast) {
  for (bool fail_fast : {true, false}) {
    SessionOptions opts;
    opts.max_concurrent_runs = 1;
    opts.fail_fast_when_busy = fail_fast;
    auto s = Make(MixedOutputModel(true, true), opts);
    g_blocked = 0;
    g_block = true;
    std::thread first([&] { EXPECT_TRUE(RunX(*s, x_).ok()); });
    while (g_blocked.load() == 0) std::this_thread::yield();
    if (fail_fast) {
      auto busy = RunX(*s, x_);
      EXPECT_EQ(busy.status().code(), absl::StatusCode::kFailedPrecondition);
      g_block = false;
    } else {
      std::thread second([&] { EXPECT_TRUE(RunX(*s, x_).ok()); });
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      g_block = false;
      second.join();
    }
    first.join();
  }
}

TEST_F(SessionTest, CancelledRunsStopBetweenSteps) {
  auto s = Make(MixedOutputModel(true, true));
  InputTensor in{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), 24};
  RunOptions opts;
  opts.cancelled = [] { return true; };
  auto r = s->Run({in}, {}, opts);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(s->devices()[0].io->Stats().live_bytes, 0u);
  EXPECT_EQ(s->devices()[0].execution->Stats().live_bytes, 0u);
}

TEST_F(SessionTest, PreAllocatedModelsCannotRunOutOfMemoryInRun) {
  auto fake = std::make_shared<memory::FakeSystemAllocator>("cpu:0");
  SessionOptions opts;
  opts.pre_allocate = true;
  opts.max_concurrent_runs = 2;
  opts.allocator_factory = [&](const std::string&) { return fake; };
  auto s = Make(MixedOutputModel(true, true), opts);
  ASSERT_NE(s, nullptr);
  const auto stats = s->devices()[0].execution->Stats();
  EXPECT_EQ(stats.live_buffers, 2u);  // one block per concurrent run
  fake->SetFailAll(true);             // from now on the system has no memory
  for (int k = 0; k < 10; ++k) {
    auto out = RunX(*s, x_);
    ASSERT_TRUE(out.ok()) << out.status();
  }
}

TEST_F(SessionTest, PreAllocateRefusesDynamicModelsAndReportsSizes) {
  SessionOptions opts;
  opts.pre_allocate = true;
  auto dynamic = Session::Create(MixedOutputModel(true, false), opts, registry_);
  EXPECT_EQ(dynamic.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(dynamic.status().message().find("fixed_input_shapes"), std::string::npos);
  auto fake = std::make_shared<memory::FakeSystemAllocator>("cpu:0");
  fake->SetFailAll(true);
  opts.allocator_factory = [&](const std::string&) { return fake; };
  auto no_memory = Session::Create(MixedOutputModel(true, true), opts, registry_);
  EXPECT_EQ(no_memory.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(no_memory.status().message().find("bytes per run"), std::string::npos)
      << no_memory.status();
}

// Adds the branch attribute `name` to the If `node`: a chain of `copies` Copy nodes from the
// outer-scope value `from` (none: the branch returns `from` as is). With `typed`, every value of
// the branch is declared float [2, 3]; without, the branch output has no shape.
void AddCopyBranch(onnx::NodeProto& node, const std::string& name, const std::string& from,
                   int copies, bool typed) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* g = a->mutable_g();
  g->set_name(name);
  auto declare = [&](onnx::ValueInfoProto* vi, const std::string& value) {
    vi->set_name(value);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    if (!typed) return;
    t->mutable_shape()->add_dim()->set_dim_value(2);
    t->mutable_shape()->add_dim()->set_dim_value(3);
  };
  std::string last = from;
  for (int i = 0; i < copies; ++i) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Copy");
    n->set_domain(kTest);
    n->set_name(absl::StrCat(name, "/copy", i));
    n->add_input(last);
    last = absl::StrCat(name, "_z", i);
    n->add_output(last);
    if (i + 1 < copies && typed) declare(g->add_value_info(), last);
  }
  declare(g->add_output(), last);
}

// x -> Copy -> m -> If(cond) whose branches are `then_copies` / `else_copies` Copy nodes from m
// (typed or not, see AddCopyBranch). The If output y is the graph output, or with `post` an
// intermediate (declared float [2, 3]) feeding one more Copy whose output "out" is.
std::shared_ptr<const Model> IfModel(int then_copies, int else_copies, bool post,
                                     bool typed_branches = true) {
  ModelBuilder b(13);
  b.ImportDomain(kTest, 1);
  b.Input("x", DataType::kFloat32, {2, 3});
  b.Input("cond", DataType::kBool, {});
  b.Node("Copy", {"x"}, {"m"}, "pre", kTest);
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"y"}, "if");
  AddCopyBranch(node, "then_branch", "m", then_copies, typed_branches);
  AddCopyBranch(node, "else_branch", "m", else_copies, typed_branches);
  b.ValueInfo("m", DataType::kFloat32, {2, 3});
  if (post) {
    b.ValueInfo("y", DataType::kFloat32, {2, 3});
    b.Node("Copy", {"y"}, {"out"}, "post", kTest);
  }
  b.Output(post ? "out" : "y", DataType::kFloat32, {2, 3});
  absl::StatusOr<std::shared_ptr<const Model>> m = Model::Parse(b.Serialize(), "");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : nullptr;
}

// If: the chosen branch reads outer-scope values; a branch output computed inside is handed to
// the node's output without a copy, an outer value returned as is gets copied.
TEST_F(SessionTest, IfRunsTheChosenBranchWithOuterScopeValues) {
  std::shared_ptr<const Model> m = IfModel(1, 0, /*post=*/false);
  ASSERT_NE(m, nullptr);
  auto s = Make(m);
  ASSERT_NE(s, nullptr);
  for (bool c : {true, false, true}) {
    const uint8_t cond = c;
    std::vector<InputTensor> in = {{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), 24},
                                   {"cond", DataType::kBool, Shape{}, &cond, 1}};
    const uint64_t copied = PayloadBytesCopied();
    auto out = s->Run(in);
    ASSERT_TRUE(out.ok()) << out.status();
    const float* y = static_cast<const float*>((*out)[0].buffer.data());
    EXPECT_EQ(y[5], c ? 500.f : 50.f);
    EXPECT_EQ((*out)[0].buffer.arena_kind(), memory::ArenaKind::kIO);
    EXPECT_EQ(PayloadBytesCopied() - copied, c ? 0u : 24u);
  }
  EXPECT_EQ(s->devices()[0].execution->Stats().live_bytes, 0u);
}

// If whose output is an intermediate, under pre_allocate: the branches' blocks and the output
// they hand over are allocated at load, so with the system out of memory both branches still
// run; the computed branch's output reaches the node without a copy.
TEST_F(SessionTest, PreAllocateCoversIfBranches) {
  // then has an intermediate inside (the branch has a block).
  std::shared_ptr<const Model> m = IfModel(2, 1, /*post=*/true);
  ASSERT_NE(m, nullptr);
  auto fake = std::make_shared<memory::FakeSystemAllocator>("cpu:0");
  SessionOptions opts;
  opts.pre_allocate = true;
  opts.max_concurrent_runs = 2;
  opts.allocator_factory = [&](const std::string&) { return fake; };
  auto s = Make(m, opts);
  ASSERT_NE(s, nullptr);
  const DevicePlan& dp = s->plan().devices()[0];
  size_t branch_blocks = 0;
  for (const PlanStep& step : s->plan().steps()) {
    for (const auto& [attribute, sub] : step.subplans) {
      branch_blocks += sub->devices()[0].block_bytes;
    }
  }
  EXPECT_GT(branch_blocks, 0u);                       // then's intermediate
  EXPECT_EQ(dp.subgraph_bytes, branch_blocks + 24u);  // + y, made by a branch
  EXPECT_NE(s->plan().Summary().find(absl::StrCat("subgraphs ", dp.subgraph_bytes)),
            std::string::npos)
      << s->plan().Summary();
  fake->SetFailAll(true);  // from now on the system has no memory
  for (int k = 0; k < 6; ++k) {
    const bool c = k % 3 != 2;
    const uint8_t cond = c;
    std::vector<InputTensor> in = {{"x", DataType::kFloat32, Shape{2, 3}, x_.data(), 24},
                                   {"cond", DataType::kBool, Shape{}, &cond, 1}};
    const uint64_t copied = PayloadBytesCopied();
    auto out = s->Run(in);
    ASSERT_TRUE(out.ok()) << "run " << k << ": " << out.status();
    const float* o = static_cast<const float*>((*out)[0].buffer.data());
    EXPECT_EQ(o[5], x_[5] * (c ? 10000.f : 1000.f));
    EXPECT_EQ(PayloadBytesCopied() - copied, 0u) << "run " << k;
  }
  EXPECT_EQ(s->devices()[0].execution->Stats().allocation_failures, 0u);

  // Branch outputs without a shape known at load (y itself is declared): pre_allocate is
  // refused with the reason, naming the node.
  std::shared_ptr<const Model> untyped = IfModel(1, 1, /*post=*/true, /*typed_branches=*/false);
  ASSERT_NE(untyped, nullptr);
  opts.allocator_factory = nullptr;
  auto refused = Session::Create(untyped, opts, registry_);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("'if'"), std::string::npos) << refused.status();
}

// The partition's Level 2: Split2 has no workspace estimate (the partition counts the 1.5x
// heuristic) but declares 256 bytes once made; a budget between the two gets a warning naming
// the device and the node.
TEST_F(SessionTest, BudgetIsRecheckedWithTheKernelsDeclaredWorkspaces) {
  auto first = Make(MixedOutputModel(true, true));
  ASSERT_NE(first, nullptr);
  const partition::DeviceReport* cpu0 = first->partition_report().FindDevice("cpu:0");
  ASSERT_NE(cpu0, nullptr);
  const uint64_t accounted = cpu0->accounted.total();
  SessionOptions opts;
  opts.partition.devices = {{"cpu:0", accounted + 16}};
  auto s = Make(MixedOutputModel(true, true), opts);
  ASSERT_NE(s, nullptr);
  std::string warnings;
  for (const std::string& w : s->partition_report().warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("over its budget"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("'split'"), std::string::npos) << warnings;
}

TEST_F(SessionTest, UnsupportedOperatorsAreRefusedAtLoadWithTheirNode) {
  ModelBuilder b(13);
  b.Input("x", DataType::kFloat32, {2});
  b.Node("Celu", {"x"}, {"y"}, "my_celu");
  b.Output("y", DataType::kFloat32, {2});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  auto s = Session::Create(*m, {}, registry_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  for (const char* needle : {"my_celu", "Celu", "ai.onnx", "opset 13"}) {
    EXPECT_NE(s.status().message().find(needle), std::string::npos) << s.status();
  }
}

}  // namespace
}  // namespace inferd::engine

// The engine's device paths, on a fake GPU (engine/testing/fake_device.h: a mock, since this
// machine has none; the same session code drives the CUDA runtime on a real one). The 32-layer
// transformer is split between cuda:0 and cpu:0 by rules and by budget; nodes the device has no
// kernel for fall back to cpu:0; weights are uploaded once; values cross at DeviceCopy nodes;
// outputs made on the device come back to host memory; and a second run allocates no device
// memory. Every split run's outputs equal the CPU-only run's bit for bit (the fake kernels run
// the CPU kernels).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "base/status_macros.h"
#include "engine/device_copies.h"
#include "engine/session.h"
#include "engine/test_data_set.h"
#include "engine/testing/fake_device.h"
#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd {
namespace {

using engine::testing::FakeDeviceRuntime;
using engine::testing::Runfile;

// The ops the fake GPU has kernels for; LayerNormalization, Softmax and Gather are left to the
// CPU unless a test adds them.
const std::vector<std::string> kDeviceOps = {"MatMul", "Add",     "Mul",
                                             "Relu",   "Reshape", "Transpose"};

class DeviceRun : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry_).ok());
    auto sets = engine::ReadTestDataSets(dir_);
    ASSERT_TRUE(sets.ok()) << sets.status();
    data_ = std::move((*sets)[0]);
  }

  void AddDeviceKernels(const std::vector<std::string>& ops) {
    ASSERT_TRUE(engine::testing::RegisterFakeDeviceKernels(registry_, ops).ok());
  }

  absl::StatusOr<std::unique_ptr<engine::Session>> Load(const partition::PartitionConfig& p,
                                                        int runs = 1, bool fusions = false) {
    engine::SessionOptions opts;
    opts.partition = p;
    opts.device_runtimes = {fake_};
    opts.enable_fusions = fusions;
    opts.max_concurrent_runs = runs;
    return engine::Session::Load(dir_ + "/model.onnx", opts, registry_);
  }

  absl::StatusOr<std::vector<engine::OutputTensor>> Run(engine::Session& s) {
    std::vector<engine::InputTensor> inputs;
    for (size_t i = 0; i < data_.inputs.size(); ++i) {
      const engine::NamedData& d = data_.inputs[i];
      inputs.push_back({s.inputs()[i]->name, d.type, d.shape, d.bytes.data(), d.bytes.size()});
    }
    return s.Run(inputs);
  }

  // The CPU-only run's outputs, for bitwise comparison.
  std::vector<engine::OutputTensor> CpuOutputs() {
    auto whole = Load({});
    EXPECT_TRUE(whole.ok()) << whole.status();
    auto out = Run(**whole);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *std::move(out) : std::vector<engine::OutputTensor>();
  }

  void ExpectSameOutputs(const std::vector<engine::OutputTensor>& a,
                         const std::vector<engine::OutputTensor>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].buffer.size(), b[i].buffer.size());
      EXPECT_EQ(std::memcmp(a[i].buffer.data(), b[i].buffer.data(), a[i].buffer.size()), 0)
          << "output " << i << " differs from the CPU run";
      EXPECT_FALSE(fake_->IsDeviceMemory(b[i].buffer.data(), b[i].buffer.size()))
          << "output " << i << " was handed over in device memory";
      EXPECT_TRUE(engine::CompareData(data_.outputs[i], b[i].type, b[i].shape, b[i].buffer.data(),
                                      b[i].buffer.size(), {1e-3, 1e-4})
                      .ok());
    }
  }

  // cuda:0 (no budget) takes layers 0-15 by rule; cpu:0 the rest.
  static partition::PartitionConfig FirstHalfOnDevice() {
    partition::PartitionConfig p;
    p.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
    p.name_rules = "cuda:0(layers.[0-15]/)";
    return p;
  }

  // Whether a note of the session's partition report contains `part`.
  static bool Noted(const engine::Session& s, const std::string& part) {
    for (const std::string& note : s.partition_report().notes) {
      if (absl::StrContains(note, part)) return true;
    }
    return false;
  }

  // Runs `s` and expects the CPU-only run's outputs.
  void RunAndExpect(engine::Session& s, const std::vector<engine::OutputTensor>& expected) {
    auto out = Run(s);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectSameOutputs(expected, *out);
  }

  static int CountOn(const engine::Session& s, const std::string& device, const std::string& op) {
    int n = 0;
    for (const engine::Node& node : s.graph().nodes)
      n += node.device == device && node.op_type == op;
    return n;
  }

  engine::KernelRegistry registry_;
  std::shared_ptr<FakeDeviceRuntime> fake_ = std::make_shared<FakeDeviceRuntime>(1, 64 << 20);
  std::string dir_ = Runfile("tools/models/transformer_32");
  engine::TestDataSet data_;
};

TEST_F(DeviceRun, RulesSplitEqualsTheCpuRunWithFallbackUploadsAndCopies) {
  AddDeviceKernels(kDeviceOps);
  const std::vector<engine::OutputTensor> expected = CpuOutputs();
  const partition::PartitionConfig p = FirstHalfOnDevice();
  auto s = Load(p);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->devices().size(), 2u);
  // The device took its kernels' ops in layers 0-15; Softmax and LayerNormalization fell back.
  EXPECT_EQ(CountOn(**s, "cuda:0", "MatMul"), 16 * 8);
  EXPECT_EQ(CountOn(**s, "cuda:0", "Softmax"), 0);
  EXPECT_EQ(CountOn(**s, "cpu:0", "Softmax"), 32);
  bool noted = false;
  for (const std::string& note : (*s)->partition_report().notes) {
    noted |= absl::StrContains(note, "cuda:0 has no kernel for") &&
             absl::StrContains(note, "Softmax x16") &&
             absl::StrContains(note, "LayerNormalization");
  }
  EXPECT_TRUE(noted) << "the report names the nodes that fell back";
  // Each weight the device reads was uploaded once, at load; Reshape's shape stays on the host.
  EXPECT_GT(fake_->counters().uploads.load(), 0u);
  EXPECT_GT((*s)->stats().device_weight_bytes, 0u);
  for (const engine::Value& v : (*s)->graph().values) {
    if (absl::StrContains(v.name, "Reshape_shape"))
      EXPECT_TRUE(v.resident_device.empty()) << v.name;
  }
  const uint64_t uploads = fake_->counters().uploads.load();
  auto out = Run(**s);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameOutputs(expected, *out);
  EXPECT_EQ(fake_->counters().uploads.load(), uploads) << "runs upload no weights";
  EXPECT_GT(fake_->counters().kernels.load(), 0u);
  EXPECT_GT(fake_->counters().to_device.load(), 0u);
  EXPECT_GT(fake_->counters().to_host.load(), 0u);
  EXPECT_GT((*s)->boundary_copies(), 0);
  EXPECT_EQ((*s)->output_copies(), 0);  // the last node (a LayerNormalization) is on the CPU
}

// With fusions on, the nodes bound for the device stay unfused (the fused ops have CPU kernels
// only) and the CPU's part is fused as usual.
TEST_F(DeviceRun, FusionsLeaveTheDevicePartUnfused) {
  AddDeviceKernels(kDeviceOps);
  const partition::PartitionConfig p = FirstHalfOnDevice();
  auto s = Load(p, /*runs=*/1, /*fusions=*/true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CountOn(**s, "cuda:0", "MatMul"), 16 * 8);
  EXPECT_LT(CountOn(**s, "cpu:0", "MatMul"), 16 * 8);  // layers 16-31: projections fused
  EXPECT_GT((*s)->fused_nodes(), 0);
  int fused_on_cpu = 0;
  for (const engine::Node& n : (*s)->graph().nodes) {
    if (n.op_type == "FusedMatMul") {
      EXPECT_EQ(n.device, "cpu:0") << n.name;
      ++fused_on_cpu;
    }
  }
  EXPECT_GT(fused_on_cpu, 0);
  EXPECT_TRUE(Noted(**s, "nodes placed on devices the host cannot read unfused"));
  auto out = Run(**s);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < out->size(); ++i) {
    EXPECT_TRUE(engine::CompareData(data_.outputs[i], (*out)[i].type, (*out)[i].shape,
                                    (*out)[i].buffer.data(), (*out)[i].buffer.size(), {1e-3, 1e-4})
                    .ok());
  }
}

TEST_F(DeviceRun, OutputMadeOnTheDeviceComesBackToPinnedHostMemory) {
  AddDeviceKernels(kDeviceOps);
  AddDeviceKernels({"LayerNormalization", "Softmax", "Gather"});
  const std::vector<engine::OutputTensor> expected = CpuOutputs();
  partition::PartitionConfig p;
  p.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
  p.name_rules = "cuda:0(/)";  // every node
  auto s = Load(p);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const engine::Node& n : (*s)->graph().nodes) {
    if (n.op_type != engine::kDeviceCopyOp) EXPECT_EQ(n.device, "cuda:0") << n.name;
  }
  // input_ids uploaded by a copy on the device; last_hidden_state copied back to cpu:0.
  EXPECT_EQ((*s)->boundary_copies(), 1);
  EXPECT_EQ((*s)->output_copies(), 1);
  ASSERT_EQ((*s)->outputs().size(), 1u);
  EXPECT_EQ((*s)->outputs()[0]->name, "last_hidden_state");
  auto out = Run(**s);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameOutputs(expected, *out);
  EXPECT_GT(fake_->counters().host_io_allocations.load(), 0u) << "outputs in pinned host memory";
  EXPECT_GE(fake_->counters().synchronizations.load(), 1u);
}

TEST_F(DeviceRun, BudgetOnlyFillsTheDeviceToItsFreeMemory) {
  AddDeviceKernels(kDeviceOps);
  const std::vector<engine::OutputTensor> expected = CpuOutputs();
  fake_ = std::make_shared<FakeDeviceRuntime>(1, 160 << 10);  // 160 KiB free
  partition::PartitionConfig p;
  p.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};  // no budget: free memory
  auto s = Load(p);
  ASSERT_TRUE(s.ok()) << s.status();
  const int on_device = CountOn(**s, "cuda:0", "MatMul");
  EXPECT_GT(on_device, 0);
  EXPECT_LT(on_device, 256) << "the device is too small for every layer";
  EXPECT_TRUE(Noted(**s, "cuda:0 has no budget configured: its free memory"));
  RunAndExpect(**s, expected);
}

// A device kernel whose factory refuses a node its definition covers (as the CUDA MaxPool
// refuses an Indices output) leaves that node to the CPU instead of failing the load.
TEST_F(DeviceRun, NodesTheDeviceKernelRefusesFallBack) {
  AddDeviceKernels(kDeviceOps);
  engine::KernelDef softmax;
  softmax.op_type = "Softmax";
  softmax.since_version = 13;
  softmax.device_type = engine::DeviceKind::kCuda;
  softmax.create =
      [](const engine::KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return absl::UnimplementedError(info.node_name() + ": not on this device");
  };
  ASSERT_TRUE(registry_.Register(std::move(softmax)).ok());
  const std::vector<engine::OutputTensor> expected = CpuOutputs();
  const partition::PartitionConfig p = FirstHalfOnDevice();
  auto s = Load(p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CountOn(**s, "cuda:0", "Softmax"), 0);
  EXPECT_EQ(CountOn(**s, "cuda:0", "MatMul"), 16 * 8);
  RunAndExpect(**s, expected);
}

TEST_F(DeviceRun, SecondRunAllocatesNoDeviceMemory) {
  AddDeviceKernels(kDeviceOps);
  const partition::PartitionConfig p = FirstHalfOnDevice();
  auto s = Load(p);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(Run(**s).ok());
  const uint64_t after_warmup = fake_->counters().device_allocations.load();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Run(**s).ok());
  EXPECT_EQ(fake_->counters().device_allocations.load(), after_warmup);
}

TEST_F(DeviceRun, ConcurrentRunsEachHaveTheirStream) {
  AddDeviceKernels(kDeviceOps);
  const std::vector<engine::OutputTensor> expected = CpuOutputs();
  const partition::PartitionConfig p = FirstHalfOnDevice();
  auto s = Load(p, /*runs=*/2);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(fake_->counters().streams.load(), 2u);
  std::vector<std::thread> threads;
  std::vector<absl::StatusOr<std::vector<engine::OutputTensor>>> results(4);
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { results[t] = Run(**s); });
  for (std::thread& t : threads) t.join();
  for (auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status();
    ExpectSameOutputs(expected, *r);
  }
}

TEST_F(DeviceRun, AbsentDevicesAreRefusedWithTheReason) {
  AddDeviceKernels(kDeviceOps);
  partition::PartitionConfig p;
  p.devices = {{"cuda:1", std::nullopt}, {"cpu:0", std::nullopt}};
  p.name_rules = "cuda:1(layers.[0-15]/)";
  auto s = Load(p);  // the fake runtime has cuda:0 only
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(s.status().message(), "cuda:1 is absent: no CUDA device"))
      << s.status();
  // Allowed to fall back: a warning, and the run is the CPU's.
  p.fallback_on_missing_device = true;
  auto fb = Load(p);
  ASSERT_TRUE(fb.ok()) << fb.status();
  EXPECT_EQ(CountOn(**fb, "cuda:1", "MatMul"), 0);
  // Without a runtime for the kind, the message says the build lacks it.
  engine::SessionOptions opts;
  opts.partition = p;
  opts.partition.fallback_on_missing_device = false;
  auto none = engine::Session::Load(dir_ + "/model.onnx", opts, registry_);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "this build has no cuda support"))
      << none.status();
}

// A session of the model `b` builds, over a fake cuda:0 (1 MiB) and cpu:0, split by `rules`,
// without fusions.
absl::StatusOr<std::unique_ptr<engine::Session>> SplitSession(
    const engine::testing::ModelBuilder& b, const engine::KernelRegistry& registry,
    const std::string& rules) {
  INFERD_ASSIGN_OR_RETURN(auto model, engine::Model::Parse(b.Serialize(), "."));
  engine::SessionOptions opts;
  opts.device_runtimes = {std::make_shared<FakeDeviceRuntime>(1, 1 << 20)};
  opts.partition.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
  opts.partition.name_rules = rules;
  opts.enable_fusions = false;
  return engine::Session::Create(model, opts, registry);
}

// An If on the CPU whose branches read an outer value made on the device: the value is copied
// to the host for the If (an implicit input) and the branches bind that copy by name. (The fake
// device's memory is readable from the host, so the run's outputs alone would not show a branch
// reading device memory; the binding is checked through the copy the graph holds.)
TEST(DeviceRunIf, BranchesReadTheHostCopyOfADeviceValue) {
  engine::KernelRegistry registry;
  ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(engine::testing::RegisterFakeDeviceKernels(registry, {"MatMul"}).ok());
  engine::testing::ModelBuilder b(17);
  b.Input("cond", engine::DataType::kBool, {}).Input("x", engine::DataType::kFloat32, {2, 2});
  b.Initializer<float>("w", engine::Shape{2, 2}, {1, 2, 3, 4});
  b.Output("y", engine::DataType::kFloat32, {2, 2});
  b.Node("MatMul", {"x", "w"}, {"m"}, "mm");
  onnx::NodeProto& node = b.Node("If", {"cond"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* sg = a->mutable_g();
    sg->set_name(branch);
    onnx::NodeProto* op = sg->add_node();
    op->set_op_type(std::string(branch) == "then_branch" ? "Relu" : "Neg");
    op->set_name(std::string(branch) + "/op");
    op->add_input("m");
    op->add_output(std::string(branch) + "_y");
    onnx::ValueInfoProto* out = sg->add_output();
    out->set_name(std::string(branch) + "_y");
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(engine::DataType::kFloat32));
    tt->mutable_shape()->add_dim()->set_dim_value(2);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto s = SplitSession(b, registry, "cuda:0(mm)");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->graph().nodes[0].device, "cuda:0");
  const int copy = (*s)->graph().FindValue("m/copy_to_cpu:0");
  ASSERT_GE(copy, 0);
  for (const engine::Node& n : (*s)->graph().nodes) {
    if (n.op_type == "If") {
      EXPECT_EQ(n.implicit_inputs, std::vector<int>{copy});
    }
  }
  const float x[4] = {1, -1, 0, 2};  // m = x * w = {-2, -2, 6, 8}
  const bool cond[2] = {true, false};
  const float expected[2][4] = {{0, 0, 6, 8}, {2, 2, -6, -8}};
  for (int k = 0; k < 2; ++k) {
    std::vector<engine::InputTensor> in = {
        {"cond", engine::DataType::kBool, engine::Shape{}, &cond[k], 1},
        {"x", engine::DataType::kFloat32, engine::Shape{2, 2}, x, sizeof(x)}};
    auto out = (*s)->Run(in);
    ASSERT_TRUE(out.ok()) << out.status();
    const auto* y = static_cast<const float*>((*out)[0].buffer.data());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], expected[k][i]) << k << " " << i;
  }
}

// Shape and Size on the CPU read a value made on the device without a copy of it: the host has
// its shape. (The fake device's memory is host-readable, so the graph is what shows it.)
TEST(DeviceRunShape, ShapeAndSizeReadDeviceValuesWithoutACopy) {
  engine::KernelRegistry registry;
  ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry).ok());
  ASSERT_TRUE(engine::testing::RegisterFakeDeviceKernels(registry, {"MatMul"}).ok());
  engine::testing::ModelBuilder b(17);
  b.Input("x", engine::DataType::kFloat32, {3, 2});
  b.Initializer<float>("w", engine::Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  b.Output("s", engine::DataType::kInt64, {2}).Output("n", engine::DataType::kInt64, {});
  b.Node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.Node("Shape", {"m"}, {"s"}, "shape");
  b.Node("Size", {"m"}, {"n"}, "size");
  auto s = SplitSession(b, registry, "cuda:0(mm)");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_LT((*s)->graph().FindValue("m/copy_to_cpu:0"), 0) << "m was copied to the host";
  for (const engine::Node& n : (*s)->graph().nodes) {
    if (n.op_type == "Shape" || n.op_type == "Size") {
      EXPECT_EQ(n.device, "cpu:0");
      EXPECT_EQ((*s)->graph().values[n.inputs[0]].name, "m");
    }
  }
  const float x[6] = {1, 2, 3, 4, 5, 6};
  for (int run = 0; run < 2; ++run) {
    auto out = (*s)->Run({{"x", engine::DataType::kFloat32, engine::Shape{3, 2}, x, sizeof(x)}});
    ASSERT_TRUE(out.ok()) << out.status();
    const auto* shape = static_cast<const int64_t*>((*out)[0].buffer.data());
    EXPECT_EQ(shape[0], 3);
    EXPECT_EQ(shape[1], 4);
    EXPECT_EQ(*static_cast<const int64_t*>((*out)[1].buffer.data()), 12);
  }
}

// The fake is strict enough to catch a missing synchronization: a device-to-host copy's
// destination holds its old bytes until the stream is synchronized.
TEST(FakeDevice, DeviceToHostCopiesLandAtSynchronize) {
  auto fake = std::make_shared<FakeDeviceRuntime>(1, 1 << 20);
  auto made = fake->MakeAllocator("cuda:0", 0);
  ASSERT_TRUE(made.ok());
  std::shared_ptr<memory::SystemAllocator> system = *made;
  auto dev = system->Allocate(64);
  ASSERT_TRUE(dev.ok());
  auto stream = fake->MakeStream(0);
  ASSERT_TRUE(stream.ok());
  float host_in[16], host_out[16];
  for (int i = 0; i < 16; ++i) host_in[i] = static_cast<float>(i), host_out[i] = -1;
  ASSERT_TRUE((*stream)->CopyToDevice(*dev, host_in, sizeof(host_in)).ok());
  ASSERT_TRUE((*stream)->CopyToHost(host_out, *dev, sizeof(host_out)).ok());
  EXPECT_EQ(host_out[3], -1) << "not yet synchronized";
  ASSERT_TRUE((*stream)->Synchronize().ok());
  EXPECT_EQ(host_out[3], 3);
  // Copies that do not go between the right memories are refused.
  EXPECT_FALSE((*stream)->CopyToDevice(host_out, host_in, sizeof(host_in)).ok());
  EXPECT_FALSE((*stream)->CopyToHost(host_out, host_in, sizeof(host_in)).ok());
  system->Free(*dev, 64);
  EXPECT_FALSE(fake->IsDeviceMemory(*dev, 4));
}

}  // namespace
}  // namespace inferd

// A 32-layer transformer split across two host memory domains (cpu:1 and cpu:0, each with its
// own arenas and budget): outputs equal the unsplit run, boundary copies happen exactly where
// the partition plan says, and per-device arena accounting matches the plan.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "engine/copy.h"
#include "engine/device_copies.h"
#include "engine/session.h"
#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "kernels/cpu/cpu_kernels.h"
#include "memory/size_classes.h"

namespace inferd {
namespace {

using engine::testing::Runfile;

class PartitionedRun : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry_).ok()); }

  absl::StatusOr<std::unique_ptr<engine::Session>> Load(const partition::PartitionConfig& p) {
    engine::SessionOptions opts;
    opts.partition = p;
    return engine::Session::Load(dir_ + "/model.onnx", opts, registry_);
  }

  absl::StatusOr<std::vector<engine::OutputTensor>> Run(engine::Session& s) {
    auto sets = engine::ReadTestDataSets(dir_);
    if (!sets.ok()) return sets.status();
    data_ = std::move((*sets)[0]);
    std::vector<engine::InputTensor> inputs;
    for (size_t i = 0; i < data_.inputs.size(); ++i) {
      const engine::NamedData& d = data_.inputs[i];
      inputs.push_back({s.inputs()[i]->name, d.type, d.shape, d.bytes.data(), d.bytes.size()});
    }
    return s.Run(inputs);
  }

  static partition::PartitionConfig Split(uint64_t cpu1_budget) {
    partition::PartitionConfig p;
    p.devices = {{"cpu:1", cpu1_budget}, {"cpu:0", std::nullopt}};
    p.name_rules = "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)";
    return p;
  }

  engine::KernelRegistry registry_;
  std::string dir_ = Runfile("tools/models/transformer_32");
  engine::TestDataSet data_;
};

TEST_F(PartitionedRun, SplitRunEqualsTheUnsplitRun) {
  auto whole = Load({});
  ASSERT_TRUE(whole.ok()) << whole.status();
  auto split = Load(Split(64 << 20));
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ((*split)->devices().size(), 2u);
  auto a = Run(**whole);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = Run(**split);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    ASSERT_EQ((*a)[i].buffer.size(), (*b)[i].buffer.size());
    EXPECT_EQ(std::memcmp((*a)[i].buffer.data(), (*b)[i].buffer.data(), (*a)[i].buffer.size()), 0)
        << "output " << i << " differs between the split and the whole run";
    EXPECT_TRUE(engine::CompareData(data_.outputs[i], (*b)[i].type, (*b)[i].shape,
                                    (*b)[i].buffer.data(), (*b)[i].buffer.size(), {1e-3, 1e-4})
                    .ok());
  }
  // Layers 0-15 ran on cpu:1, the rest on cpu:0.
  int on_cpu1 = 0;
  for (const engine::Node& n : (*split)->graph().nodes) {
    if (n.name.find("/model/layers.3/") != std::string::npos) EXPECT_EQ(n.device, "cpu:1");
    if (n.name.find("/model/layers.30/") != std::string::npos) EXPECT_EQ(n.device, "cpu:0");
    on_cpu1 += n.device == "cpu:1";
  }
  EXPECT_GT(on_cpu1, 100);
}

TEST_F(PartitionedRun, BoundaryCopiesHappenExactlyWhereThePlanSays) {
  auto split = Load(Split(64 << 20));
  ASSERT_TRUE(split.ok()) << split.status();
  const engine::Session& s = **split;
  const partition::PlanReport& report = s.partition_report();
  ASSERT_FALSE(report.copies.empty());
  std::set<std::pair<std::string, std::string>> planned, made;
  uint64_t planned_bytes = 0;
  for (const partition::BoundaryCopy& c : report.copies) {
    planned.insert({c.value_name, c.to});
    planned_bytes += c.bytes;
  }
  for (const engine::Node& n : s.graph().nodes) {
    if (n.op_type != engine::kDeviceCopyOp) continue;
    made.insert({s.graph().values[n.inputs[0]].name, n.device});
  }
  EXPECT_EQ(planned, made);
  EXPECT_EQ(s.boundary_copies(), static_cast<int>(report.copies.size()));
  // Each run copies exactly the planned bytes across the boundary, and nothing else.
  const uint64_t before = engine::PayloadBytesCopied();
  ASSERT_TRUE(Run(**split).ok());
  EXPECT_EQ(engine::PayloadBytesCopied() - before, planned_bytes);
}

TEST_F(PartitionedRun, PerDeviceArenaAccountingMatchesThePlan) {
  auto split = Load(Split(64 << 20));
  ASSERT_TRUE(split.ok()) << split.status();
  engine::Session& s = **split;
  ASSERT_TRUE(s.plan().is_static());
  ASSERT_TRUE(Run(s).ok());
  const partition::PlanReport& report = s.partition_report();
  for (size_t d = 0; d < s.devices().size(); ++d) {
    const engine::DeviceArenas& dev = s.devices()[d];
    const engine::DevicePlan& dp = s.plan().devices()[d];
    SCOPED_TRACE(dev.device);
    EXPECT_EQ(dp.name, dev.device);
    // The static block of the device is its execution arena's whole peak.
    EXPECT_EQ(dev.execution->Stats().peak_live_bytes,
              memory::SizeClassCapacity(memory::SizeClassFor(dp.block_bytes)));
    EXPECT_EQ(dev.execution->Stats().live_bytes, 0u);
    const partition::DeviceReport* r = report.FindDevice(dev.device);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(dp.nodes, r->nodes + r->copies_in);
    EXPECT_LE(dp.block_bytes, r->accounted.total()) << "planned peak above the accounted bytes";
    // The partition planned the block as the engine then did: never smaller.
    EXPECT_GE(r->activation_peak_bytes, dp.block_bytes);
    EXPECT_LE(static_cast<double>(r->activation_peak_bytes), 1.05 * dp.block_bytes);
  }
}

// What the partition charged each device is what the device then holds: never less, within 5%
// (on this model the two are equal: every kernel has an estimate, and the planned block lands in
// the engine's size class).
TEST_F(PartitionedRun, AccountedBytesCoverWhatTheArenasHold) {
  for (const partition::PartitionConfig& config : {partition::PartitionConfig{}, Split(64 << 20)}) {
    auto loaded = Load(config);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    engine::Session& s = **loaded;
    ASSERT_TRUE(Run(s).ok());
    for (const engine::DeviceArenas& dev : s.devices()) {
      SCOPED_TRACE(dev.device);
      const partition::DeviceReport* r = s.partition_report().FindDevice(dev.device);
      ASSERT_NE(r, nullptr);
      const uint64_t measured = r->accounted.weights + dev.execution->Stats().peak_live_bytes +
                                dev.io->Stats().peak_live_bytes;
      ASSERT_TRUE(r->measured_bytes.has_value());
      EXPECT_EQ(*r->measured_bytes, measured) << "the report's measured bytes are the arenas'";
      EXPECT_GE(r->accounted.total(), measured);
      EXPECT_LE(static_cast<double>(r->accounted.total()), 1.05 * static_cast<double>(measured));
      // Only the kernels without an estimate get the heuristic.
      for (const partition::NodeReport& n : s.partition_report().nodes) {
        if (n.device != dev.device) continue;
        if (n.op_type == "Add" || n.op_type == "Reshape" || n.op_type == "Transpose" ||
            n.op_type == "Softmax") {
          EXPECT_TRUE(n.cost.workspace_estimated) << n.name;
        }
      }
    }
  }
}

TEST_F(PartitionedRun, TooSmallABudgetIsRefusedWithTheNumbers) {
  partition::PartitionConfig p = Split(64 << 20);
  p.devices[1].budget_bytes = 100 << 10;  // cpu:0 cannot hold layers 16-31
  auto s = Load(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("cpu:0"), std::string::npos) << s.status();
  EXPECT_NE(s.status().message().find("weights"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace inferd

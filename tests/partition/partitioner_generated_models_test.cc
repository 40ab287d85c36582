// The partitioner on the generated models (tools/models), with the real CPU kernels' workspace
// estimates and the engine's fusions, loader and execution plan: what `inferctl plan` and a
// session do at load. partition/partitioner_test.cc tests the partitioner alone, with fakes.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/device_copies.h"
#include "engine/execution_plan.h"
#include "engine/model.h"
#include "engine/registry_workspace_estimator.h"
#include "engine/rewrites.h"
#include "engine/testing/runfiles.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"
#include "partition/budget_recheck.h"
#include "partition/partitioner.h"

namespace inferd::partition {
namespace {

constexpr uint64_t kKiB = 1024;

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

class GeneratedModelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(kernels::cpu::RegisterCpuKernels(registry_).ok()); }

  // Loads tools/models/<name>/model.onnx and applies the fusions, as `inferctl plan` does.
  engine::Graph LoadFused(const std::string& name) {
    absl::StatusOr<std::shared_ptr<const engine::Model>> m =
        engine::Model::Load(engine::testing::Runfile("tools/models/" + name + "/model.onnx"));
    EXPECT_TRUE(m.ok()) << m.status();
    model_ = *m;
    engine::Graph g = model_->graph();
    absl::StatusOr<int> fused = engine::ApplyFusions(g, registry_, derived_);
    EXPECT_TRUE(fused.ok()) << fused.status();
    fused_ = fused.value_or(0);
    return g;
  }

  engine::KernelRegistry registry_;
  engine::RegistryWorkspaceEstimator estimator_{registry_};
  std::shared_ptr<const engine::Model> model_;
  engine::DerivedWeights derived_;  // weights the fusions make, as long as the graphs
  int fused_ = 0;
};

TEST_F(GeneratedModelTest, FusedNodesKeepMatchingTheirLayerRule) {
  engine::Graph g = LoadFused("transformer_32");
  ASSERT_GT(fused_, 0);
  const std::string fused = "/model/layers.5/mlp/up_proj/MatMul/MatMulAddFusion";
  auto it = std::find_if(g.nodes.begin(), g.nodes.end(),
                         [&](const engine::Node& n) { return n.name == fused; });
  ASSERT_NE(it, g.nodes.end()) << "no node " << fused;
  const int index = static_cast<int>(it - g.nodes.begin());
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.5/)";
  config.devices = {{"cpu:1", std::nullopt}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, estimator_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->node_device[index], "cpu:1");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const bool layer5 = Contains(g.nodes[i].name, "/layers.5/");
    EXPECT_EQ(r->node_device[i], layer5 ? "cpu:1" : "cpu:0") << g.nodes[i].name;
  }
  // The fused MatMuls have exact oneDNN estimates.
  EXPECT_TRUE(r->node_costs[index].workspace_estimated);
}

TEST_F(GeneratedModelTest, RulesSplitTransformer32WithinTheBudget) {
  engine::Graph g = LoadFused("transformer_32");
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)";
  config.devices = {{"cpu:1", 200 * kKiB}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, estimator_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  const DeviceReport* cpu1 = r->report.FindDevice("cpu:1");
  ASSERT_NE(cpu1, nullptr);
  EXPECT_GT(cpu1->nodes, 0);
  EXPECT_LE(cpu1->accounted.total(), 200 * kKiB);
  // The cut: cpu:1 holds a prefix of layers 0..15 in graph order; nothing of layers 16..31.
  bool cut = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!r->report.nodes[i].rule || r->report.nodes[i].rule->rule != 0) {
      EXPECT_EQ(r->node_device[i], "cpu:0") << g.nodes[i].name;
      continue;
    }
    if (r->node_device[i] == "cpu:0") cut = true;
    EXPECT_EQ(r->node_device[i], cut ? "cpu:0" : "cpu:1") << g.nodes[i].name;
  }
  EXPECT_TRUE(cut);
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_TRUE(Contains(r->report.warnings[0], "cpu:1: budget of 200.0 KiB reached at node"));
  EXPECT_FALSE(r->report.copies.empty());
  const std::string text = r->report.ToString();
  EXPECT_TRUE(Contains(text, "name rules (2 rules, 32 patterns)")) << text;
}

TEST_F(GeneratedModelTest, BudgetOnlySplitsTransformer32OnALayerBoundary) {
  engine::Graph g = LoadFused("transformer_32");
  PartitionConfig config;
  config.devices = {{"cpu:0", std::nullopt}, {"cpu:1", 200 * kKiB}};
  absl::StatusOr<PartitionResult> r = Partition(g, estimator_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(Contains(r->report.mode, "budget only")) << r->report.mode;
  // Every layer lies wholly on one device; cpu:1 holds layers 0..k, cpu:0 the rest.
  int last_on_cpu1 = -1;
  std::set<std::string> split;
  for (const LayerReport& l : r->report.layers) {
    if (l.layer.empty()) continue;
    ASSERT_EQ(l.devices.size(), 1u) << l.layer << " is split";
  }
  const LayerDetector detector;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::optional<LayerId> layer = detector.Detect(g.nodes[i].name);
    if (layer && r->node_device[i] == "cpu:1") {
      last_on_cpu1 = std::max(last_on_cpu1, static_cast<int>(layer->number));
    }
  }
  ASSERT_GE(last_on_cpu1, 0);
  ASSERT_LT(last_on_cpu1, 31);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::optional<LayerId> layer = detector.Detect(g.nodes[i].name);
    if (!layer) continue;
    EXPECT_EQ(r->node_device[i], layer->number <= last_on_cpu1 ? "cpu:1" : "cpu:0")
        << g.nodes[i].name;
  }
  // The next layer would not have fitted.
  const DeviceReport* cpu1 = r->report.FindDevice("cpu:1");
  EXPECT_LE(cpu1->accounted.total(), 200 * kKiB);
  const std::string next = "layers." + std::to_string(last_on_cpu1 + 1);
  auto layer = std::find_if(r->report.layers.begin(), r->report.layers.end(),
                            [&](const LayerReport& l) { return l.layer == next; });
  ASSERT_NE(layer, r->report.layers.end());
  EXPECT_GT(cpu1->accounted.total() + layer->bytes, 200 * kKiB);
  // One boundary: the values crossing from the last cpu:1 layer.
  for (const BoundaryCopy& c : r->report.copies) {
    EXPECT_EQ(c.from, "cpu:1");
    EXPECT_EQ(c.to, "cpu:0");
  }
}

TEST_F(GeneratedModelTest, BudgetOnlyWithoutLayersMovesSingleNodes) {
  engine::Graph g = LoadFused("cnn");
  PartitionConfig config;
  config.devices = {{"cpu:1", 64 * kKiB}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, estimator_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  // A contiguous prefix of the graph on cpu:1.
  bool cut = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (r->node_device[i] == "cpu:0") cut = true;
    EXPECT_EQ(r->node_device[i], cut ? "cpu:0" : "cpu:1") << g.nodes[i].name;
  }
  EXPECT_LE(r->report.FindDevice("cpu:1")->accounted.total(), 64 * kKiB);
  EXPECT_TRUE(Contains(r->report.ToString(), "layers: none detected in node names"));
}

TEST_F(GeneratedModelTest, ApplyPartitionAcrossFusedAndUnfusedGraphs) {
  engine::Graph fused = LoadFused("transformer_32");
  engine::Graph unfused = model_->graph();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-3]/)";
  config.devices = {{"cpu:1", std::nullopt}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> on_fused = Partition(fused, estimator_, config);
  ASSERT_TRUE(on_fused.ok()) << on_fused.status();
  absl::StatusOr<PartitionResult> on_unfused = Partition(unfused, estimator_, config);
  ASSERT_TRUE(on_unfused.ok()) << on_unfused.status();
  // Each result applies to the other graph, with the devices the rules give.
  ASSERT_TRUE(ApplyPartition(*on_fused, unfused).ok());
  ASSERT_TRUE(ApplyPartition(*on_unfused, fused).ok());
  for (const engine::Graph* g : {&fused, &unfused}) {
    for (const engine::Node& n : g->nodes) {
      const bool early = Contains(n.name, "/layers.0/") || Contains(n.name, "/layers.1/") ||
                         Contains(n.name, "/layers.2/") || Contains(n.name, "/layers.3/");
      EXPECT_EQ(n.device, early ? "cpu:1" : "cpu:0") << n.name;
    }
  }
}

TEST_F(GeneratedModelTest, RecheckAfterFusionsOnAPrefusionPartition) {
  // The other order: partition the graph as loaded, then fuse (fusions stay within a device),
  // insert the boundary copies, make the kernels, and re-check with their declared workspaces
  // (fused nodes take the place of the node they are named after).
  absl::StatusOr<std::shared_ptr<const engine::Model>> m =
      engine::Model::Load(engine::testing::Runfile("tools/models/transformer_32/model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status();
  engine::Graph g = (*m)->graph();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-3]/)";
  config.devices = {{"cpu:1", 1 << 20}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, estimator_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(ApplyPartition(*r, g).ok());
  absl::StatusOr<int> fused = engine::ApplyFusions(g, registry_, derived_);
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_GT(*fused, 0);
  ASSERT_TRUE(engine::InsertDeviceCopies(g, registry_, "cpu:0").ok());
  absl::StatusOr<std::unique_ptr<engine::ExecutionPlan>> plan =
      engine::ExecutionPlan::Build(g, registry_, {"cpu:1", "cpu:0"}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE((*plan)->is_static());
  std::vector<DeclaredWorkspace> declared;
  for (const engine::PlanStep& step : (*plan)->steps()) {
    uint64_t bytes = 0;
    for (const engine::WorkspaceRequirement& w : step.workspaces) bytes += w.bytes;
    declared.push_back({g.nodes[step.node].name, (*plan)->devices()[step.device].name, bytes});
  }
  RecheckResult recheck = RecheckBudgets(r->report, declared);
  EXPECT_TRUE(recheck.warnings.empty());
  ASSERT_GE(recheck.devices.size(), 2u);
  EXPECT_EQ(recheck.devices[0].device, "cpu:1");
  EXPECT_GT(recheck.devices[0].after, 0u);
  EXPECT_LE(recheck.devices[0].after, 1u << 20);
}

}  // namespace
}  // namespace inferd::partition

#include "partition/partitioner.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/rewrites.h"
#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using engine::DataType;
using engine::Shape;
using testing::FakeDef;
using testing::GraphBuilder;

constexpr uint64_t kKiB = 1024;

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

// x[1,256] -> /model/layers.i/Add(prev, w_i) for i < n, each weight and output 1 KiB: with an
// exact workspace estimate of 0 every node costs exactly 2 KiB on a device.
std::shared_ptr<const engine::Model> AddChain(int n) {
  engine::testing::ModelBuilder b;
  b.Input("x", DataType::kFloat32, {1, 256});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string w = "w" + std::to_string(i), out = "y" + std::to_string(i);
    b.Initializer(w, Shape{1, 256}, std::vector<float>(256, 1.0f));
    b.Node("Add", {prev, w}, {out}, "/model/layers." + std::to_string(i) + "/Add");
    prev = out;
  }
  b.Output(prev, DataType::kFloat32, {1, 256});
  absl::StatusOr<std::shared_ptr<const engine::Model>> m = engine::Model::Parse(b.Serialize(), "");
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

engine::KernelRegistry ExactAddRegistry() {
  engine::KernelRegistry r;
  EXPECT_TRUE(r.Register(FakeDef("Add", "cpu", 0)).ok());
  return r;
}

std::vector<std::string> Devices(const PartitionResult& r) { return r.node_device; }

TEST(PartitionerTest, BudgetCutoffLandsWhereTheArithmeticSays) {
  std::shared_ptr<const engine::Model> m = AddChain(6);
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.)";
  // 5 KiB: two 2 KiB nodes fit (4 KiB), the third would make 6 KiB.
  config.devices = {{"cpu:1", 5 * kKiB}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r),
            (std::vector<std::string>{"cpu:1", "cpu:1", "cpu:0", "cpu:0", "cpu:0", "cpu:0"}));
  EXPECT_EQ(r->report.FindDevice("cpu:1")->accounted.total(), 4 * kKiB);
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_EQ(r->report.warnings[0],
            "cpu:1: budget of 5.0 KiB reached at node '/model/layers.2/Add' (rule 1), which needs "
            "2.0 KiB with 1.0 KiB left; it and the 3 later nodes of rule 1 go to cpu:0");
  // Exactly 6 KiB: the third node fits to the byte.
  config.devices[0].budget_bytes = 6 * kKiB;
  r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::count(r->node_device.begin(), r->node_device.end(), "cpu:1"), 3);
  EXPECT_EQ(r->report.FindDevice("cpu:1")->headroom_bytes(), 0);
  // Without the estimate, the 1.5x heuristic: 3 KiB a node, so 6 KiB holds two.
  engine::KernelRegistry empty;
  r = Partition(m->graph(), empty, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::count(r->node_device.begin(), r->node_device.end(), "cpu:1"), 2);
  EXPECT_EQ(r->report.FindDevice("cpu:1")->accounted.workspace, 2 * kKiB);
}

TEST(PartitionerTest, LaterRulesForAFullDeviceGoToTheFallback) {
  std::shared_ptr<const engine::Model> m = AddChain(4);
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.0/); cpu:2(layers.1/); cpu:1(layers.[2-3]/)";
  config.devices = {{"cpu:1", 2 * kKiB}, {"cpu:2", std::nullopt}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:1", "cpu:2", "cpu:0", "cpu:0"}));
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_TRUE(Contains(r->report.warnings[0], "reached at node '/model/layers.2/Add' (rule 3)"))
      << r->report.warnings[0];
}

TEST(PartitionerTest, RulesOfferNodesInPatternOrder) {
  std::shared_ptr<const engine::Model> m = AddChain(4);
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  // Layer 3 is offered first, then 2, 1, 0: the budget of two nodes keeps layers 3 and 2.
  config.name_rules = "cpu:1(layers.3/, layers.2/, layers.1/, layers.0/)";
  config.devices = {{"cpu:1", 4 * kKiB}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:0", "cpu:0", "cpu:1", "cpu:1"}));
}

TEST(PartitionerTest, SharedWeightCountsOncePerDevice) {
  GraphBuilder b;
  b.Input("x", {256}).Weight("w", {256});
  b.Node("/m/layers.0/A", "Add", {"x", "w"}, {"a"}, {256});
  b.Node("/m/layers.0/B", "Add", {"a", "w"}, {"b"}, {256});
  b.Node("/m/layers.1/C", "Add", {"b", "w"}, {"c"}, {256});
  b.Output("c");
  engine::Graph& g = b.graph();
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.0/)";
  config.devices = {{"cpu:1", 3 * kKiB}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  // A: 1 KiB weight + 1 KiB output; B: 1 KiB output only (w is already on cpu:1): 3 KiB.
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:1", "cpu:1", "cpu:0"}));
  EXPECT_EQ(r->node_costs[0].cost.weights, kKiB);
  EXPECT_EQ(r->node_costs[1].cost.weights, 0u);
  EXPECT_EQ(r->report.FindDevice("cpu:1")->accounted.weights, kKiB);
  // cpu:0 holds its own copy of w for C.
  EXPECT_EQ(r->node_costs[2].cost.weights, kKiB);
  EXPECT_EQ(r->report.FindDevice("cpu:0")->accounted.weights, kKiB);
}

TEST(PartitionerTest, RefusesAModelTheFallbackCannotHold) {
  std::shared_ptr<const engine::Model> m = AddChain(6);
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-1]/)";
  config.devices = {{"cpu:1", 4 * kKiB}, {"cpu:0", 7 * kKiB}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string msg(r.status().message());
  // Four nodes of 2 KiB are left for cpu:0: 8 KiB against 7 KiB.
  EXPECT_TRUE(Contains(msg,
                       "the fallback device cpu:0 must hold every node the other devices "
                       "did not take, which needs 8.0 KiB, but its budget is 7.0 KiB "
                       "(short by 1.0 KiB)"))
      << msg;
  EXPECT_TRUE(Contains(msg, "weights      needed 4.0 KiB (4096 bytes)")) << msg;
  EXPECT_TRUE(Contains(msg, "activations  needed 4.0 KiB (4096 bytes)")) << msg;
  EXPECT_TRUE(Contains(msg,
                       "workspace    needed 0 B (0 bytes) (4 nodes estimated, 0 by the "
                       "1.5x heuristic)"))
      << msg;
  EXPECT_TRUE(Contains(msg,
                       "total        needed 8.0 KiB (8192 bytes), available 7.0 KiB "
                       "(7168 bytes)"))
      << msg;
  EXPECT_TRUE(Contains(msg, "cpu:1 took 2 nodes, 4.0 KiB of its 4.0 KiB budget")) << msg;
  // One byte more than needed and it loads.
  config.devices[1].budget_bytes = 8 * kKiB;
  EXPECT_TRUE(Partition(m->graph(), registry, config).ok());
}

TEST(PartitionerTest, BothModesSetIsInvalidArgument) {
  std::shared_ptr<const engine::Model> m = AddChain(2);
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.0/)";
  config.annotation_rules = "cpu:1(enc)";
  config.devices = {{"cpu:1", std::nullopt}};
  EXPECT_EQ(Partition(m->graph(), registry, config).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PartitionerTest, MissingDevices) {
  std::shared_ptr<const engine::Model> m = AddChain(2);
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.0/); cuda:0(layers.1/)";
  config.devices = {{"cpu:1", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status().message()),
            "name rules: rule 2 (column 19) names device 'cuda:0', which is not among the "
            "configured devices; configure the device, or set fallback_on_missing_device to run "
            "its nodes on cpu:0");
  // Configured but absent on this machine.
  config.devices.push_back({"cuda:0", 1 << 30, /*present=*/false});
  r = Partition(m->graph(), registry, config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(r.status().message(), "does not exist on this machine"));
  // Allowed to fall back: a warning, and the nodes run on cpu:0.
  config.fallback_on_missing_device = true;
  r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:1", "cpu:0"}));
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_EQ(r->report.warnings[0],
            "rule 2 names device 'cuda:0', which does not exist on this machine: its nodes go to "
            "the fallback cpu:0");
}

TEST(PartitionerTest, BudgetOnlyWithAnAbsentDevice) {
  std::shared_ptr<const engine::Model> m = AddChain(3);
  engine::KernelRegistry registry = ExactAddRegistry();
  PartitionConfig config;
  config.devices = {{"cuda:0", 4 * kKiB, /*present=*/false}, {"cpu:1", 2 * kKiB}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(r.status().message(), "cuda:0 has a budget but does not exist"));
  config.fallback_on_missing_device = true;
  r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  // cpu:1 still takes its share: one layer of 2 KiB.
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:1", "cpu:0", "cpu:0"}));
  ASSERT_EQ(r->report.notes.size(), 1u);
  EXPECT_EQ(r->report.notes[0],
            "cpu:1 takes layer layers.0 (2.0 KiB of 2.0 KiB); it stops before layer layers.1, "
            "which needs 2.0 KiB with 0 B left");
}

TEST(PartitionerTest, DeviceListChecks) {
  std::shared_ptr<const engine::Model> m = AddChain(1);
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.devices = {{"cpu", std::nullopt}, {"cpu:0", std::nullopt}};
  EXPECT_EQ(std::string(Partition(m->graph(), registry, config).status().message()),
            "devices: 'cpu:0' is listed twice");
  config.devices = {{"gpu", std::nullopt}};
  EXPECT_EQ(Partition(m->graph(), registry, config).status().code(),
            absl::StatusCode::kInvalidArgument);
  config.devices = {{"cpu:1", std::nullopt}};
  config.fallback_device = "cuda:0";
  EXPECT_EQ(std::string(Partition(m->graph(), registry, config).status().message()),
            "fallback device 'cuda:0' is not among the devices (cpu:1)");
  // cpu:0, the default fallback, is implied.
  config.fallback_device = "cpu";
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->report.devices.size(), 2u);
  EXPECT_EQ(r->report.devices[1].device, "cpu:0");
  EXPECT_TRUE(r->report.devices[1].fallback);
}

TEST(PartitionerTest, NoRulesAndNoBudgetsPutsEverythingOnTheFallback) {
  std::shared_ptr<const engine::Model> m = AddChain(3);
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>(3, "cpu:0")));
  EXPECT_TRUE(r->report.copies.empty());
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_TRUE(Contains(r->report.warnings[0], "cuda:0 has neither rules nor a budget"));
}

TEST(PartitionerTest, GenericFusedNameOnlyCaughtByABroadPattern) {
  GraphBuilder b;
  b.Input("x", {64});
  b.Node("/model/layers.0/self_attn/q_proj/MatMul", "Relu", {"x"}, {"q"}, {64});
  b.Node("Attention", "Relu", {"q"}, {"a"}, {64});  // a fusion that named its node generically
  b.Node("/model/layers.0/mlp/Relu", "Relu", {"a"}, {"y"}, {64});
  b.Output("y");
  engine::Graph& g = b.graph();
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
  config.name_rules = "cuda:0(layers.[0-31]/)";
  absl::StatusOr<PartitionResult> r = Partition(g, registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cuda:0", "cpu:0", "cuda:0"}));
  // x uploaded to cuda:0, q to cpu:0, a back to cuda:0.
  EXPECT_EQ(r->report.copies.size(), 3u);
  config.name_rules = "cuda:0(layers.[0-31]/, Attention)";
  r = Partition(g, registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>(3, "cuda:0")));
}

TEST(PartitionerTest, AnnotationModeExactAndPrefix) {
  GraphBuilder b;
  b.Input("x", {64});
  std::string prev = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string out = "v" + std::to_string(i);
    b.Node("n" + std::to_string(i), "Relu", {prev}, {out}, {64});
    prev = out;
  }
  engine::Graph& g = b.graph();
  g.nodes[0].metadata["layer_ann"] = "embed";
  g.nodes[1].metadata["layer_ann"] = "encoder.layer0";
  g.nodes[2].metadata["layer_ann"] = "encoder.head";
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.devices = {{"cuda:0", std::nullopt}, {"cpu:1", std::nullopt}, {"cpu:0", std::nullopt}};
  config.annotation_rules = "cuda:0(encoder); cpu:1(=encoder.head, =embed)";
  absl::StatusOr<PartitionResult> r = Partition(g, registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r), (std::vector<std::string>{"cpu:1", "cuda:0", "cpu:1", "cpu:0"}));
  EXPECT_TRUE(Contains(r->report.mode, "annotation rules (2 rules, 3 patterns)"));
  // A subgraph parent passes its rule to an unannotated node.
  config.subgraph_parent = {-1, -1, -1, 1};
  r = Partition(g, registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->node_device[3], "cuda:0");
}

TEST(PartitionerTest, ApplyPartitionMatchesNodesByName) {
  std::shared_ptr<const engine::Model> m = AddChain(3);
  engine::KernelRegistry registry;
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.1/)";
  config.devices = {{"cpu:1", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  engine::Graph g = m->graph();
  std::reverse(g.nodes.begin(), g.nodes.end());  // order does not matter, names do
  ASSERT_TRUE(ApplyPartition(*r, g).ok());
  EXPECT_EQ(g.nodes[1].device, "cpu:1");
  EXPECT_EQ(g.nodes[0].device, "cpu:0");
  // A renamed node still matches by the value it makes; one with neither is refused.
  g.nodes[0].name = "renamed";
  ASSERT_TRUE(ApplyPartition(*r, g).ok());
  engine::Value fresh;
  fresh.name = "fresh";
  g.nodes[0].outputs = {g.AddValue(std::move(fresh))};
  absl::Status st = ApplyPartition(*r, g);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(st.message(), "'renamed'"));
}

// --- The generated models, with the real CPU kernels' estimates and fusions.

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
    absl::StatusOr<int> fused = engine::ApplyFusions(g, registry_);
    EXPECT_TRUE(fused.ok()) << fused.status();
    fused_ = fused.value_or(0);
    return g;
  }

  engine::KernelRegistry registry_;
  std::shared_ptr<const engine::Model> model_;
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
  absl::StatusOr<PartitionResult> r = Partition(g, registry_, config);
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
  absl::StatusOr<PartitionResult> r = Partition(g, registry_, config);
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
  absl::StatusOr<PartitionResult> r = Partition(g, registry_, config);
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
  absl::StatusOr<PartitionResult> r = Partition(g, registry_, config);
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
  absl::StatusOr<PartitionResult> on_fused = Partition(fused, registry_, config);
  ASSERT_TRUE(on_fused.ok()) << on_fused.status();
  absl::StatusOr<PartitionResult> on_unfused = Partition(unfused, registry_, config);
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
  // then re-check with post-fusion estimates.
  absl::StatusOr<std::shared_ptr<const engine::Model>> m =
      engine::Model::Load(engine::testing::Runfile("tools/models/transformer_32/model.onnx"));
  ASSERT_TRUE(m.ok()) << m.status();
  engine::Graph g = (*m)->graph();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-3]/)";
  config.devices = {{"cpu:1", 1 << 20}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(g, registry_, config);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(ApplyPartition(*r, g).ok());
  ASSERT_TRUE(engine::ApplyFusions(g, registry_).ok());
  RecheckResult recheck = RecheckAfterRewrites(r->report, g, registry_);
  EXPECT_TRUE(recheck.warnings.empty());
  ASSERT_GE(recheck.devices.size(), 2u);
  EXPECT_EQ(recheck.devices[0].device, "cpu:1");
  EXPECT_GT(recheck.devices[0].after, 0u);
  EXPECT_LE(recheck.devices[0].after, 1u << 20);
}

}  // namespace
}  // namespace inferd::partition

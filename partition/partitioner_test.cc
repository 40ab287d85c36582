#include "partition/partitioner.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::FakeDef;
using testing::GraphBuilder;

constexpr uint64_t kKiB = 1024;

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

// x[1,256] -> /model/layers.i/Add(prev, w_i) for i < n, each weight and output 1 KiB. With an
// exact workspace estimate of 0, a run of k > 1 nodes on a device costs k KiB of weights plus
// 2 KiB of planned activations (an output and the next are live together; x is borrowed).
class AddChainGraph {
 public:
  explicit AddChainGraph(int n) {
    b_.Input("x", {1, 256});
    std::string prev = "x";
    for (int i = 0; i < n; ++i) {
      const std::string w = "w" + std::to_string(i), out = "y" + std::to_string(i);
      b_.Weight(w, {1, 256});
      b_.Node("/model/layers." + std::to_string(i) + "/Add", "Add", {prev, w}, {out}, {1, 256});
      prev = out;
    }
    b_.Output(prev);
    graph_ = &b_.graph();
  }
  const engine::Graph& graph() const { return *graph_; }

 private:
  GraphBuilder b_;  // owns the weights the graph refers to
  const engine::Graph* graph_;
};

std::unique_ptr<AddChainGraph> AddChain(int n) { return std::make_unique<AddChainGraph>(n); }

testing::FakeEstimator ExactAddRegistry() {
  testing::FakeEstimator r;
  EXPECT_TRUE(r.Register(FakeDef("Add", "cpu", 0)).ok());
  return r;
}

std::vector<std::string> Devices(const PartitionResult& r) { return r.node_device; }

TEST(PartitionerTest, BudgetCutoffLandsWhereTheArithmeticSays) {
  std::unique_ptr<AddChainGraph> m = AddChain(6);
  testing::FakeEstimator registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.)";
  // 5 KiB: three nodes fit (3 KiB weights + 2 KiB planned), the fourth would make 6 KiB.
  config.devices = {{"cpu:1", 5 * kKiB}, {"cpu:0", std::nullopt}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Devices(*r),
            (std::vector<std::string>{"cpu:1", "cpu:1", "cpu:1", "cpu:0", "cpu:0", "cpu:0"}));
  const DeviceReport* cpu1 = r->report.FindDevice("cpu:1");
  EXPECT_EQ(cpu1->accounted.weights, 3 * kKiB);
  EXPECT_EQ(cpu1->accounted.activations, 2 * kKiB);  // not the 3 KiB sum of its outputs
  EXPECT_EQ(cpu1->activation_sum_bytes, 3 * kKiB);
  EXPECT_EQ(cpu1->accounted.total(), 5 * kKiB);
  ASSERT_EQ(r->report.warnings.size(), 1u);
  EXPECT_EQ(r->report.warnings[0],
            "cpu:1: budget of 5.0 KiB reached at node '/model/layers.3/Add' (rule 1), which needs "
            "1.0 KiB with 0 B left; it and the 2 later nodes of rule 1 go to cpu:0");
  // Exactly 6 KiB: the fourth node fits to the byte.
  config.devices[0].budget_bytes = 6 * kKiB;
  r = Partition(m->graph(), registry, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::count(r->node_device.begin(), r->node_device.end(), "cpu:1"), 4);
  EXPECT_EQ(r->report.FindDevice("cpu:1")->headroom_bytes(), 0);
  // Without the estimate, the 1.5x heuristic adds 1 KiB a node on top: 6 KiB holds two.
  testing::FakeEstimator empty;
  r = Partition(m->graph(), empty, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::count(r->node_device.begin(), r->node_device.end(), "cpu:1"), 2);
  EXPECT_EQ(r->report.FindDevice("cpu:1")->accounted.workspace, 2 * kKiB);
}

// An estimator whose "cuda" kind has no kernel for the node of layer 2.
class NoKernelForLayer2 : public testing::FakeEstimator {
 public:
  bool HasKernel(const engine::Graph& graph, int node, absl::string_view device) const override {
    return !(DeviceType(device) == "cuda" && Contains(graph.nodes[node].name, "layers.2/"));
  }
};

TEST(PartitionerTest, NodesWithoutAKernelOnTheDeviceGoToTheFallback) {
  std::unique_ptr<AddChainGraph> m = AddChain(5);
  NoKernelForLayer2 registry;
  ASSERT_TRUE(registry.Register(FakeDef("Add", "cpu", 0)).ok());
  ASSERT_TRUE(registry.Register(FakeDef("Add", "cuda", 0)).ok());
  const std::vector<std::string> expected = {"cuda:0", "cuda:0", "cpu:0", "cuda:0", "cuda:0"};
  // By rules, and by budget only: either way layer 2 runs on the fallback, and the report says so.
  for (const bool rules : {true, false}) {
    PartitionConfig config;
    if (rules) config.name_rules = "cuda:0(layers.)";
    config.devices = {{"cuda:0", 64 * kKiB}, {"cpu:0", std::nullopt}};
    absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Devices(*r), expected) << (rules ? "rules" : "budget only");
    bool noted = false;
    for (const std::string& note : r->report.notes) {
      noted |= Contains(note,
                        "cuda:0 has no kernel for 1 node it would have taken (Add: "
                        "'/model/layers.2/Add'): they run on the fallback cpu:0");
    }
    EXPECT_TRUE(noted) << (rules ? "rules" : "budget only");
    // The device is charged for what it runs: four weights, not five.
    EXPECT_EQ(r->report.FindDevice("cuda:0")->accounted.weights, 4 * kKiB);
  }
}

TEST(PartitionerTest, LaterRulesForAFullDeviceGoToTheFallback) {
  std::unique_ptr<AddChainGraph> m = AddChain(4);
  testing::FakeEstimator registry = ExactAddRegistry();
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
  std::unique_ptr<AddChainGraph> m = AddChain(4);
  testing::FakeEstimator registry = ExactAddRegistry();
  PartitionConfig config;
  // Layer 3 is offered first, then 2, 1, 0. Layers 3 and 2: 2 KiB weights, y3 (an output,
  // 1 KiB) and y2 with the copy of y1 (2 KiB planned): 5 KiB; layer 1 would add 1 KiB.
  config.name_rules = "cpu:1(layers.3/, layers.2/, layers.1/, layers.0/)";
  config.devices = {{"cpu:1", 5 * kKiB}};
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
  testing::FakeEstimator registry = ExactAddRegistry();
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
  std::unique_ptr<AddChainGraph> m = AddChain(6);
  testing::FakeEstimator registry = ExactAddRegistry();
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.[0-1]/)";
  config.devices = {{"cpu:1", 4 * kKiB}, {"cpu:0", 6 * kKiB}};
  absl::StatusOr<PartitionResult> r = Partition(m->graph(), registry, config);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string msg(r.status().message());
  // Four nodes are left for cpu:0: 4 KiB of weights, 2 KiB planned (the copy of y1, then
  // y2..y4 two at a time) and the output y5 (1 KiB): 7 KiB against 6 KiB.
  EXPECT_TRUE(Contains(msg,
                       "the fallback device cpu:0 must hold every node the other devices "
                       "did not take, which needs 7.0 KiB, but its budget is 6.0 KiB "
                       "(short by 1.0 KiB)"))
      << msg;
  EXPECT_TRUE(Contains(msg, "weights      needed 4.0 KiB (4096 bytes)")) << msg;
  EXPECT_TRUE(Contains(msg, "activations  needed 3.0 KiB (3072 bytes)")) << msg;
  EXPECT_TRUE(Contains(msg,
                       "workspace    needed 0 B (0 bytes) (the 1.5x heuristic for 0 nodes "
                       "without an estimate; 4 estimated, planned with the activations)"))
      << msg;
  EXPECT_TRUE(Contains(msg,
                       "total        needed 7.0 KiB (7168 bytes), available 6.0 KiB "
                       "(6144 bytes)"))
      << msg;
  EXPECT_TRUE(Contains(msg, "cpu:1 took 2 nodes, 4.0 KiB of its 4.0 KiB budget")) << msg;
  // Enough for what it needs and it loads.
  config.devices[1].budget_bytes = 7 * kKiB;
  EXPECT_TRUE(Partition(m->graph(), registry, config).ok());
}

TEST(PartitionerTest, BothModesSetIsInvalidArgument) {
  std::unique_ptr<AddChainGraph> m = AddChain(2);
  testing::FakeEstimator registry;
  PartitionConfig config;
  config.name_rules = "cpu:1(layers.0/)";
  config.annotation_rules = "cpu:1(enc)";
  config.devices = {{"cpu:1", std::nullopt}};
  EXPECT_EQ(Partition(m->graph(), registry, config).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PartitionerTest, MissingDevices) {
  std::unique_ptr<AddChainGraph> m = AddChain(2);
  testing::FakeEstimator registry;
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
  std::unique_ptr<AddChainGraph> m = AddChain(3);
  testing::FakeEstimator registry = ExactAddRegistry();
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
  std::unique_ptr<AddChainGraph> m = AddChain(1);
  testing::FakeEstimator registry;
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
  std::unique_ptr<AddChainGraph> m = AddChain(3);
  testing::FakeEstimator registry;
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
  testing::FakeEstimator registry;
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
  testing::FakeEstimator registry;
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
  std::unique_ptr<AddChainGraph> m = AddChain(3);
  testing::FakeEstimator registry;
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

}  // namespace
}  // namespace inferd::partition

#include "partition/resource_accountant.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::FakeDef;
using testing::GraphBuilder;

constexpr uint64_t kKiB = 1024;

TEST(ComputeNodeCostForBudgetTest, ExactEstimateIsAddedAsIs) {
  ResourceCost base{/*weights=*/1000, /*activations=*/24, /*workspace=*/0};
  ResourceCost c = ComputeNodeCostForBudget(base, 100);
  EXPECT_EQ(c.weights, 1000u);
  EXPECT_EQ(c.activations, 24u);
  EXPECT_EQ(c.workspace, 100u);
  EXPECT_EQ(c.total(), 1124u);
  EXPECT_EQ(ComputeNodeCostForBudget(base, 0).total(), 1024u);
}

TEST(ComputeNodeCostForBudgetTest, NoEstimateMeansOnePointFiveTimesTheBase) {
  ResourceCost base{1000, 24, 0};
  ResourceCost c = ComputeNodeCostForBudget(base, std::nullopt);
  EXPECT_EQ(c.workspace, 512u);
  EXPECT_EQ(c.total(), 1536u);
  // Rounded up: ceil(1.5 * 1025) = 1538.
  EXPECT_EQ(ComputeNodeCostForBudget(ResourceCost{1025, 0, 0}, std::nullopt).total(), 1538u);
  EXPECT_EQ(ComputeNodeCostForBudget(ResourceCost{}, std::nullopt).total(), 0u);
}

// Costs from hostile sizes saturate instead of wrapping to a cost that fits a budget.
TEST(ComputeNodeCostForBudgetTest, CostsSaturateInsteadOfWrapping) {
  constexpr uint64_t kMax = UINT64_MAX;
  ResourceCost base;
  base.weights = kMax - 1;
  base.activations = 8;
  EXPECT_EQ(base.base(), kMax);
  const ResourceCost cost = ComputeNodeCostForBudget(base, std::nullopt);
  EXPECT_EQ(cost.workspace, kMax / 2 + 1);  // ceil(max / 2), not (max + 1) / 2 == 0
  EXPECT_EQ(cost.total(), kMax);
  ResourceCost sum = cost;
  sum += cost;
  EXPECT_EQ(sum.weights, kMax);
  EXPECT_EQ(sum.total(), kMax);
}

// x[256] -> A = Add(x, w) -> B = Mul(a, w) -> C = Relu(b); w is 1 KiB, every output 1 KiB.
struct SharedWeightGraph {
  GraphBuilder b;
  engine::Graph* g;
  SharedWeightGraph() {
    b.Input("x", {256}).Weight("w", {256});
    b.Node("A", "Add", {"x", "w"}, {"a"}, {256});
    b.Node("B", "Mul", {"a", "w"}, {"b"}, {256});
    b.Node("C", "Relu", {"b"}, {"c"}, {256});
    b.Output("c");
    g = &b.graph();
  }
};

TEST(ResourceAccountantTest, NodeCostByCategory) {
  SharedWeightGraph m;
  testing::FakeEstimator registry;
  ASSERT_TRUE(registry.Register(FakeDef("Add", "cpu", 100)).ok());
  ResourceAccountant acct(*m.g, registry, "cpu:0", std::nullopt);
  NodeCost a = acct.AddPending(0);
  EXPECT_EQ(a.cost.weights, kKiB);
  EXPECT_EQ(a.cost.activations, kKiB);
  EXPECT_EQ(a.cost.workspace, 100u);
  EXPECT_TRUE(a.workspace_estimated);
  EXPECT_FALSE(a.shapes_unknown);
  acct.CommitPending();
  // The device: w (1 KiB) + the planned block: a (1 KiB, read by B later) beside A's 100-byte
  // workspace (64-aligned: 1152 B), allocated at the arena's 1280 B size class.
  EXPECT_EQ(acct.committed().weights, kKiB);
  EXPECT_EQ(acct.committed().activations, 1280u);
  EXPECT_EQ(acct.committed().workspace, 0u);  // estimated: inside the block, not on top
  EXPECT_EQ(acct.committed_activations().block_peak, kKiB + 128);
  EXPECT_EQ(acct.committed().total(), 2 * kKiB + 256);
}

TEST(ResourceAccountantTest, HeuristicVersusExactEstimate) {
  SharedWeightGraph m;
  testing::FakeEstimator exact, none;
  ASSERT_TRUE(exact.Register(FakeDef("Add", "cpu", 100)).ok());
  ASSERT_TRUE(none.Register(FakeDef("Add", "cpu", std::nullopt)).ok());
  ResourceAccountant with(*m.g, exact, "cpu:0", std::nullopt);
  ResourceAccountant without(*m.g, none, "cpu:0", std::nullopt);
  EXPECT_EQ(with.AddPending(0).cost.total(), 2 * kKiB + 100);
  NodeCost h = without.AddPending(0);
  EXPECT_FALSE(h.workspace_estimated);
  EXPECT_EQ(h.cost.workspace, kKiB);
  EXPECT_EQ(h.cost.total(), 3 * kKiB);
  // A kernel registered for another device type does not count: cuda gets the heuristic.
  ResourceAccountant cuda(*m.g, exact, "cuda:0", std::nullopt);
  EXPECT_EQ(cuda.AddPending(0).cost.total(), 3 * kKiB);
}

// A kernel without an estimate (or whose estimate failed: the estimator returns nullopt, see
// engine/registry_workspace_estimator_test.cc) gets the heuristic.
TEST(ResourceAccountantTest, FailedEstimateFallsBackToTheHeuristic) {
  SharedWeightGraph m;
  testing::FakeEstimator registry;
  ASSERT_TRUE(registry.Register(FakeDef("Add", "cpu", std::nullopt)).ok());
  EXPECT_EQ(registry.EstimateWorkspace(*m.g, 0, "cpu:0"), std::nullopt);
  ResourceAccountant acct(*m.g, registry, "cpu:0", std::nullopt);
  EXPECT_EQ(acct.AddPending(0).cost.total(), 3 * kKiB);
}

TEST(ResourceAccountantTest, SharedWeightCountsOncePerDevice) {
  SharedWeightGraph m;
  testing::FakeEstimator registry;
  ResourceAccountant cpu0(*m.g, registry, "cpu:0", std::nullopt);
  ResourceAccountant cpu1(*m.g, registry, "cpu:1", std::nullopt);
  EXPECT_EQ(cpu0.AddPending(0).cost.weights, kKiB);
  cpu0.CommitPending();
  EXPECT_EQ(cpu0.AddPending(1).cost.weights, 0u);  // w already on cpu:0
  cpu0.CommitPending();
  EXPECT_EQ(cpu0.committed().weights, kKiB);
  // Another device holds its own copy.
  EXPECT_EQ(cpu1.AddPending(1).cost.weights, kKiB);
}

TEST(ResourceAccountantTest, RejectedNodesWeightsAreNotCounted) {
  SharedWeightGraph m;
  testing::FakeEstimator registry;
  ResourceAccountant acct(*m.g, registry, "cpu:1", 3 * kKiB);
  acct.AddPending(0);
  EXPECT_TRUE(acct.PendingFits());  // exactly the budget
  acct.DiscardPending();
  EXPECT_EQ(acct.committed().total(), 0u);
  // B now pays for w: A's pending weight was dropped with A.
  EXPECT_EQ(acct.AddPending(1).cost.weights, kKiB);
}

TEST(ResourceAccountantTest, PendingUnitCountsEachWeightOnce) {
  SharedWeightGraph m;
  testing::FakeEstimator registry;
  ResourceAccountant acct(*m.g, registry, "cpu:1", 5 * kKiB);
  acct.AddPending(0);  // 1 KiB weight + 1 KiB output -> 3 KiB with the heuristic
  NodeCost b = acct.AddPending(1);
  EXPECT_EQ(b.cost.weights, 0u);  // pending from A
  EXPECT_EQ(b.cost.total(), kKiB + kKiB / 2);
  EXPECT_EQ(acct.pending().total(), 4 * kKiB + kKiB / 2);
  EXPECT_TRUE(acct.PendingFits());
  acct.AddPending(2);
  EXPECT_FALSE(acct.PendingFits());  // 6 KiB > 5 KiB
  acct.DiscardPending();
  EXPECT_EQ(acct.committed().total(), 0u);
}

TEST(ResourceAccountantTest, WeightReadTwiceByOneNodeCountsOnce) {
  GraphBuilder b;
  b.Weight("w", {256});
  b.Node("sq", "Mul", {"w", "w"}, {"y"}, {256});
  engine::Graph& g = b.graph();
  testing::FakeEstimator registry;
  ResourceAccountant acct(g, registry, "cpu:0", std::nullopt);
  EXPECT_EQ(acct.AddPending(0).cost.weights, kKiB);
}

TEST(ResourceAccountantTest, UnknownShapesCountZeroAndAreFlagged) {
  GraphBuilder b;
  b.Input("x", {-1, 256});
  b.Node("r", "Relu", {"x"}, {"y"}, {-1, 256});
  engine::Graph& g = b.graph();
  testing::FakeEstimator registry;
  ResourceAccountant acct(g, registry, "cpu:0", std::nullopt);
  NodeCost c = acct.AddPending(0);
  EXPECT_TRUE(c.shapes_unknown);
  EXPECT_EQ(c.cost.total(), 0u);
  EXPECT_EQ(StaticValueBytes(g.values[g.FindValue("y")]), std::nullopt);
}

// x -> Add(prev, w_i) for 6 nodes: each weight and output 1 KiB; with an estimate of 0, k > 1
// nodes charge k KiB of weights + 2 KiB planned (two outputs live at a time).
TEST(ResourceAccountantTest, CommitFittingRunTakesTheLeadingUnitsThatFit) {
  GraphBuilder b;
  b.Input("x", {256});
  std::string prev = "x";
  std::vector<std::vector<int>> singles;
  for (int i = 0; i < 6; ++i) {
    const std::string w = "w" + std::to_string(i), out = "y" + std::to_string(i);
    b.Weight(w, {256});
    singles.push_back({b.Node("n" + std::to_string(i), "Add", {prev, w}, {out}, {256})});
    prev = out;
  }
  b.Output(prev);
  engine::Graph& g = b.graph();
  testing::FakeEstimator registry;
  ASSERT_TRUE(registry.Register(FakeDef("Add", "cpu", 0)).ok());
  // 5 KiB: three nodes (3 + 2 KiB); the fourth would make 6 KiB.
  ResourceAccountant acct(g, registry, "cpu:1", 5 * kKiB);
  std::vector<NodeCost> costs;
  EXPECT_EQ(acct.CommitFittingRun(singles, &costs), 3u);
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_EQ(costs[2].cost.weights, kKiB);
  EXPECT_EQ(acct.committed().total(), 5 * kKiB);
  // The rest offered again: nothing more fits.
  costs.clear();
  EXPECT_EQ(acct.CommitFittingRun(absl::MakeConstSpan(singles).subspan(3), &costs), 0u);
  EXPECT_TRUE(costs.empty());
  // Units of two nodes: two units are 4 + 2 KiB, over 5 KiB: one unit.
  ResourceAccountant pairs(g, registry, "cpu:1", 5 * kKiB);
  costs.clear();
  EXPECT_EQ(pairs.CommitFittingRun({{0, 1}, {2, 3}, {4, 5}}, &costs), 1u);
  EXPECT_EQ(costs.size(), 2u);
  // Without a budget, everything.
  ResourceAccountant all(g, registry, "cpu:0", std::nullopt);
  costs.clear();
  EXPECT_EQ(all.CommitFittingRun(singles, &costs), 6u);
  EXPECT_EQ(all.committed().weights, 6 * kKiB);
}

// A value lives to its last reader on the device; to the copy before another device's first
// reader; to an unassigned reader itself (a partial partition is never charged less than the
// final one). A graph input is borrowed on a host device and an upload elsewhere.
TEST(ActivationPlanTest, LifetimesFollowTheReadersDevices) {
  GraphBuilder b;
  b.Input("x", {256});
  b.Node("A", "Relu", {"x"}, {"a"}, {256});      // 0
  b.Node("B", "Relu", {"x"}, {"b"}, {256});      // 1
  b.Node("C", "Add", {"a", "b"}, {"c"}, {256});  // 2
  b.Output("c");
  engine::Graph& g = b.graph();
  const std::vector<std::optional<uint64_t>> none(3);
  // A and B here, C unassigned: a and b both live until C: 2 KiB.
  std::vector<int> dev = {0, 0, kUnassigned};
  ActivationCharge c = PlanDeviceActivations(g, 0, /*host_device=*/true, dev, none);
  EXPECT_EQ(c.block_peak, 2 * kKiB);
  EXPECT_EQ(c.output_bytes, 0u);
  // C on device 1: a and b are copied before C, still both live then: 2 KiB here; device 1
  // holds the two copies and makes the output c (1 KiB, in its IOArena).
  dev = {0, 0, 1};
  EXPECT_EQ(PlanDeviceActivations(g, 0, true, dev, none).block_peak, 2 * kKiB);
  ActivationCharge c1 = PlanDeviceActivations(g, 1, true, dev, none);
  EXPECT_EQ(c1.copy_in_bytes, 2 * kKiB);
  EXPECT_EQ(c1.output_bytes, kKiB);
  EXPECT_EQ(c1.total(), 3 * kKiB);
  // B on device 1 with C: a is copied before C, b is made there; x is borrowed on a host device
  // and uploaded to a device that is not (cuda:N).
  dev = {0, 1, 1};
  EXPECT_EQ(PlanDeviceActivations(g, 0, true, dev, none).block_peak, kKiB);
  EXPECT_EQ(PlanDeviceActivations(g, 1, /*host_device=*/true, dev, none).block_peak, 2 * kKiB);
  EXPECT_EQ(PlanDeviceActivations(g, 1, /*host_device=*/false, dev, none).copy_in_bytes, 2 * kKiB);
  // An estimated workspace is planned in the block, for its node's step only.
  std::vector<std::optional<uint64_t>> ws = {std::nullopt, std::nullopt, 4 * kKiB};
  dev = {0, 0, 0};
  ActivationCharge w = PlanDeviceActivations(g, 0, true, dev, ws);
  EXPECT_EQ(w.workspace_bytes, 4 * kKiB);
  EXPECT_EQ(w.block_peak, 6 * kKiB);  // a, b and the workspace at C's step
  EXPECT_EQ(w.block_bytes, ArenaCapacity(6 * kKiB));
}

TEST(ActivationPlanTest, ArenaCapacityIsTheSizeClass) {
  EXPECT_EQ(ArenaCapacity(0), 0u);
  EXPECT_EQ(ArenaCapacity(1), 64u);
  EXPECT_EQ(ArenaCapacity(1024), 1024u);
  EXPECT_EQ(ArenaCapacity(1025), 1280u);
}

}  // namespace
}  // namespace inferd::partition

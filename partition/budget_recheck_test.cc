#include "partition/budget_recheck.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::FakeDef;
using testing::GraphBuilder;
using testing::Inputs;

constexpr uint64_t kKiB = 1024;

// mm (MatMul) -> add (Add) on cpu:1, both estimated at 0 workspace, within a 20 KiB budget.
struct TwoNodeReport {
  GraphBuilder b;
  PlanReport report;
  const uint64_t budget = 20 * kKiB;
  uint64_t planned = 0;
  TwoNodeReport() {
    b.Input("x", {1, 64}).Weight("w", {64, 64}).Weight("bias", {64});
    b.Node("/m/layers.0/mm", "MatMul", {"x", "w"}, {"t"}, {1, 64});
    b.Node("/m/layers.0/add", "Add", {"t", "bias"}, {"y"}, {1, 64});
    b.Output("y");
    testing::FakeEstimator registry;
    EXPECT_TRUE(registry.Register(FakeDef("MatMul", "cpu", 0)).ok());
    EXPECT_TRUE(registry.Register(FakeDef("Add", "cpu", 0)).ok());
    report = BuildPlanReport(Inputs(
        b.graph(), registry, {{"cpu:1", budget}, {"cpu:0", std::nullopt}}, {"cpu:1", "cpu:1"}));
    planned = report.FindDevice("cpu:1")->accounted.total();
  }
};

TEST(BudgetRecheckTest, DeclaredAsEstimatedGivesNoWarning) {
  TwoNodeReport t;
  EXPECT_EQ(t.planned, 16 * kKiB + 3 * 256);  // w, bias; t, y
  ASSERT_LE(t.planned, t.budget);
  const std::vector<DeclaredWorkspace> same = {{"/m/layers.0/mm", "cpu:1", 0},
                                               {"/m/layers.0/add", "cpu:1", 0}};
  RecheckResult unchanged = RecheckBudgets(t.report, same);
  EXPECT_TRUE(unchanged.warnings.empty());
  ASSERT_EQ(unchanged.devices.size(), 2u);
  EXPECT_EQ(unchanged.devices[0].device, "cpu:1");
  EXPECT_EQ(unchanged.devices[0].before, t.planned);
  EXPECT_EQ(unchanged.devices[0].after, t.planned);
}

// Where the session measured a device (its static plan, kernels made), that figure is the one
// checked against the budget.
TEST(BudgetRecheckTest, MeasuredBytesAreWhatTheDeviceNeeds) {
  TwoNodeReport t;
  const std::vector<DeclaredWorkspace> same = {{"/m/layers.0/mm", "cpu:1", 0},
                                               {"/m/layers.0/add", "cpu:1", 0}};
  t.report.devices[0].measured_bytes = t.planned;
  RecheckResult fits = RecheckBudgets(t.report, same);
  EXPECT_TRUE(fits.warnings.empty());
  EXPECT_EQ(fits.devices[0].after, t.planned);
  t.report.devices[0].measured_bytes = t.budget + 1;
  RecheckResult over = RecheckBudgets(t.report, same);
  EXPECT_EQ(over.devices[0].after, t.budget + 1);
  ASSERT_EQ(over.warnings.size(), 1u);
  EXPECT_NE(over.warnings[0].find("over its budget of 20.0 KiB by 1 B"), std::string::npos)
      << over.warnings[0];
}

// The fused node ("<original>/MatMulAddFusion", which the partition did not see) declares a
// large workspace: it takes the place of its original's estimate, and the device goes over.
TEST(BudgetRecheckTest, WarnsWhenAFusedNodeOutgrowsTheBudget) {
  TwoNodeReport t;
  const std::vector<DeclaredWorkspace> fused = {
      {"/m/layers.0/mm/MatMulAddFusion", "cpu:1", 64 * kKiB}};
  RecheckResult r = RecheckBudgets(t.report, fused);
  ASSERT_EQ(r.warnings.size(), 1u);
  const std::string& w = r.warnings[0];
  EXPECT_NE(w.find("cpu:1"), std::string::npos) << w;
  EXPECT_NE(w.find("over its budget of 20.0 KiB"), std::string::npos) << w;
  EXPECT_NE(w.find("'/m/layers.0/mm/MatMulAddFusion' (+"), std::string::npos) << w;
  // Only workspaces are re-checked: weights and activations stay as accounted.
  const uint64_t now = t.planned + 64 * kKiB;
  EXPECT_EQ(r.devices[0].after, now);
  EXPECT_NE(w.find("by " + FormatBytes(now - t.budget)), std::string::npos) << w;
}

// A node known by its own name uses its own estimate, even when a fused node derives from it;
// a node the partition never saw (a boundary copy) counts from 0; other devices are untouched.
TEST(BudgetRecheckTest, MatchesByNameFirstAndCountsUnknownNodesFromZero) {
  TwoNodeReport t;
  const std::vector<DeclaredWorkspace> declared = {
      {"/m/layers.0/mm", "cpu:1", 1 * kKiB},
      {"/m/layers.0/mm/Other", "cpu:1", 2 * kKiB},  // its original is taken by name
      {"t/copy_to_cpu:0", "cpu:0", 3 * kKiB}};
  RecheckResult r = RecheckBudgets(t.report, declared);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.devices[0].after, t.planned + 3 * kKiB);
  EXPECT_EQ(r.devices[1].device, "cpu:0");
  EXPECT_EQ(r.devices[1].after, r.devices[1].before + 3 * kKiB);
}

TEST(BudgetRecheckTest, NamesTheNodesThatGrewLargestFirst) {
  TwoNodeReport t;
  const std::vector<DeclaredWorkspace> declared = {{"/m/layers.0/mm", "cpu:1", 8 * kKiB},
                                                   {"/m/layers.0/add", "cpu:1", 16 * kKiB}};
  RecheckResult r = RecheckBudgets(t.report, declared);
  ASSERT_EQ(r.warnings.size(), 1u);
  const std::string& w = r.warnings[0];
  const size_t add = w.find("'/m/layers.0/add' (+16.0 KiB)");
  const size_t mm = w.find("'/m/layers.0/mm' (+8.0 KiB)");
  ASSERT_NE(add, std::string::npos) << w;
  ASSERT_NE(mm, std::string::npos) << w;
  EXPECT_LT(add, mm) << w;
}

}  // namespace
}  // namespace inferd::partition

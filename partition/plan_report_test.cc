#include "partition/plan_report.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::FakeDef;
using testing::GraphBuilder;

constexpr uint64_t kKiB = 1024;

using testing::Inputs;

TEST(FormatBytesTest, Units) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(200 * kKiB), "200.0 KiB");
  EXPECT_EQ(FormatBytes(3 * kKiB * kKiB / 2), "1.5 MiB");
  EXPECT_EQ(FormatBytes(6ull << 30), "6.00 GiB");
}

// x -> n0 -> n1 -> n2 -> n3 (graph output), every value 1 KiB: at most two are live at once.
struct ChainGraph {
  GraphBuilder b;
  engine::Graph* g;
  explicit ChainGraph(int64_t dim0 = 1) {
    b.Input("x", {dim0, 256});
    std::string prev = "x";
    for (int i = 0; i < 4; ++i) {
      const std::string out = "v" + std::to_string(i);
      b.Node("/m/layers." + std::to_string(i / 2) + "/n" + std::to_string(i), "Relu", {prev}, {out},
             {dim0, 256});
      prev = out;
    }
    b.Output(prev);
    g = &b.graph();
  }
};

TEST(PlanReportTest, ActivationPeakIsLivenessPlanned) {
  ChainGraph m;
  testing::FakeEstimator registry;
  PlanReport r = BuildPlanReport(
      Inputs(*m.g, registry, {{"cpu:0", std::nullopt}}, {"cpu:0", "cpu:0", "cpu:0", "cpu:0"}));
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_TRUE(d.fallback);
  EXPECT_EQ(d.nodes, 4);
  // What budgets see: the planned block (v0..v2, two live at a time) + the output v3; not the
  // 4 KiB sum of the outputs.
  EXPECT_EQ(d.accounted.activations, 3 * kKiB);
  EXPECT_EQ(d.activation_sum_bytes, 4 * kKiB);
  EXPECT_TRUE(d.activation_peak_planned);
  EXPECT_EQ(d.activation_peak_bytes, 2 * kKiB);
  EXPECT_EQ(d.accounted.workspace, 2 * kKiB);  // heuristic: half of 4 KiB
  EXPECT_EQ(d.workspace_heuristic_nodes, 4);
  EXPECT_EQ(d.headroom_bytes(), std::nullopt);
}

TEST(PlanReportTest, UnknownShapesAreMarked) {
  ChainGraph m(/*dim0=*/-1);
  testing::FakeEstimator registry;
  PlanReport r = BuildPlanReport(
      Inputs(*m.g, registry, {{"cpu:0", std::nullopt}}, {"cpu:0", "cpu:0", "cpu:0", "cpu:0"}));
  EXPECT_FALSE(r.devices[0].activation_peak_planned);
  EXPECT_EQ(r.devices[0].activation_peak_bytes, 0u);
  EXPECT_NE(r.ToString().find("(?)"), std::string::npos);
}

TEST(PlanReportTest, SplitAcrossDevicesWithCopiesAndLayers) {
  ChainGraph m;
  testing::FakeEstimator registry;
  PlanReport r =
      BuildPlanReport(Inputs(*m.g, registry, {{"cpu:1", 8 * kKiB}, {"cpu:0", std::nullopt}},
                             {"cpu:1", "cpu:1", "cpu:1", "cpu:0"}));
  const DeviceReport* cpu1 = r.FindDevice("cpu:1");
  const DeviceReport* cpu0 = r.FindDevice("cpu:0");
  ASSERT_NE(cpu1, nullptr);
  ASSERT_NE(cpu0, nullptr);
  EXPECT_EQ(cpu1->nodes, 3);
  // v0, v1, v2 (v2 until its copy) planned two at a time + the heuristic's 512 B a node.
  EXPECT_EQ(cpu1->accounted.total(), 2 * kKiB + 3 * kKiB / 2);
  EXPECT_EQ(cpu1->headroom_bytes(), static_cast<int64_t>(8 * kKiB - 7 * kKiB / 2));
  // v2 crosses to cpu:0: one copy, the only buffer of cpu:0's block (v3 is an output).
  ASSERT_EQ(r.copies.size(), 1u);
  EXPECT_EQ(r.copies[0].value_name, "v2");
  EXPECT_EQ(cpu0->copies_in, 1);
  EXPECT_EQ(cpu0->activation_peak_bytes, kKiB);
  EXPECT_EQ(cpu0->accounted.activations, 2 * kKiB);
  // Layers: layers.0 wholly on cpu:1, layers.1 split.
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].layer, "layers.0");
  ASSERT_EQ(r.layers[0].devices.size(), 1u);
  EXPECT_EQ(r.layers[1].devices.size(), 2u);
  const std::string text = r.ToString();
  EXPECT_NE(text.find("cpu:1 -> cpu:0"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu:1 (1) + cpu:0 (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("8.0 KiB"), std::string::npos) << text;
  EXPECT_NE(r.NodesToString().find("/m/layers.1/n3"), std::string::npos);
}

}  // namespace
}  // namespace inferd::partition

#include "engine/device_copies.h"

#include <string>

#include "engine/domain.h"
#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

// x -> A (cpu:0) -> a -> B (cpu:1) and C (cpu:1) -> outputs.
struct TwoDevices {
  GraphBuilder b;
  Graph* g;
  TwoDevices() {
    b.Input("x", {4});
    b.Node("A", "Relu", {"x"}, {"a"}, {4});
    b.Node("B", "Relu", {"a"}, {"b"}, {4});
    b.Node("C", "Neg", {"a"}, {"c"}, {4});
    b.Output("b").Output("c");
    g = &b.graph();
    g->nodes[0].device = "cpu:0";
    g->nodes[1].device = "cpu:1";
    g->nodes[2].device = "cpu:1";
  }
};

TEST(DeviceCopiesTest, OneCopyPerValueAndReadingDevice) {
  TwoDevices t;
  absl::StatusOr<int> n = InsertDeviceCopies(*t.g);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  const int copy = t.g->FindValue("a/copy_to_cpu:1");
  ASSERT_GE(copy, 0);
  const Node& node = t.g->nodes[t.g->values[copy].producer];
  EXPECT_EQ(node.op_type, kDeviceCopyOp);
  EXPECT_EQ(node.domain, kInferdDomain);
  EXPECT_EQ(node.device, "cpu:1");
  EXPECT_EQ(t.g->values[node.inputs[0]].name, "a");
  // Both readers on cpu:1 read the copy; the copy comes before them.
  for (const Node& n2 : t.g->nodes) {
    if (n2.name == "B" || n2.name == "C") EXPECT_EQ(n2.inputs[0], copy) << n2.name;
  }
  EXPECT_EQ(t.g->values[copy].consumers.size(), 2u);
  EXPECT_TRUE(t.g->Validate().ok());
}

TEST(DeviceCopiesTest, OneDeviceNeedsNoCopies) {
  TwoDevices t;
  for (Node& n : t.g->nodes) n.device = "cpu:0";
  EXPECT_EQ(InsertDeviceCopies(*t.g).value_or(-1), 0);
  EXPECT_EQ(t.g->nodes.size(), 3u);
}

TEST(DeviceCopiesTest, EngineKernelsHaveTheHostCopyAndIf) {
  EXPECT_TRUE(EngineKernels().HasOp(kInferdDomain, kDeviceCopyOp));
  EXPECT_TRUE(EngineKernels().HasOp(kOnnxDomain, "If"));
}

}  // namespace
}  // namespace inferd::engine

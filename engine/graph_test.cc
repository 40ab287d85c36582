#include "engine/graph.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

// x -> A -> a -> B -> b (output); B also reads x.
struct Chain {
  GraphBuilder b;
  Graph* g;
  Chain() {
    b.Input("x", {4});
    b.Node("A", "Relu", {"x"}, {"a"}, {4});
    b.Node("B", "Add", {"a", "x"}, {"b"}, {4});
    b.Output("b");
    g = &b.graph();
  }
};

TEST(GraphTest, ValuesByNameAndEdges) {
  Chain c;
  const Graph& g = *c.g;
  EXPECT_EQ(g.FindValue("nope"), -1);
  const int x = g.FindValue("x"), a = g.FindValue("a"), b = g.FindValue("b");
  ASSERT_GE(x, 0);
  EXPECT_EQ(g.values[x].producer, -1);
  EXPECT_EQ(g.values[a].producer, 0);
  EXPECT_EQ(g.values[b].producer, 1);
  ASSERT_EQ(g.values[x].consumers.size(), 2u);
  EXPECT_EQ(g.values[a].consumers, (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_TRUE(g.values[b].is_graph_output);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, TopologicalSortOrdersProducersFirst) {
  Chain c;
  Graph& g = *c.g;
  std::swap(g.nodes[0], g.nodes[1]);
  g.RebuildEdges();
  ASSERT_TRUE(g.TopologicalSort().ok());
  EXPECT_EQ(g.nodes[0].name, "A");
  EXPECT_EQ(g.nodes[1].name, "B");
  EXPECT_TRUE(g.Validate().ok());
  // Sorted graphs stay as they are.
  ASSERT_TRUE(g.TopologicalSort().ok());
  EXPECT_EQ(g.nodes[0].name, "A");
}

TEST(GraphTest, CycleIsFailedPreconditionNamingANode) {
  Chain c;
  Graph& g = *c.g;
  g.nodes[0].inputs = {g.FindValue("b")};  // A reads B's output
  g.RebuildEdges();
  absl::Status st = g.TopologicalSort();
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(st.message().find("'A'") != absl::string_view::npos ||
              st.message().find("'B'") != absl::string_view::npos)
      << st;
}

TEST(GraphTest, RemoveNodesRebuildsEdges) {
  Chain c;
  Graph& g = *c.g;
  g.nodes[1].inputs = {g.FindValue("x"), g.FindValue("x")};  // B no longer reads a
  g.RemoveNodes({false, true});
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "B");
  EXPECT_EQ(g.values[g.FindValue("b")].producer, 0);
  EXPECT_EQ(g.values[g.FindValue("x")].consumers.size(), 2u);
}

TEST(GraphTest, FusedNamesMapBackToTheirOriginal) {
  const std::string fused = FusedNodeName("/m/layers.0/mm", "/MatMulAddFusion");
  EXPECT_EQ(fused, "/m/layers.0/mm/MatMulAddFusion");
  EXPECT_EQ(OriginalNodeName(fused), "/m/layers.0/mm");
  EXPECT_EQ(OriginalNodeName("plain"), "");
  EXPECT_EQ(OriginalNodeName("a/b"), "a");
}

}  // namespace
}  // namespace inferd::engine

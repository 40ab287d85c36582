#include "partition/boundary_copies.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::GraphBuilder;

TEST(BoundaryCopiesTest, OneCopyPerValueAndReadingDevice) {
  GraphBuilder b;
  b.Input("x", {256}).Weight("w", {256});
  b.Node("A", "Add", {"x", "w"}, {"a"}, {256});  // cpu:1
  b.Node("B", "Relu", {"a"}, {"b"}, {256});      // cpu:0 reads a
  b.Node("C", "Add", {"a", "b"}, {"c"}, {256});  // cpu:0 reads a again, and b
  b.Node("D", "Relu", {"a"}, {"d"}, {256});      // cpu:1: no copy
  engine::Graph& g = b.graph();
  const std::vector<std::string> dev = {"cpu:1", "cpu:0", "cpu:0", "cpu:1"};
  std::vector<BoundaryCopy> copies = FindBoundaryCopies(g, dev);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].value_name, "a");
  EXPECT_EQ(copies[0].from, "cpu:1");
  EXPECT_EQ(copies[0].to, "cpu:0");
  EXPECT_EQ(copies[0].bytes, 1024u);
  EXPECT_TRUE(copies[0].bytes_known);
  EXPECT_EQ(copies[0].first_reader, 1);
  EXPECT_EQ(copies[0].last_reader, 2);
}

TEST(BoundaryCopiesTest, NoCopiesOnOneDevice) {
  GraphBuilder b;
  b.Input("x", {4});
  b.Node("A", "Relu", {"x"}, {"a"}, {4});
  b.Node("B", "Relu", {"a"}, {"b"}, {4});
  EXPECT_TRUE(FindBoundaryCopies(b.graph(), std::vector<std::string>{"cpu:0", "cpu:0"}).empty());
}

TEST(BoundaryCopiesTest, GraphInputsUploadOnlyToNonHostDevices) {
  GraphBuilder b;
  b.Input("x", {-1, 4}).Weight("w", {4});
  b.Node("A", "Add", {"x", "w"}, {"a"}, {-1, 4});  // cpu:1: borrows x
  b.Node("B", "Add", {"x", "a"}, {"b"}, {-1, 4});  // cuda:0: uploads x, copies a
  engine::Graph& g = b.graph();
  std::vector<BoundaryCopy> copies =
      FindBoundaryCopies(g, std::vector<std::string>{"cpu:1", "cuda:0"});
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].value_name, "x");
  EXPECT_EQ(copies[0].from, "host");
  EXPECT_EQ(copies[0].to, "cuda:0");
  EXPECT_FALSE(copies[0].bytes_known);
  EXPECT_EQ(copies[1].value_name, "a");
  EXPECT_EQ(copies[1].from, "cpu:1");
  // Weights are never copies.
  for (const BoundaryCopy& c : copies) EXPECT_NE(c.value_name, "w");
}

}  // namespace
}  // namespace inferd::partition

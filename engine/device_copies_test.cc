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
  KernelRegistry none;
  absl::StatusOr<DeviceCopies> n = InsertDeviceCopies(*t.g, none, "cpu:0");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->copies, 1);
  EXPECT_EQ(n->output_copies, 0);  // host memory: outputs are read where they are
  EXPECT_TRUE(n->uploads.empty());
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
  KernelRegistry none;
  absl::StatusOr<DeviceCopies> n = InsertDeviceCopies(*t.g, none, "cpu:0");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->copies, 0);
  EXPECT_EQ(t.g->nodes.size(), 3u);
}

// x -> A Relu (cuda:0) -> a; B Reshape(a, shape) (cuda:0) -> b, a graph output; C Add(a, w)
// (cuda:0) -> c; D Neg(c) (cpu:0) -> d, a graph output. The CUDA Reshape reads its shape on the
// host.
struct OnAGpu {
  GraphBuilder b;
  Graph* g;
  KernelRegistry registry;
  OnAGpu() {
    b.Input("x", {4});
    b.Weight("w", {4});
    b.Weight("shape", {1});
    b.Node("A", "Relu", {"x"}, {"a"}, {4});
    b.Node("B", "Reshape", {"a", "shape"}, {"b"}, {4});
    b.Node("C", "Add", {"a", "w"}, {"c"}, {4});
    b.Node("D", "Neg", {"c"}, {"d"}, {4});
    b.Output("b").Output("d");
    g = &b.graph();
    for (Node& n : g->nodes) n.device = n.name == "D" ? "cpu:0" : "cuda:0";
    KernelDef reshape;
    reshape.op_type = "Reshape";
    reshape.device_type = DeviceKind::kCuda;
    reshape.host_inputs = {1};
    reshape.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
      return absl::UnimplementedError("not run");
    };
    EXPECT_TRUE(registry.Register(std::move(reshape)).ok());
  }
  const Node& ProducerOf(const std::string& value) const {
    return g->nodes[g->values[g->FindValue(value)].producer];
  }
};

TEST(DeviceCopiesTest, GpuReadsUploadedWeightsCopiedInputsAndHostShapes) {
  OnAGpu t;
  absl::StatusOr<DeviceCopies> n = InsertDeviceCopies(*t.g, t.registry, "cpu:0");
  ASSERT_TRUE(n.ok()) << n.status();
  // x is uploaded in each run by a copy on the device; c comes back for D.
  EXPECT_EQ(n->copies, 2);
  EXPECT_EQ(t.ProducerOf("x/copy_to_cuda:0").device, "cuda:0");
  EXPECT_EQ(t.ProducerOf("c/copy_to_cpu:0").device, "cpu:0");
  // w is uploaded once at load, as its own value; Reshape's shape stays a host weight.
  ASSERT_EQ(n->uploads.size(), 1u);
  EXPECT_EQ(t.g->values[n->uploads[0].host_value].name, "w");
  const Value& w = t.g->values[n->uploads[0].device_value];
  EXPECT_EQ(w.name, "w/on_cuda:0");
  EXPECT_EQ(w.resident_device, "cuda:0");
  EXPECT_NE(w.initializer, nullptr);  // the host weight, until the session binds the upload
  EXPECT_EQ(t.g->values[t.ProducerOf("c").inputs[1]].name, "w/on_cuda:0");
  EXPECT_EQ(t.g->values[t.ProducerOf("b/on_cuda:0").inputs[1]].name, "shape");
  // b is made on the device under another name and copied back under its own.
  EXPECT_EQ(n->output_copies, 1);
  const Node& back = t.ProducerOf("b");
  EXPECT_EQ(back.op_type, kDeviceCopyOp);
  EXPECT_EQ(back.device, "cpu:0");
  EXPECT_EQ(t.g->values[back.inputs[0]].name, "b/on_cuda:0");
  EXPECT_FALSE(t.g->values[back.inputs[0]].is_graph_output);
  ASSERT_EQ(t.g->outputs.size(), 2u);
  EXPECT_EQ(t.g->values[t.g->outputs[0]].name, "b");
  EXPECT_TRUE(t.g->values[t.g->outputs[0]].is_graph_output);
  EXPECT_EQ(t.g->values[t.g->outputs[1]].name, "d");
  EXPECT_TRUE(t.g->Validate().ok());
}

TEST(DeviceCopiesTest, ShapeMadeOnTheGpuIsCopiedToTheHostForAHostInput) {
  OnAGpu t;
  // The shape is made on the device (a Relu of a weight): the Reshape reads a host copy.
  t.b.Node("S", "Relu", {"shape"}, {"s"}, {1});
  t.g->nodes.back().device = "cuda:0";
  t.g->nodes[1].inputs[1] = t.g->FindValue("s");
  ASSERT_TRUE(t.g->TopologicalSort().ok());
  absl::StatusOr<DeviceCopies> n = InsertDeviceCopies(*t.g, t.registry, "cpu:0");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(t.g->values[t.ProducerOf("b/on_cuda:0").inputs[1]].name, "s/copy_to_cpu:0");
  EXPECT_EQ(t.ProducerOf("s/copy_to_cpu:0").device, "cpu:0");
}

TEST(DeviceCopiesTest, CopiesBetweenTwoGpusAreRefused) {
  TwoDevices t;
  t.g->nodes[0].device = "cuda:0";
  t.g->nodes[1].device = "cuda:1";
  t.g->nodes[2].device = "cuda:1";
  KernelRegistry none;
  absl::StatusOr<DeviceCopies> n = InsertDeviceCopies(*t.g, none, "cpu:0");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(n.status().message().find("made on cuda:0 and read on cuda:1"), std::string::npos)
      << n.status();
}

TEST(DeviceCopiesTest, EngineKernelsHaveTheHostCopyAndIf) {
  EXPECT_TRUE(EngineKernels().HasOp(kInferdDomain, kDeviceCopyOp));
  EXPECT_NE(EngineKernels().Find(kInferdDomain, kDeviceCopyOp, 1, DeviceKind::kCuda,
                                 {DataType::kFloat32}, {DataType::kFloat32}),
            nullptr);
  EXPECT_TRUE(EngineKernels().HasOp(kOnnxDomain, "If"));
}

}  // namespace
}  // namespace inferd::engine

// Blocked activations between CPU convolutions (engine/blocked_layouts.h) with the real CPU
// kernels: which values the pass keeps blocked (the convolutions' blocked_input /
// blocked_output), what it must leave plain (graph outputs, values read by other ops, channels
// not a multiple of the block, operands whose shapes are not known to match), and that a
// session computes what the same model does without fusions (every value plain), at 1 and 2
// threads and at several batch sizes of a symbolic batch dim.
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/blocked_layouts.h"
#include "engine/kernel_registry.h"
#include "engine/model.h"
#include "engine/rewrites.h"
#include "engine/session.h"
#include "engine/testing/model_builder.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::ModelBuilder;

const engine::KernelRegistry& Registry() {
  static const engine::KernelRegistry* registry = [] {
    auto* r = new engine::KernelRegistry();
    EXPECT_TRUE(kernels::cpu::RegisterCpuKernels(*r).ok());
    return r;
  }();
  return *registry;
}

std::vector<float> Random(int64_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Adds a convolution `name` (weights "<name>_w", bias "<name>_b") from `in` to `out`.
onnx::NodeProto& AddConv(ModelBuilder& b, const std::string& name, const std::string& in,
                         const std::string& out, int64_t c_in, int64_t c_out, int64_t k,
                         int64_t group = 1) {
  static int seed = 100;
  b.Initializer<float>(name + "_w", Shape{c_out, c_in / group, k, k},
                       Random(c_out * (c_in / group) * k * k, ++seed));
  b.Initializer<float>(name + "_b", Shape{c_out}, Random(c_out, ++seed));
  onnx::NodeProto& n = b.Node("Conv", {in, name + "_w", name + "_b"}, {out}, name);
  ModelBuilder::IntsAttr(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  if (group != 1) ModelBuilder::IntAttr(n, "group", group);
  return n;
}

struct Loaded {
  std::unique_ptr<engine::Session> session;
  // node name -> (blocked_input, blocked_output) for the nodes that carry them
  std::map<std::string, std::pair<int64_t, int64_t>> marks;
};

Loaded Load(const ModelBuilder& b, bool fusions, int threads) {
  Loaded l;
  auto model = engine::Model::Parse(b.Serialize(), "");
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return l;
  engine::SessionOptions opts;
  opts.enable_fusions = fusions;
  opts.intra_op_threads = threads;
  auto s = engine::Session::Create(*model, opts, Registry());
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return l;
  l.session = *std::move(s);
  for (const engine::Node& n : l.session->graph().nodes) {
    int64_t in = -1, out = -1;
    for (const onnx::AttributeProto& a : n.attributes) {
      if (a.name() == engine::kBlockedInputAttr) in = a.i();
      if (a.name() == engine::kBlockedOutputAttr) out = a.i();
    }
    if (in >= 0 || out >= 0) l.marks[n.name] = {in, out};
  }
  return l;
}

// Runs `s` on `inputs` (name -> shape, seeded data) and returns each output's floats.
std::vector<std::vector<float>> RunModel(engine::Session& s,
                                         const std::vector<std::pair<std::string, Shape>>& inputs) {
  std::vector<std::vector<float>> data;
  std::vector<engine::InputTensor> in;
  int seed = 1;
  for (const auto& [name, shape] : inputs) data.push_back(Random(shape.NumElements(), seed++));
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back({inputs[i].first, DataType::kFloat32, inputs[i].second, data[i].data(),
                  data[i].size() * sizeof(float)});
  }
  std::vector<std::vector<float>> result;
  auto out = s.Run(in);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return result;
  for (const engine::OutputTensor& o : *out) {
    const float* p = static_cast<const float*>(o.buffer.data());
    result.emplace_back(p, p + o.shape.NumElements());
  }
  return result;
}

// The model with fusions (blocked values) against the model without (all plain).
void ExpectSameAsPlain(const ModelBuilder& b,
                       const std::vector<std::pair<std::string, Shape>>& inputs, int threads) {
  Loaded fused = Load(b, true, threads), plain = Load(b, false, threads);
  ASSERT_TRUE(fused.session && plain.session);
  EXPECT_TRUE(plain.marks.empty());
  const auto got = RunModel(*fused.session, inputs), want = RunModel(*plain.session, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size());
    for (size_t i = 0; i < got[o].size(); ++i) {
      ASSERT_NEAR(got[o][i], want[o][i], 1e-4f * std::max(1.0f, std::fabs(want[o][i])))
          << "output " << o << " element " << i;
    }
  }
}

// x [batch, 8, 12, 12] -> c1 (8->32, + Relu) -> c2 (32->32 3x3) -> dw (depthwise 3x3)
//   -> Add(dw, c1's output) -> Clip(0, 6) -> Mul by 0.5 -> Concat(.., c2's output) (64 channels)
//   -> MaxPool 3x3 stride 2 -> c3 (64->16 1x1) -> y, and the pool's output -> GlobalAveragePool
//   -> avg. Everything between c1 and c3 (and the average pool) can stay blocked. At 40x40 the
// convolutions are cut into parts (channel blocks of one image, or images) at 2 threads.
ModelBuilder ChainModel(int64_t size = 12) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 8, size, size});
  AddConv(b, "c1", "x", "c1_out", 8, 32, 3);
  b.Node("Relu", {"c1_out"}, {"r1"}, "relu1");
  AddConv(b, "c2", "r1", "c2_out", 32, 32, 3);
  AddConv(b, "dw", "c2_out", "dw_out", 32, 32, 3, /*group=*/32);
  b.Node("Add", {"dw_out", "r1"}, {"sum"}, "add");
  b.Initializer<float>("lo", Shape{}, {0.0f});
  b.Initializer<float>("hi", Shape{}, {6.0f});
  b.Node("Clip", {"sum", "lo", "hi"}, {"clipped"}, "clip");
  b.Initializer<float>("half", Shape{}, {0.5f});
  b.Node("Mul", {"clipped", "half"}, {"scaled"}, "mul");
  ModelBuilder::IntAttr(b.Node("Concat", {"scaled", "c2_out"}, {"cat"}, "concat"), "axis", 1);
  onnx::NodeProto& pool = b.Node("MaxPool", {"cat"}, {"pooled"}, "pool");
  ModelBuilder::IntsAttr(pool, "kernel_shape", {3, 3});
  ModelBuilder::IntsAttr(pool, "strides", {2, 2});
  ModelBuilder::IntsAttr(pool, "pads", {1, 1, 1, 1});
  AddConv(b, "c3", "pooled", "y", 64, 16, 1);
  b.Node("GlobalAveragePool", {"pooled"}, {"avg"}, "gap");
  b.Output("y", DataType::kFloat32, {-1, 16, size / 2, size / 2});
  b.Output("avg", DataType::kFloat32, {-1, 64, 1, 1});
  return b;
}

TEST(BlockedLayoutsTest, ChainStaysBlockedBetweenItsEdges) {
  Loaded l = Load(ChainModel(), true, 1);
  ASSERT_TRUE(l.session);
  using Marks = std::map<std::string, std::pair<int64_t, int64_t>>;
  EXPECT_EQ(l.marks, (Marks{{"c1/ConvReluFusion", {0, 1}},  // x is a graph input
                            {"c2", {1, 1}},
                            {"dw", {1, 1}},
                            {"pool", {1, 1}},
                            {"gap", {1, -1}},   // avg: the same bytes either way
                            {"c3", {1, 0}}}));  // y is a graph output
  for (const engine::Node& n : l.session->graph().nodes) {
    if (n.name == "c2") EXPECT_EQ(n.op_type, "FusedConv");  // Conv, marked, is a FusedConv
  }
}

TEST(BlockedLayoutsTest, ChainEqualsPlainChain) {
  for (int threads : {1, 2}) {
    for (int64_t batch : {1, 3}) {
      for (int64_t size : {12, 40}) {
        SCOPED_TRACE(testing::Message()
                     << threads << " threads, batch " << batch << ", " << size << "x" << size);
        ExpectSameAsPlain(ChainModel(size), {{"x", Shape{batch, 8, size, size}}}, threads);
      }
    }
  }
}

// The edges a blocked region must not cross, each with 32 channels where it matters:
//   a -> AveragePool (not a convolution, a transparent op or a blockable pool) -> b;  a is
//   also read by c;
//   c writes 24 channels (not a multiple of the block) -> d;
//   e writes a graph output that f also reads;
//   g (input x) + h (input z: another symbolic batch) -> Add: the operands' shapes are not
//   known to match, so the Add is not transparent -> k.
ModelBuilder EdgesModel() {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 16, 8, 8});
  b.Input("z", DataType::kFloat32, {-1, 16, 8, 8});
  b.proto()
      .mutable_graph()
      ->mutable_input(1)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("other_batch");
  AddConv(b, "a", "x", "a_out", 16, 32, 3);
  onnx::NodeProto& pool = b.Node("AveragePool", {"a_out"}, {"pooled"}, "pool");
  ModelBuilder::IntsAttr(pool, "kernel_shape", {3, 3});
  ModelBuilder::IntsAttr(pool, "pads", {1, 1, 1, 1});
  AddConv(b, "b", "pooled", "y1", 32, 16, 1);
  AddConv(b, "c", "a_out", "c_out", 32, 24, 3);
  AddConv(b, "d", "c_out", "y2", 24, 16, 1);
  AddConv(b, "e", "x", "y3", 16, 32, 3);
  AddConv(b, "f", "y3", "y4", 32, 16, 1);
  AddConv(b, "g", "x", "g_out", 16, 32, 3);
  AddConv(b, "h", "z", "h_out", 16, 32, 3);
  b.Node("Add", {"g_out", "h_out"}, {"gh"}, "add");
  AddConv(b, "k", "gh", "y5", 32, 16, 1);
  b.Output("y1", DataType::kFloat32, {-1, 16, 8, 8});
  b.Output("y2", DataType::kFloat32, {-1, 16, 8, 8});
  b.Output("y3", DataType::kFloat32, {-1, 32, 8, 8});
  b.Output("y4", DataType::kFloat32, {-1, 16, 8, 8});
  b.Output("y5", DataType::kFloat32, {-1, 16, 8, 8});
  return b;
}

TEST(BlockedLayoutsTest, EdgesStayPlain) {
  Loaded l = Load(EdgesModel(), true, 1);
  ASSERT_TRUE(l.session);
  EXPECT_TRUE(l.marks.empty()) << l.marks.begin()->first;
  for (int threads : {1, 2}) {
    ExpectSameAsPlain(EdgesModel(), {{"x", Shape{2, 16, 8, 8}}, {"z", Shape{2, 16, 8, 8}}},
                      threads);
  }
}

// The same Add with both operands from one input: their shapes match (the same symbol for the
// batch), so the Add is transparent and g -> Add -> k stays blocked.
TEST(BlockedLayoutsTest, SameSymbolicShapesAreTransparent) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 16, 9, 7});
  AddConv(b, "g", "x", "g_out", 16, 32, 3);
  AddConv(b, "h", "x", "h_out", 16, 32, 3);
  b.Node("Add", {"g_out", "h_out"}, {"gh"}, "add");
  AddConv(b, "k", "gh", "y", 32, 16, 1);
  b.Output("y", DataType::kFloat32, {-1, 16, 9, 7});
  Loaded l = Load(b, true, 1);
  ASSERT_TRUE(l.session);
  using Marks = std::map<std::string, std::pair<int64_t, int64_t>>;
  EXPECT_EQ(l.marks, (Marks{{"g", {0, 1}}, {"h", {0, 1}}, {"k", {1, 0}}}));
  for (int threads : {1, 2}) {
    for (int64_t batch : {1, 2}) ExpectSameAsPlain(b, {{"x", Shape{batch, 16, 9, 7}}}, threads);
  }
}

// Spatial dims not known at load: a convolution's output shape is then unknown past its
// channels, so an Add of two such outputs falls back to plain operands (its shapes cannot be
// shown to match), while a convolution feeding a convolution stays blocked.
TEST(BlockedLayoutsTest, UnknownSpatialDimsFallBackAtBinaryOps) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 16, -1, -1});
  AddConv(b, "g", "x", "g_out", 16, 32, 3);
  AddConv(b, "h", "x", "h_out", 16, 32, 3);
  b.Node("Add", {"g_out", "h_out"}, {"gh"}, "add");
  AddConv(b, "k", "gh", "y", 32, 16, 1);
  AddConv(b, "m1", "x", "m1_out", 16, 32, 3);
  AddConv(b, "m2", "m1_out", "y2", 32, 16, 3);
  b.Output("y", DataType::kFloat32, {-1, 16, -1, -1});
  b.Output("y2", DataType::kFloat32, {-1, 16, -1, -1});
  Loaded l = Load(b, true, 1);
  ASSERT_TRUE(l.session);
  using Marks = std::map<std::string, std::pair<int64_t, int64_t>>;
  EXPECT_EQ(l.marks, (Marks{{"m1", {0, 1}}, {"m2", {1, 0}}}));
  for (int threads : {1, 2}) {
    ExpectSameAsPlain(b, {{"x", Shape{1, 16, 9, 7}}}, threads);
    ExpectSameAsPlain(b, {{"x", Shape{2, 16, 5, 6}}}, threads);
  }
}

// Slice along the channels: of whole blocks (16..48 of 64) it is transparent; of channels 8..40
// it is not, and its input stays plain.
TEST(BlockedLayoutsTest, ChannelSlicesOfWholeBlocks) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 16, 10, 10});
  AddConv(b, "a1", "x", "a1_out", 16, 64, 3);
  AddConv(b, "a2", "x", "a2_out", 16, 64, 3);
  b.Initializer<int64_t>("axes", Shape{1}, {1});
  b.Initializer<int64_t>("s16", Shape{1}, {16});
  b.Initializer<int64_t>("e48", Shape{1}, {48});
  b.Initializer<int64_t>("s8", Shape{1}, {8});
  b.Initializer<int64_t>("e40", Shape{1}, {40});
  b.Node("Slice", {"a1_out", "s16", "e48", "axes"}, {"whole"}, "slice_whole");
  b.Node("Slice", {"a2_out", "s8", "e40", "axes"}, {"part"}, "slice_part");
  AddConv(b, "b", "whole", "y1", 32, 16, 3);
  AddConv(b, "c", "part", "y2", 32, 16, 3);
  b.Output("y1", DataType::kFloat32, {-1, 16, 10, 10});
  b.Output("y2", DataType::kFloat32, {-1, 16, 10, 10});
  Loaded l = Load(b, true, 1);
  ASSERT_TRUE(l.session);
  using Marks = std::map<std::string, std::pair<int64_t, int64_t>>;
  EXPECT_EQ(l.marks, (Marks{{"a1", {0, 1}}, {"b", {1, 0}}}));
  for (int threads : {1, 2}) {
    for (int64_t batch : {1, 2}) ExpectSameAsPlain(b, {{"x", Shape{batch, 16, 10, 10}}}, threads);
  }
}

// The pass on a graph that is not on a CPU device changes nothing.
TEST(BlockedLayoutsTest, OnlyCpuNodes) {
  auto model = engine::Model::Parse(ChainModel().Serialize(), "");
  ASSERT_TRUE(model.ok()) << model.status();
  engine::Graph g = (*model)->graph();
  for (engine::Node& n : g.nodes) n.device = "cuda:0";
  EXPECT_EQ(engine::AssignBlockedLayouts(g, Registry()), 0);
  for (engine::Node& n : g.nodes) n.device = "cpu:0";
  EXPECT_GT(engine::AssignBlockedLayouts(g, Registry()), 0);
}

}  // namespace
}  // namespace inferd

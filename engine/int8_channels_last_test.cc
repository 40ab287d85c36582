// The channels-last pass (int8_channels_last.h): which 8-bit values stay channels-last between
// QLinearConvs and same-shape QLinearAdds, and which must stay plain.
#include "engine/int8_channels_last.h"

#include <string>
#include <vector>

#include "engine/domain.h"
#include "engine/rewrite_util.h"
#include "engine/testing/fake_kernel_def.h"
#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::engine {
namespace {

using partition::testing::GraphBuilder;

KernelDef Def(const std::string& domain, const std::string& op) {
  return testing::FakeKernelDef(domain, op);
}

KernelRegistry ChannelsLastRegistry() {
  KernelRegistry registry;
  EXPECT_TRUE(registry.Register(Def(kInferdDomain, "QLinearConv")).ok());
  return registry;
}

// x uint8 [1,16,8,8] -> conv1 -> a -> conv2 -> b; QLinearAdd(a, b) -> c -> conv3 -> y (output).
// `reader_of_a`: another op reading a ("" for none).
struct ConvChain {
  GraphBuilder gb;
  Graph* g;
  float scale = 0.1f;
  uint8_t zp = 3;
  int8_t w[16 * 16] = {};
  Tensor s, z, wt;
  explicit ConvChain(const std::string& reader_of_a = "") {
    const std::vector<int64_t> dims = {1, 16, 8, 8};
    gb.Input("x", dims).Weight("s", {}).Weight("z", {}).Weight("w", {16, 16, 1, 1});
    auto conv = [&](const std::string& name, const std::string& in, const std::string& out) {
      gb.Node(name, "QLinearConv", {in, "s", "z", "w", "s", "", "s", "z"}, {out}, dims);
    };
    conv("/conv1", "x", "a");
    conv("/conv2", "a", "b");
    gb.Node("/add", "QLinearAdd", {"a", "s", "z", "b", "s", "z", "s", "z"}, {"c"}, dims);
    conv("/conv3", "c", "y");
    if (!reader_of_a.empty()) gb.Node("/other", reader_of_a, {"a"}, {"o"}, dims);
    gb.Output("y");
    if (!reader_of_a.empty()) gb.Output("o");
    g = &gb.graph();
    s = Tensor::Borrowed(DataType::kFloat32, Shape{}, &scale);
    z = Tensor::Borrowed(DataType::kUint8, Shape{}, &zp);
    wt = Tensor::Borrowed(DataType::kInt8, Shape{16, 16, 1, 1}, w);
    Set("s", &s);
    Set("z", &z);
    Set("w", &wt);
    for (const char* v : {"x", "a", "b", "c", "y"}) g->values[g->FindValue(v)].type = kU8;
    for (Node& n : g->nodes) {
      n.device = "cpu:0";
      if (n.op_type == "QLinearAdd") n.domain = kMicrosoftDomain;
    }
  }
  void Set(const std::string& name, const Tensor* t) {
    Value& v = g->values[g->FindValue(name)];
    v.initializer = t;
    v.type = t->dtype();
  }
  const Node& At(const std::string& name) const {
    for (const Node& n : g->nodes) {
      if (n.name == name) return n;
    }
    return g->nodes[0];
  }
  static constexpr DataType kU8 = DataType::kUint8;
};

// (channels_last_input, channels_last_output) of a node, -1 where absent.
std::pair<int64_t, int64_t> Layout(const Node& n) {
  return {rewrite::IntAttribute(n, kChannelsLastInputAttr, -1),
          rewrite::IntAttribute(n, kChannelsLastOutputAttr, -1)};
}

TEST(Int8ChannelsLastTest, ValuesBetweenConvsAndAddsStayChannelsLast) {
  ConvChain m;
  EXPECT_EQ(AssignInt8ChannelsLast(*m.g, ChannelsLastRegistry()), 3);  // a, b, c
  EXPECT_EQ(m.At("/conv1").domain, kInferdDomain);
  EXPECT_EQ(Layout(m.At("/conv1")), std::make_pair(int64_t{0}, int64_t{1}));  // x: graph input
  EXPECT_EQ(Layout(m.At("/conv2")), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(Layout(m.At("/conv3")), std::make_pair(int64_t{1}, int64_t{0}));  // y: graph output
  EXPECT_EQ(m.At("/add").domain, kMicrosoftDomain);  // elementwise: unchanged
}

TEST(Int8ChannelsLastTest, AValueAnotherOpReadsStaysPlainAndSoDoesItsAdd) {
  ConvChain m("DequantizeLinear");
  // a is read plainly by the DequantizeLinear, so the QLinearAdd of a, b and c is plain, and
  // with it b (which it reads) and c (which it writes): nothing stays channels-last.
  EXPECT_EQ(AssignInt8ChannelsLast(*m.g, ChannelsLastRegistry()), 0);
  for (const Node& n : m.g->nodes) {
    EXPECT_EQ(Layout(n), std::make_pair(int64_t{-1}, int64_t{-1})) << n.name;
    if (n.op_type == "QLinearConv") EXPECT_EQ(n.domain, kOnnxDomain) << n.name;
  }
}

// x -> conv1 -> a -> MaxPool [-> its Indices] -> p -> conv2 -> y.
TEST(Int8ChannelsLastTest, MaxPoolBetweenConvsStaysChannelsLastUnlessItWritesIndices) {
  for (bool indices : {false, true}) {
    ConvChain m;
    Graph& g = *m.g;
    // Rewire: conv2 reads p, the MaxPool of a; drop the add and conv3 from the picture by
    // making conv2's output the graph's.
    GraphBuilder& gb = m.gb;
    gb.Node("/pool", "MaxPool", {"a"},
            indices ? std::vector<std::string>{"p", "pi"} : std::vector<std::string>{"p"},
            {1, 16, 8, 8});
    g.RebuildEdges();
    Node& conv2 = g.nodes[1];
    ASSERT_EQ(conv2.name, "/conv2");
    conv2.inputs[0] = g.FindValue("p");
    g.values[g.FindValue("p")].type = DataType::kUint8;
    for (Node& n : g.nodes) n.device = "cpu:0";
    g.RebuildEdges();
    AssignInt8ChannelsLast(g, ChannelsLastRegistry());
    const Node& pool = m.At("/pool");
    EXPECT_EQ(rewrite::IntAttribute(pool, kChannelsLastAttr, 0), indices ? 0 : 1);
    EXPECT_EQ(Layout(m.At("/conv2")).first, indices ? -1 : 1);  // -1: left as it was
  }
}

TEST(Int8ChannelsLastTest, NothingWithoutTheChannelsLastKernel) {
  ConvChain m;
  EXPECT_EQ(AssignInt8ChannelsLast(*m.g, KernelRegistry()), 0);
  EXPECT_EQ(m.At("/conv2").domain, kOnnxDomain);
}

TEST(Int8ChannelsLastTest, ComputedWeightsKeepTheirConvPlain) {
  ConvChain m;
  m.g->values[m.g->FindValue("w")].initializer = nullptr;  // not requantized by oneDNN
  EXPECT_EQ(AssignInt8ChannelsLast(*m.g, ChannelsLastRegistry()), 0);
}

}  // namespace
}  // namespace inferd::engine

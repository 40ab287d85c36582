// engine/kv_cache_rewrite on a real Hugging Face export (genai/testdata/models/llama, repeat_kv
// with Expand/Reshape) and GPT-2 (no repeat), and on small graphs it must refuse, leaving them
// unchanged.
#include "engine/kv_cache_rewrite.h"

#include <string>

#include "absl/strings/match.h"
#include "engine/domain.h"
#include "engine/model.h"
#include "engine/testing/model_builder.h"
#include "engine/testing/runfiles.h"
#include "gtest/gtest.h"

namespace inferd::engine {
namespace {

int Count(const Graph& g, absl::string_view op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

class RealExportTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealExportTest, EveryCacheAppendsInPlaceAndIsReadWithoutACopy) {
  auto model = Model::Load(testing::Runfile("genai/testdata/models/" + GetParam() + "/model.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  Graph g = (*model)->graph();
  const int concats_before = Count(g, "Concat"), expands_before = Count(g, "Expand");
  auto r = RewriteKvCacheInPlace(g);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->blocks.size(), 4u);  // 2 layers x key, value
  EXPECT_EQ(r->matmuls, 4);         // Q K^T and P V per layer
  EXPECT_EQ(Count(g, "KvCacheAppend"), 4);
  EXPECT_EQ(Count(g, "KvCacheMatMul"), 4);
  EXPECT_EQ(Count(g, "Concat"), concats_before - 4);
  // repeat_kv's Expand of keys and values in each layer (Llama has 2 kv heads for 4 heads).
  EXPECT_EQ(expands_before - Count(g, "Expand"), GetParam() == "llama" ? 4 : 0);
  for (const KvCacheRewrite::Block& b : r->blocks) {
    const Value& past = g.values[g.FindValue(b.input)];
    EXPECT_TRUE(past.is_graph_input);
    EXPECT_EQ(past.shape.dims[2].symbol, "kv_capacity");
    for (const auto& [node, input] : past.consumers) {
      const Node& n = g.nodes[node];
      EXPECT_TRUE(n.op_type == "KvCacheAppend" || n.op_type == "KvCacheMatMul" ||
                  n.op_type == "KvCacheShape")
          << n.name << " reads the block";
    }
    EXPECT_TRUE(absl::StrContains(b.append_node, "/KvCacheAppend")) << b.append_node;
  }
  for (int v : g.outputs) EXPECT_EQ(g.values[v].name, "logits");
  EXPECT_GE(g.FindValue(kKvPastLengthInput), 0);
  // Fused nodes keep their layer in the name (name-based partition rules still match).
  for (const Node& n : g.nodes) {
    if (n.op_type == "KvCacheMatMul") {
      EXPECT_TRUE(absl::StrContains(n.name, GetParam() == "llama" ? "layers." : "h.")) << n.name;
    }
  }
  EXPECT_TRUE(g.Validate().ok());
}

INSTANTIATE_TEST_SUITE_P(Exports, RealExportTest, ::testing::Values("llama", "gpt2"));

// past -> Concat -> (Relu, MatMul): the Relu reads the cache's data, which the rewrite cannot
// keep: refused, naming the node, the graph unchanged.
TEST(KvCacheRewriteTest, RefusesAReaderItDoesNotKnowAndChangesNothing) {
  testing::ModelBuilder b(17);
  b.Input("past", DataType::kFloat32, {1, 2, -1, 4});
  b.Input("new", DataType::kFloat32, {1, 2, 1, 4});
  b.Input("q", DataType::kFloat32, {1, 2, 1, -1});
  auto& c = b.Node("Concat", {"past", "new"}, {"present"}, "/layers.0/attn/Concat");
  testing::ModelBuilder::IntAttr(c, "axis", -2);
  b.Node("Relu", {"present"}, {"odd"}, "/layers.0/attn/Relu");
  b.Node("MatMul", {"q", "present"}, {"y"}, "/layers.0/attn/MatMul");
  b.Output("y", DataType::kFloat32, {1, 2, 1, 4});
  b.Output("odd", DataType::kFloat32, {1, 2, -1, 4});
  auto model = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(model.ok()) << model.status();
  Graph g = (*model)->graph();
  const size_t nodes = g.nodes.size(), values = g.values.size();
  auto r = RewriteKvCacheInPlace(g);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "/layers.0/attn/Relu")) << r.status();
  EXPECT_EQ(g.nodes.size(), nodes);
  EXPECT_EQ(g.values.size(), values);
}

// The onnxruntime-genai builder's export: nothing is added; each GroupQueryAttention is marked to
// write into its past (the block) and the presents leave the outputs.
TEST(KvCacheRewriteTest, GroupQueryAttentionExportIsBoundToTheBlocks) {
  auto model = Model::Load(testing::Runfile("genai/testdata/models/llama_genai/model.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  Graph g = (*model)->graph();
  const size_t nodes = g.nodes.size();
  auto r = RewriteKvCacheInPlace(g);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->form, "GroupQueryAttention");
  EXPECT_FALSE(r->past_length_input);
  EXPECT_LT(g.FindValue(kKvPastLengthInput), 0);
  EXPECT_EQ(g.nodes.size(), nodes);
  ASSERT_EQ(r->blocks.size(), 4u);
  EXPECT_EQ(r->blocks[0].input, "past_key_values.0.key");
  EXPECT_EQ(r->blocks[0].present, "present.0.key");
  EXPECT_EQ(r->blocks[0].append_node, "/model/layers.0/attn/GroupQueryAttention");
  for (const KvCacheRewrite::Block& b : r->blocks) {
    EXPECT_EQ(g.values[g.FindValue(b.input)].shape.dims[2].symbol, "kv_capacity");
  }
  int marked = 0;
  for (const Node& n : g.nodes) {
    for (const auto& a : n.attributes) marked += a.name() == kSharedKvBufferAttribute && a.i() == 1;
  }
  EXPECT_EQ(marked, 2);  // one GroupQueryAttention per layer
  for (int v : g.outputs) EXPECT_EQ(g.values[v].name, "logits");
}

// A past read by another node too: writing into it would change what that node reads.
TEST(KvCacheRewriteTest, RefusesAGroupQueryAttentionPastWithAnotherReader) {
  auto model = Model::Load(testing::Runfile("genai/testdata/models/llama_genai/model.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  Graph g = (*model)->graph();
  Node extra;
  extra.name = "peek";
  extra.op_type = "Identity";
  extra.inputs = {g.FindValue("past_key_values.1.value")};
  Value out;
  out.name = "peeked";
  out.type = DataType::kFloat32;
  out.is_graph_output = true;
  extra.outputs = {g.AddValue(std::move(out))};
  g.outputs.push_back(extra.outputs[0]);
  g.nodes.push_back(std::move(extra));
  const size_t outputs = g.outputs.size();
  auto r = RewriteKvCacheInPlace(g);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "past_key_values.1.value")) << r.status();
  EXPECT_EQ(g.outputs.size(), outputs);
}

TEST(KvCacheRewriteTest, AGraphWithoutACacheIsNotFound) {
  testing::ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y", DataType::kFloat32, {2});
  auto model = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(model.ok());
  Graph g = (*model)->graph();
  EXPECT_EQ(RewriteKvCacheInPlace(g).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd::engine

#include "partition/layering_index.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "partition/testing/test_util.h"

namespace inferd::partition {
namespace {

using testing::GraphBuilder;

std::vector<std::optional<size_t>> Rules(const std::vector<std::optional<PatternMatch>>& m) {
  std::vector<std::optional<size_t>> out;
  for (const auto& p : m) out.push_back(p ? std::optional<size_t>(p->rule) : std::nullopt);
  return out;
}

// Nodes named `names`, chained; node i's layer_ann is annotations[i] when not empty.
engine::Graph& Chain(GraphBuilder& b, const std::vector<std::string>& names,
                     const std::vector<std::string>& annotations = {}) {
  b.Input("x", {4});
  std::string prev = "x";
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string out = "v" + std::to_string(i);
    b.Node(names[i], "Relu", {prev}, {out}, {4});
    prev = out;
  }
  engine::Graph& g = b.graph();
  for (size_t i = 0; i < annotations.size(); ++i) {
    if (!annotations[i].empty()) g.nodes[i].metadata[kLayerAnnotationKey] = annotations[i];
  }
  return g;
}

TEST(LayeringIndexTest, BothModesSetIsInvalidArgument) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("cpu:1(layers.0/)", "cpu:1(enc)");
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(index.status().message().find("both set"), std::string::npos);
}

TEST(LayeringIndexTest, NoRules) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("", "  ");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_FALSE(index->has_rules());
  GraphBuilder b;
  engine::Graph& g = Chain(b, {"a", "b"});
  EXPECT_EQ(Rules(*index->Assign(g)),
            (std::vector<std::optional<size_t>>{std::nullopt, std::nullopt}));
}

TEST(LayeringIndexTest, ParseErrorsNameTheMode) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("cpu:1(a", "");
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().message(), "name rules: rule 1, column 8: expected ')'");
  index = LayeringIndex::Create("", "cpu:1(a b");
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().message(), "annotation rules: rule 1, column 10: expected ')'");
}

TEST(LayeringIndexTest, NameModeMatchesEveryNodeByName) {
  absl::StatusOr<LayeringIndex> index =
      LayeringIndex::Create("cuda:0(layers.[0-1]/); cpu:1(norm)", "");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->mode(), RuleMode::kName);
  GraphBuilder b;
  // Annotations are ignored in name mode.
  engine::Graph& g = Chain(b, {"/m/layers.0/A", "/m/layers.1/B", "/m/layers.10/C", "/m/norm/D"},
                           {"", "", "norm", ""});
  EXPECT_EQ(Rules(*index->Assign(g)), (std::vector<std::optional<size_t>>{0, 0, std::nullopt, 1}));
}

TEST(LayeringIndexTest, AnnotationModeExactAndPrefix) {
  absl::StatusOr<LayeringIndex> index =
      LayeringIndex::Create("", "cuda:0(=encoder.head); cpu:1(encoder)");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->mode(), RuleMode::kAnnotation);
  GraphBuilder b;
  engine::Graph& g = Chain(b, {"n0", "n1", "n2", "n3"},
                           {"encoder.head", "encoder.layer1", "encoder.head.extra", ""});
  EXPECT_EQ(Rules(*index->Assign(g)), (std::vector<std::optional<size_t>>{0, 1, 1, std::nullopt}));
}

TEST(LayeringIndexTest, AnnotationModeInheritsFromSubgraphParent) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("", "cuda:0(enc); cpu:1(dec)");
  ASSERT_TRUE(index.ok()) << index.status();
  GraphBuilder b;
  // n0 (enc) holds n1 (no annotation), which holds n2 (no annotation); n3 (dec) holds n4
  // (annotation matching no rule: inherits too) and n5 (its own, matching rule).
  engine::Graph& g = Chain(b, {"n0", "n1", "n2", "n3", "n4", "n5", "n6"},
                           {"enc", "", "", "dec", "other", "enc.x", ""});
  const std::vector<int> parent = {-1, 0, 1, -1, 3, 3, -1};
  EXPECT_EQ(Rules(*index->Assign(g, parent)),
            (std::vector<std::optional<size_t>>{0, 0, 0, 1, 1, 0, std::nullopt}));
  // Without parents: no inheritance.
  EXPECT_EQ(Rules(*index->Assign(g)),
            (std::vector<std::optional<size_t>>{0, std::nullopt, std::nullopt, 1, std::nullopt, 0,
                                                std::nullopt}));
}

TEST(LayeringIndexTest, NameModeDoesNotInherit) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("cuda:0(If)", "");
  ASSERT_TRUE(index.ok()) << index.status();
  GraphBuilder b;
  engine::Graph& g = Chain(b, {"If", "then/Add"});
  EXPECT_EQ(Rules(*index->Assign(g, std::vector<int>{-1, 0})),
            (std::vector<std::optional<size_t>>{0, std::nullopt}));
}

TEST(LayeringIndexTest, BadParentsAreRefused) {
  absl::StatusOr<LayeringIndex> index = LayeringIndex::Create("", "cuda:0(enc)");
  ASSERT_TRUE(index.ok()) << index.status();
  GraphBuilder b;
  engine::Graph& g = Chain(b, {"n0", "n1"});
  EXPECT_EQ(index->Assign(g, std::vector<int>{-1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Assign(g, std::vector<int>{-1, 7}).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status cycle = index->Assign(g, std::vector<int>{1, 0}).status();
  EXPECT_EQ(cycle.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cycle.message().find("cycle"), std::string::npos);
}

TEST(LayerDetectorTest, FindsTheLayerComponent) {
  LayerDetector d;
  EXPECT_EQ(d.Detect("/model/layers.5/mlp/up_proj/MatMul")->key, "layers.5");
  EXPECT_EQ(d.Detect("/model/layers.5/mlp/up_proj/MatMul")->number, 5);
  EXPECT_EQ(d.Detect("/model/layers.12/mlp/up_proj/MatMul/MatMulAddFusion")->key, "layers.12");
  EXPECT_EQ(d.Detect("/bert/encoder/layer.3/attention/MatMul")->key, "layer.3");
  EXPECT_EQ(d.Detect("/transformer/h.11/attn/c_attn/Gemm")->key, "h.11");
  EXPECT_EQ(d.Detect("blocks.2.norm1")->key, "blocks.2");
  EXPECT_EQ(d.Detect("/model/layers.7")->key, "layers.7");
}

TEST(LayerDetectorTest, NoLayer) {
  LayerDetector d;
  for (const char* name : {"/model/embed_tokens/Gather", "/model/norm/LayerNormalization",
                           "Attention", "/model/sublayers.3/x", "/model/graph.3/x",
                           "/model/layers.x/y", "/model/layers.5a/y", "layers/3"}) {
    EXPECT_EQ(d.Detect(name), std::nullopt) << name;
  }
}

TEST(LayerDetectorTest, ConfigurablePrefixesAndLeftmostWins) {
  LayerDetector d({"stage", "block"});
  EXPECT_EQ(d.Detect("/net/stage.2/block.7/conv")->key, "stage.2");
  EXPECT_EQ(d.Detect("/net/block.7/stage.2/conv")->key, "block.7");
  EXPECT_EQ(d.Detect("/model/layers.1/x"), std::nullopt);
}

}  // namespace
}  // namespace inferd::partition

// The com.microsoft transformer schemas: each is in libonnx's registry, and one-node models of
// them load through Model::Parse (checker and shape inference) with the inferred output shapes.
#include "engine/contrib_schemas.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/model.h"
#include "onnx/defs/schema.h"

namespace inferd::engine {
namespace {

class OneNode {
 public:
  OneNode(const std::string& op, const std::string& domain = "com.microsoft") {
    model_.set_ir_version(8);
    auto* imp = model_.add_opset_import();
    imp->set_version(17);
    auto* ms = model_.add_opset_import();
    ms->set_domain("com.microsoft");
    ms->set_version(1);
    node_ = model_.mutable_graph()->add_node();
    node_->set_op_type(op);
    node_->set_domain(domain);
    node_->set_name("n");
    model_.mutable_graph()->set_name("g");
  }
  OneNode& Input(const std::string& name, const std::vector<int64_t>& dims,
                 int type = onnx::TensorProto::FLOAT) {
    node_->add_input(name);
    if (name.empty()) return *this;
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    return *this;
  }
  OneNode& Attr(const std::string& name, int64_t v) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  OneNode& Attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  // Outputs by name (float; int32 for mask_index), symbolic dims of the given ranks
  // (inference fills the sizes); an empty
  // name skips an optional output.
  OneNode& Outputs(const std::vector<std::string>& names, const std::vector<int>& ranks) {
    for (const std::string& n : names) node_->add_output(n);
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& n = names[i];
      if (n.empty()) continue;
      auto* out = model_.mutable_graph()->add_output();
      out->set_name(n);
      out->mutable_type()->mutable_tensor_type()->set_elem_type(
          n == "mask_index" ? onnx::TensorProto::INT32 : onnx::TensorProto::FLOAT);
      auto* shape = out->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < ranks[i]; ++d) shape->add_dim()->set_dim_param(n + std::to_string(d));
    }
    return *this;
  }
  absl::StatusOr<std::shared_ptr<const Model>> Load() const {
    return Model::Parse(model_.SerializeAsString(), "");
  }
  // The inferred shape of `name` as "2x?x4" with its type number, e.g. "1:2x3".
  std::string Shape(const std::string& name) const {
    absl::StatusOr<std::shared_ptr<const Model>> m = Load();
    if (!m.ok()) return "error: " + std::string(m.status().message());
    const Graph& g = (*m)->graph();
    const int v = g.FindValue(name);
    if (v < 0) return "no value";
    const ShapeInfo& s = g.values[v].shape;
    if (!s.rank_known) return "unknown";
    std::string out;
    for (const DimInfo& d : s.dims) {
      if (!out.empty()) out += "x";
      out += d.value >= 0 ? std::to_string(d.value) : "?";
    }
    return out.empty() ? "scalar" : out;
  }

 private:
  onnx::ModelProto model_;
  onnx::NodeProto* node_;
};

TEST(ContribSchemas, RegisteredInTheirDomains) {
  const std::vector<std::string> names = ContribSchemaNames();
  EXPECT_EQ(names.size(), 11u);
  for (const std::string& name : names) {
    std::vector<std::string> parts = absl::StrSplit(name, absl::ByAnyChar(":-"));
    ASSERT_EQ(parts.size(), 3u) << name;
    EXPECT_NE(onnx::OpSchemaRegistry::Schema(parts[1], 1, parts[0]), nullptr) << name;
  }
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("SimplifiedLayerNormalization", 17, ""), nullptr);
}

TEST(ContribSchemas, ElementwiseAndNorms) {
  EXPECT_EQ(OneNode("FastGelu").Input("x", {2, 8}).Input("b", {8}).Outputs({"y"}, {2}).Shape("y"),
            "2x8");
  EXPECT_EQ(OneNode("QuickGelu").Input("x", {3}).Outputs({"y"}, {1}).Shape("y"), "3");
  OneNode skip("SkipLayerNormalization");
  skip.Input("x", {2, 3, 8}).Input("s", {2, 3, 8}).Input("g", {8}).Input("b", {8});
  skip.Outputs({"y", "mean", "inv", "sum"}, {3, 3, 3, 3});
  EXPECT_EQ(skip.Shape("y"), "2x3x8");
  EXPECT_EQ(skip.Shape("mean"), "2x3x1");
  EXPECT_EQ(skip.Shape("sum"), "2x3x8");
  OneNode rms("SimplifiedLayerNormalization", "");
  rms.Input("x", {2, 3, 8}).Input("g", {8}).Outputs({"y", "inv"}, {3, 3});
  EXPECT_EQ(rms.Shape("y"), "2x3x8");
  EXPECT_EQ(rms.Shape("inv"), "2x3x1");
  OneNode embed("EmbedLayerNormalization");
  embed.Input("ids", {2, 5}, onnx::TensorProto::INT32)
      .Input("seg", {2, 5}, onnx::TensorProto::INT32)
      .Input("word", {30, 16})
      .Input("pos", {10, 16})
      .Input("segw", {2, 16})
      .Input("g", {16})
      .Input("b", {16})
      .Input("mask", {2, 5}, onnx::TensorProto::INT32)
      .Outputs({"y", "mask_index"}, {3, 1});
  EXPECT_EQ(embed.Shape("y"), "2x5x16");
  EXPECT_EQ(embed.Shape("mask_index"), "2");
}

TEST(ContribSchemas, Attention) {
  OneNode a("Attention");
  a.Input("x", {2, 5, 16}).Input("w", {16, 48}).Input("b", {48}).Attr("num_heads", 4);
  a.Outputs({"y"}, {3});
  EXPECT_EQ(a.Shape("y"), "2x5x16");
  OneNode sized("Attention");
  sized.Input("x", {2, 5, 16}).Input("w", {16, 40}).Attr("num_heads", 4);
  sized.Attr("qkv_hidden_sizes", std::vector<int64_t>{16, 16, 8}).Outputs({"y"}, {3});
  EXPECT_EQ(sized.Shape("y"), "2x5x8");
  OneNode past("Attention");
  past.Input("x", {2, 1, 16}).Input("w", {16, 48}).Input("b", {48}).Input("", {});
  past.Input("past", {2, 2, 4, 3, 4}).Attr("num_heads", 4).Attr("unidirectional", 1);
  past.Outputs({"y", "present"}, {3, 5});
  EXPECT_EQ(past.Shape("present"), "2x2x4x4x4");
  OneNode bad("Attention");
  bad.Input("x", {2, 5, 16}).Input("w", {16, 48}).Outputs({"y"}, {3});
  EXPECT_FALSE(bad.Load().ok());  // num_heads is required
  OneNode mha("MultiHeadAttention");
  mha.Input("q", {2, 5, 16}).Input("k", {2, 7, 16}).Input("v", {2, 7, 8}).Attr("num_heads", 4);
  mha.Outputs({"y", "pk", "pv"}, {3, 4, 4});
  EXPECT_EQ(mha.Shape("y"), "2x5x8");
  EXPECT_EQ(mha.Shape("pk"), "2x4x7x4");
  EXPECT_EQ(mha.Shape("pv"), "2x4x7x2");
}

}  // namespace
}  // namespace inferd::engine

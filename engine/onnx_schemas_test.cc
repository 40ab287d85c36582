// The opset 18-21 schemas: each is in libonnx's registry at its version, and models using them
// load through Model::Parse (the ONNX checker and shape inference), with the output shapes
// inferd's inference functions give, and with the errors they raise for invalid nodes.
#include "engine/onnx_schemas.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/model.h"
#include "onnx/defs/schema.h"

namespace inferd::engine {
namespace {

// A one-node model: float inputs of the given shapes (a dim < 0 is symbolic), int64 initializers,
// one float output whose shape inference fills.
class OneNode {
 public:
  OneNode(const std::string& op, int opset) {
    model_.set_ir_version(9);
    auto* imp = model_.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    node_ = model_.mutable_graph()->add_node();
    node_->set_op_type(op);
    node_->set_name("n");
    model_.mutable_graph()->set_name("g");
  }
  OneNode& Input(const std::string& name, const std::vector<int64_t>& dims,
                 int type = onnx::TensorProto::FLOAT) {
    node_->add_input(name);
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0) {
        shape->add_dim()->set_dim_param("s" + std::to_string(shape->dim_size()));
      } else {
        shape->add_dim()->set_dim_value(d);
      }
    }
    return *this;
  }
  OneNode& Ints(const std::string& name, const std::vector<int64_t>& v) {
    node_->add_input(name);
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return *this;
  }
  OneNode& Floats(const std::string& name, const std::vector<float>& v) {
    node_->add_input(name);
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (float x : v) t->add_float_data(x);
    return *this;
  }
  OneNode& NoInput() {
    node_->add_input("");
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
  OneNode& Attr(const std::string& name, const std::string& v) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  // Output names, one per output ("y" when one), declared with `rank` symbolic dims (the checker
  // wants a shape; inference fills the sizes); element type float unless given.
  OneNode& Outputs(int n, int rank, int type = onnx::TensorProto::FLOAT) {
    for (int i = 0; i < n; ++i) {
      const std::string name = n == 1 ? "y" : "y" + std::to_string(i);
      node_->add_output(name);
      auto* out = model_.mutable_graph()->add_output();
      out->set_name(name);
      out->mutable_type()->mutable_tensor_type()->set_elem_type(type);
      auto* shape = out->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < rank; ++d) shape->add_dim()->set_dim_param(name + std::to_string(d));
    }
    return *this;
  }
  absl::StatusOr<std::shared_ptr<const Model>> Load() const {
    return Model::Parse(model_.SerializeAsString(), "");
  }
  // The inferred shape of output `name` as "2x?x4" (rank unknown: "unknown").
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

TEST(OnnxSchemas, RegisteredAtTheirVersions) {
  const std::vector<std::string> names = NewerOnnxSchemaNames();
  EXPECT_GE(names.size(), 40u);
  for (const std::string& name : names) {
    std::vector<std::string> parts = absl::StrSplit(name, absl::ByAnyChar(":-"));
    ASSERT_EQ(parts.size(), 3u) << name;
    // The default domain, and ai.onnx.ml's LabelEncoder 4 (docs/strings.md) and TreeEnsemble 5.
    EXPECT_TRUE(parts[0].empty() || name == "ai.onnx.ml:TreeEnsemble-5" ||
                name == "ai.onnx.ml:LabelEncoder-4")
        << name;
    const int version = std::stoi(parts[2]);
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(parts[1], version, parts[0]);
    ASSERT_NE(s, nullptr) << name << " is not in libonnx's registry";
    EXPECT_EQ(s->SinceVersion(), version) << name;
  }
}

TEST(OnnxSchemas, ReduceAxesInput) {
  EXPECT_EQ(
      OneNode("ReduceMean", 18).Input("x", {2, 3, 4}).Ints("axes", {1}).Outputs(1, 3).Shape("y"),
      "2x1x4");
  EXPECT_EQ(OneNode("ReduceMax", 20)
                .Input("x", {2, 3, 4})
                .Ints("axes", {-1, 0})
                .Attr("keepdims", int64_t{0})
                .Outputs(1, 1)
                .Shape("y"),
            "3");
  // No axes: every axis, unless noop_with_empty_axes.
  EXPECT_EQ(OneNode("ReduceL2", 18).Input("x", {2, 3}).Outputs(1, 2).Shape("y"), "1x1");
  EXPECT_EQ(OneNode("ReduceL2", 18)
                .Input("x", {2, 3})
                .Attr("noop_with_empty_axes", int64_t{1})
                .Outputs(1, 2)
                .Shape("y"),
            "2x3");
  // Axes fed at run time: the rank is known with keepdims, the sizes are not.
  EXPECT_EQ(OneNode("ReduceSumSquare", 18)
                .Input("x", {2, 3})
                .Input("axes", {1}, onnx::TensorProto::INT64)
                .Outputs(1, 2)
                .Shape("y"),
            "?x?");
  // An invalid node fails inference; the loader is lenient there (the kernel refuses the node
  // at creation with its own message), so the output shape is left unknown, never guessed.
  EXPECT_EQ(OneNode("ReduceMean", 18).Input("x", {2, 3}).Ints("axes", {5}).Outputs(1, 2).Shape("y"),
            "?x?");
}

TEST(OnnxSchemas, SplitNumOutputs) {
  OneNode uneven("Split", 18);
  uneven.Input("x", {7, 2}).Attr("num_outputs", int64_t{3}).Outputs(3, 2);
  EXPECT_EQ(uneven.Shape("y0"), "3x2");
  EXPECT_EQ(uneven.Shape("y2"), "1x2");
  OneNode explicit_split("Split", 18);
  explicit_split.Input("x", {2, 5}).Ints("split", {1, 4}).Attr("axis", int64_t{1}).Outputs(2, 2);
  EXPECT_EQ(explicit_split.Shape("y1"), "2x4");
  OneNode wrong("Split", 18);
  wrong.Input("x", {4}).Attr("num_outputs", int64_t{3}).Outputs(2, 1);
  EXPECT_EQ(wrong.Shape("y0"), "?");
}

TEST(OnnxSchemas, PadAxesAndWrap) {
  EXPECT_EQ(OneNode("Pad", 18)
                .Input("x", {2, 3, 4})
                .Ints("pads", {1, 2, 0, 1})
                .NoInput()
                .Ints("axes", {0, -1})
                .Outputs(1, 3)
                .Shape("y"),
            "3x3x7");
  EXPECT_EQ(OneNode("Pad", 19)
                .Input("x", {2, 3})
                .Ints("pads", {0, 1, 0, 1})
                .Attr("mode", std::string("wrap"))
                .Outputs(1, 2)
                .Shape("y"),
            "2x5");
}

TEST(OnnxSchemas, ResizeAxesAndAspectRatio) {
  EXPECT_EQ(OneNode("Resize", 18)
                .Input("x", {1, 3, 10, 20})
                .NoInput()
                .NoInput()
                .Ints("sizes", {5, 5})
                .Attr("axes", std::vector<int64_t>{2, 3})
                .Attr("keep_aspect_ratio_policy", std::string("not_larger"))
                .Outputs(1, 4)
                .Shape("y"),
            "1x3x3x5");  // scale min(5/10, 5/20) = 0.25: 2.5 rounds half up to 3
  EXPECT_EQ(OneNode("Resize", 19)
                .Input("x", {1, 3, 10, 20})
                .NoInput()
                .Floats("scales", {1, 1, 0.5, 1.5})
                .Attr("coordinate_transformation_mode", std::string("half_pixel_symmetric"))
                .Outputs(1, 4)
                .Shape("y"),
            "1x3x5x30");
}

TEST(OnnxSchemas, PoolsWithDilationsAndCeil) {
  EXPECT_EQ(OneNode("AveragePool", 19)
                .Input("x", {1, 2, 7, 7})
                .Attr("kernel_shape", std::vector<int64_t>{3, 3})
                .Attr("dilations", std::vector<int64_t>{2, 2})
                .Outputs(1, 4)
                .Shape("y"),
            "1x2x3x3");
  EXPECT_EQ(OneNode("LpPool", 18)
                .Input("x", {1, 1, 5})
                .Attr("kernel_shape", std::vector<int64_t>{2})
                .Attr("strides", std::vector<int64_t>{2})
                .Attr("ceil_mode", int64_t{1})
                .Outputs(1, 3)
                .Shape("y"),
            "1x1x3");
}

TEST(OnnxSchemas, NewOperators) {
  EXPECT_EQ(OneNode("Col2Im", 18)
                .Input("x", {1, 8, 9})
                .Ints("image_shape", {4, 4})
                .Ints("block_shape", {2, 2})
                .Outputs(1, 4)
                .Shape("y"),
            "1x2x4x4");
  EXPECT_EQ(OneNode("CenterCropPad", 18)
                .Input("x", {10, 7, 3})
                .Ints("shape", {5, 9})
                .Attr("axes", std::vector<int64_t>{0, 1})
                .Outputs(1, 3)
                .Shape("y"),
            "5x9x3");
  EXPECT_EQ(OneNode("GroupNormalization", 21)
                .Input("x", {2, 4, 3})
                .Input("s", {4})
                .Input("b", {4})
                .Attr("num_groups", int64_t{2})
                .Outputs(1, 3)
                .Shape("y"),
            "2x4x3");
  EXPECT_EQ(OneNode("AffineGrid", 20)
                .Input("theta", {2, 2, 3})
                .Ints("size", {2, 3, 5, 6})
                .Outputs(1, 4)
                .Shape("y"),
            "2x5x6x2");
  EXPECT_EQ(OneNode("DFT", 20)
                .Input("x", {3, 10, 1})
                .NoInput()
                .Ints("axis", {1})
                .Attr("onesided", int64_t{1})
                .Outputs(1, 3)
                .Shape("y"),
            "3x6x2");
  EXPECT_EQ(OneNode("GridSample", 20)
                .Input("x", {1, 3, 4, 5, 6})
                .Input("g", {1, 2, 2, 2, 3})
                .Outputs(1, 5)
                .Shape("y"),
            "1x3x2x2x2");
  EXPECT_EQ(OneNode("DeformConv", 19)
                .Input("x", {1, 2, 5, 5})
                .Input("w", {4, 2, 3, 3})
                .Input("offset", {1, 18, 3, 3})
                .Outputs(1, 4)
                .Shape("y"),
            "1x4x3x3");
  EXPECT_EQ(OneNode("Gelu", 20).Input("x", {2, -1}).Outputs(1, 2).Shape("y"), "2x?");
  EXPECT_EQ(OneNode("Mish", 18).Input("x", {6}).Outputs(1, 1).Shape("y"), "6");
}

TEST(OnnxSchemas, UnknownOperatorsAndTypesAreUnimplemented) {
  // ImageDecoder (opset 20) has no schema in inferd: refused as unsupported, naming the node.
  OneNode decoder("ImageDecoder", 20);
  decoder.Input("x", {100}, onnx::TensorProto::UINT8).Outputs(1, 3, onnx::TensorProto::UINT8);
  absl::StatusOr<std::shared_ptr<const Model>> m = decoder.Load();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("ImageDecoder (node 'n')"), std::string::npos);
  // float4e2m1 has no engine type; float8 has.
  OneNode f4("Identity", 21);
  f4.Input("x", {2}, 23).Outputs(1, 1, 23);
  m = f4.Load();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("float4e2m1"), std::string::npos);
  m = OneNode("Identity", 21).Input("x", {2}, 17).Outputs(1, 1, 17).Load();
  EXPECT_TRUE(m.ok()) << m.status();
  // Opset 22 (bfloat16 added to types) loads; 23 is past what inferd knows.
  m = OneNode("Conv", 22).Input("x", {1, 1, 3, 3}).Input("w", {1, 1, 1, 1}).Outputs(1, 1).Load();
  EXPECT_TRUE(m.ok()) << m.status();
  m = OneNode("Relu", 23).Input("x", {2}).Outputs(1, 1).Load();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace inferd::engine

// String tensors through Session::Run with the CPU kernels (docs/strings.md): string weights and
// Constant values, string graph inputs (borrowed) and outputs (heap vectors), views and data
// movement on strings, the static plan of a model with strings, Cast's round trip, and the
// errors of bad inputs, shapes and attributes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/session.h"
#include "engine/testing/model_builder.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::InputTensor;
using engine::OutputTensor;
using engine::Shape;
using engine::testing::ModelBuilder;
using Strings = std::vector<std::string>;

void StringInitializer(ModelBuilder& b, const std::string& name, const Shape& shape,
                       const Strings& values) {
  onnx::TensorProto* t = b.RawInitializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::STRING);
  for (int64_t d : shape.dims()) t->add_dims(d);
  for (const std::string& v : values) t->add_string_data(v);
}

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void StringsAttr(onnx::NodeProto& n, const std::string& name, const Strings& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a->add_strings(s);
}

InputTensor StringInput(const std::string& name, const Shape& shape, const Strings& v) {
  return {name, DataType::kString, shape, v.data(), v.size() * sizeof(std::string)};
}

Strings Values(const OutputTensor& t) {
  EXPECT_NE(t.strings, nullptr) << t.name;
  return t.strings == nullptr ? Strings() : *t.strings;
}

class StringsTest : public ::testing::Test {
 protected:
  StringsTest() { EXPECT_TRUE(RegisterCpuKernels(registry_).ok()); }

  absl::StatusOr<std::unique_ptr<engine::Session>> Make(ModelBuilder& b) {
    absl::StatusOr<std::shared_ptr<const engine::Model>> m =
        engine::Model::Parse(b.Serialize(), "");
    if (!m.ok()) return m.status();
    return engine::Session::Create(*m, engine::SessionOptions(), registry_);
  }

  engine::KernelRegistry registry_;
};

// A string weight and a Constant of strings feed StringConcat, Reshape (a view) and Transpose
// (the index path); the Constant is also a graph output (its strings shared: never written once
// made). Every shape is known: the plan stays static and places no string value in its block.
TEST_F(StringsTest, WeightsConstantsViewsAndMovement) {
  ModelBuilder b(20);
  b.Input("x", DataType::kString, {2, 3});
  StringInitializer(b, "suffix", Shape{3}, {"-a", "-b", "-c"});
  b.Initializer("shape", Shape{2}, std::vector<int64_t>{3, 2});
  onnx::NodeProto& c = b.Node("Constant", {}, {"k"});
  auto* a = c.add_attribute();
  a->set_name("value_strings");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("k0");
  a->add_strings("k1");
  b.Node("StringConcat", {"x", "suffix"}, {"cat"});
  b.Node("Reshape", {"cat", "shape"}, {"r"});
  b.Node("Transpose", {"r"}, {"t"});
  b.Output("t", DataType::kString, {2, 3});
  b.Output("k", DataType::kString, {2});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->plan().is_static()) << (*session)->plan().dynamic_reason();
  EXPECT_EQ((*session)->plan().devices()[0].block_bytes, 0u);
  const Strings x = {"p", "q", "r", "s", "t", "u"};
  const InputTensor in = StringInput("x", Shape{2, 3}, x);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the slot
    auto out = (*session)->Run({&in, 1});
    ASSERT_TRUE(out.ok()) << out.status();
    // cat = [[p-a q-b r-c] [s-a t-b u-c]]; r = 3x2 of the same order; t = r transposed.
    EXPECT_EQ((*out)[0].shape, (Shape{2, 3}));
    EXPECT_EQ(Values((*out)[0]), (Strings{"p-a", "r-c", "t-b", "q-b", "s-a", "u-c"}));
    EXPECT_FALSE((*out)[0].buffer.valid());
    EXPECT_EQ(Values((*out)[1]), (Strings{"k0", "k1"}));
  }
}

// A string graph input returned as it is, through Identity and Squeeze (views): the outputs hold
// their own copies, which outlive the caller's strings.
TEST_F(StringsTest, InputReturnedAsOutputIsCopied) {
  ModelBuilder b(20);
  b.Input("x", DataType::kString, {1, 2});
  b.Initializer("axes", Shape{1}, std::vector<int64_t>{0});
  b.Node("Identity", {"x"}, {"y"});
  b.Node("Squeeze", {"x", "axes"}, {"z"});
  b.Output("y", DataType::kString, {1, 2});
  b.Output("z", DataType::kString, {2});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<OutputTensor> kept;
  {
    const Strings x = {"a long string that is not stored inline", "b"};
    const InputTensor in = StringInput("x", Shape{1, 2}, x);
    auto out = (*session)->Run({&in, 1});
    ASSERT_TRUE(out.ok()) << out.status();
    kept = std::move(*out);
  }
  EXPECT_EQ(Values(kept[0]), (Strings{"a long string that is not stored inline", "b"}));
  EXPECT_EQ(kept[1].shape, (Shape{2}));
  EXPECT_EQ(Values(kept[1]), Values(kept[0]));
}

// Every float32 written by Cast to string reads back to the same bits (shortest round trip).
TEST_F(StringsTest, CastRoundTripIsExact) {
  ModelBuilder b(19);
  b.Input("x", DataType::kFloat32, {-1});
  ModelBuilder::IntAttr(b.Node("Cast", {"x"}, {"s"}), "to", 8);
  ModelBuilder::IntAttr(b.Node("Cast", {"s"}, {"y"}), "to", 1);
  b.Output("s", DataType::kString, {-1});
  b.Output("y", DataType::kFloat32, {-1});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  std::mt19937 gen(7);
  std::vector<float> x(2000);
  for (float& v : x) {
    uint32_t bits = gen();
    std::memcpy(&v, &bits, sizeof(v));
    if (std::isnan(v)) v = 1.5f;
  }
  x[0] = 1e-5f;
  x[1] = -0.0f;
  x[2] = INFINITY;
  const InputTensor in{"x", DataType::kFloat32, Shape{2000}, x.data(), x.size() * sizeof(float)};
  auto out = (*session)->Run({&in, 1});
  ASSERT_TRUE(out.ok()) << out.status();
  const Strings s = Values((*out)[0]);
  EXPECT_EQ(s[0], "1e-05");
  EXPECT_EQ(s[1], "-0");
  EXPECT_EQ(s[2], "INF");
  ASSERT_EQ((*out)[1].buffer.size(), x.size() * sizeof(float));
  EXPECT_EQ(std::memcmp((*out)[1].buffer.data(), x.data(), x.size() * sizeof(float)), 0);
}

// A string that is no number, and an integer out of range.
TEST_F(StringsTest, CastOfTextThatIsNoNumberFails) {
  for (int to : {1, 3}) {
    ModelBuilder b(19);
    b.Input("s", DataType::kString, {2});
    ModelBuilder::IntAttr(b.Node("Cast", {"s"}, {"y"}, "cast"), "to", to);
    b.Output("y", static_cast<DataType>(to), {2});
    auto session = Make(b);
    ASSERT_TRUE(session.ok()) << session.status();
    const Strings s = {"12", to == 1 ? "twelve" : "300"};
    const InputTensor in = StringInput("s", Shape{2}, s);
    auto out = (*session)->Run({&in, 1});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("element 1"), std::string::npos) << out.status();
  }
}

TEST_F(StringsTest, BadInputsAreRefused) {
  ModelBuilder b(20);
  b.Input("x", DataType::kString, {-1, -1});
  StringsAttr(b.Node("StringNormalizer", {"x"}, {"y"}, "norm"), "stopwords", {"a"});
  b.Output("y", DataType::kString, {-1, -1});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  // StringNormalizer takes [C] or [1, C] only.
  const Strings x = {"a", "b", "c", "d"};
  const InputTensor two_rows = StringInput("x", Shape{2, 2}, x);
  auto out = (*session)->Run({&two_rows, 1});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[C] or [1, C]"), std::string::npos) << out.status();
  // A string count that does not match the shape.
  const InputTensor short_input = {"x", DataType::kString, Shape{1, 4}, x.data(),
                                   3 * sizeof(std::string)};
  out = (*session)->Run({&short_input, 1});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  // Shapes that do not broadcast.
  ModelBuilder c(20);
  c.Input("a", DataType::kString, {-1});
  c.Input("b", DataType::kString, {-1});
  c.Node("StringConcat", {"a", "b"}, {"y"});
  c.Output("y", DataType::kString, {-1});
  auto concat = Make(c);
  ASSERT_TRUE(concat.ok()) << concat.status();
  const std::vector<InputTensor> feed = {StringInput("a", Shape{3}, {x.begin(), x.begin() + 3}),
                                         StringInput("b", Shape{2}, {x.begin(), x.begin() + 2})};
  out = (*concat)->Run(feed);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StringsTest, BadAttributesAreRefusedAtLoad) {
  {  // a pattern RE2 does not accept
    ModelBuilder b(20);
    b.Input("x", DataType::kString, {2});
    StringAttr(b.Node("RegexFullMatch", {"x"}, {"y"}, "re"), "pattern", "(unclosed");
    b.Output("y", DataType::kBool, {2});
    auto session = Make(b);
    ASSERT_FALSE(session.ok());
    EXPECT_NE(session.status().message().find("RE2"), std::string::npos) << session.status();
  }
  {  // an unknown case change
    ModelBuilder b(20);
    b.Input("x", DataType::kString, {2});
    StringAttr(b.Node("StringNormalizer", {"x"}, {"y"}, "norm"), "case_change_action", "TITLE");
    b.Output("y", DataType::kString, {-1});
    auto session = Make(b);
    ASSERT_FALSE(session.ok());
    EXPECT_NE(session.status().message().find("TITLE"), std::string::npos) << session.status();
  }
  {  // LabelEncoder keys and values that do not pair up
    ModelBuilder b(20);
    b.ImportDomain("ai.onnx.ml", 2);
    b.Input("x", DataType::kString, {2});
    onnx::NodeProto& n = b.Node("LabelEncoder", {"x"}, {"y"}, "enc", "ai.onnx.ml");
    StringsAttr(n, "keys_strings", {"a", "b"});
    ModelBuilder::IntsAttr(n, "values_int64s", {1});
    b.Output("y", DataType::kInt64, {2});
    auto session = Make(b);
    ASSERT_FALSE(session.ok());
    EXPECT_NE(session.status().message().find("pair up"), std::string::npos) << session.status();
  }
  {  // a string initializer whose string_data does not match its dims
    ModelBuilder b(20);
    b.Input("x", DataType::kString, {2});
    StringInitializer(b, "w", Shape{3}, {"a", "b"});
    b.Node("StringConcat", {"x", "w"}, {"y"});
    b.Output("y", DataType::kString, {-1});
    auto session = Make(b);
    ASSERT_FALSE(session.ok());
    EXPECT_NE(session.status().message().find("2 strings"), std::string::npos) << session.status();
  }
}

// StringSplit: Python's str.split with a delimiter (empty parts kept) and without (whitespace
// runs), padded with "" to the widest row; Where picks strings with broadcasting.
TEST_F(StringsTest, SplitAndWhere) {
  ModelBuilder b(20);
  b.Input("x", DataType::kString, {3});
  b.Input("c", DataType::kBool, {2, 1});
  StringAttr(b.Node("StringSplit", {"x"}, {"parts", "counts"}), "delimiter", ",");
  b.Node("StringSplit", {"x"}, {"words", "word_counts"});
  b.Node("Where", {"c", "x", "x"}, {"w"});
  b.Output("parts", DataType::kString, {3, -1});
  b.Output("counts", DataType::kInt64, {3});
  b.Output("words", DataType::kString, {3, -1});
  b.Output("w", DataType::kString, {2, 3});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const Strings x = {"a,,b", "", " one  two\tthree "};
  const bool c[2] = {true, false};
  const std::vector<InputTensor> feed = {StringInput("x", Shape{3}, x),
                                         {"c", DataType::kBool, Shape{2, 1}, c, 2}};
  auto out = (*session)->Run(feed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, (Shape{3, 3}));
  EXPECT_EQ(Values((*out)[0]), (Strings{"a", "", "b", "", "", "", " one  two\tthree ", "", ""}));
  std::vector<int64_t> counts(3);
  std::memcpy(counts.data(), (*out)[1].buffer.data(), sizeof(int64_t) * 3);
  EXPECT_EQ(counts, (std::vector<int64_t>{3, 1, 1}));
  EXPECT_EQ(Values((*out)[2]), (Strings{"a,,b", "", "", "", "", "", "one", "two", "three"}));
  EXPECT_EQ(Values((*out)[3]),
            (Strings{"a,,b", "", " one  two\tthree ", "a,,b", "", " one  two\tthree "}));
}

void TypedValue(onnx::ValueInfoProto* vi, const std::string& name, DataType t,
                const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(t));
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// A Loop carries a string through its body (views bound, outputs handed over) and concatenates
// a string scan output.
TEST_F(StringsTest, LoopCarriesAndScansStrings) {
  ModelBuilder b(20);
  b.Input("s0", DataType::kString, {1});
  b.Initializer("m", Shape{}, std::vector<int64_t>{3});
  onnx::NodeProto& loop = b.Node("Loop", {"m", "", "s0"}, {"s_final", "scan"}, "loop");
  auto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* g = attr->mutable_g();
  g->set_name("body");
  TypedValue(g->add_input(), "i", DataType::kInt64, {});
  TypedValue(g->add_input(), "c", DataType::kBool, {});
  TypedValue(g->add_input(), "s", DataType::kString, {1});
  onnx::TensorProto* x = g->add_initializer();
  x->set_name("x");
  x->set_data_type(onnx::TensorProto::STRING);
  x->add_dims(1);
  x->add_string_data("x");
  auto node = [&](const char* op, std::vector<std::string> in, std::string out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Identity", {"c"}, "c_out");
  node("StringConcat", {"s", "x"}, "s_out");
  node("Identity", {"s_out"}, "scan_out");
  TypedValue(g->add_output(), "c_out", DataType::kBool, {});
  TypedValue(g->add_output(), "s_out", DataType::kString, {1});
  TypedValue(g->add_output(), "scan_out", DataType::kString, {1});
  b.Output("s_final", DataType::kString, {1});
  b.Output("scan", DataType::kString, {3, 1});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const Strings s0 = {"a"};
  const InputTensor in = StringInput("s0", Shape{1}, s0);
  auto out = (*session)->Run({&in, 1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (Strings{"axxx"}));
  EXPECT_EQ((*out)[1].shape, (Shape{3, 1}));
  EXPECT_EQ(Values((*out)[1]), (Strings{"ax", "axx", "axxx"}));
}

}  // namespace
}  // namespace inferd::kernels::cpu

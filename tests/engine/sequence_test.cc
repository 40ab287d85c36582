// kernels/cpu/sequence.cc and the engine's sequence / optional values through Session::Run
// (value slots, sequence / optional graph inputs and outputs) with the CPU kernels: split /
// insert / at / erase / length / concat round trips, optionals, Identity of an optional, and the
// errors of bad positions, shapes and kinds.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
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
using engine::ValueKind;
using engine::testing::ModelBuilder;

// A graph input / output of type seq(tensor(float)) or optional(tensor(float)).
void ListValue(onnx::ValueInfoProto* vi, const std::string& name, ValueKind kind) {
  vi->set_name(name);
  onnx::TypeProto* elem = kind == ValueKind::kSequence
                              ? vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()
                              : vi->mutable_type()->mutable_optional_type()->mutable_elem_type();
  elem->mutable_tensor_type()->set_elem_type(static_cast<int>(DataType::kFloat32));
}

std::vector<float> Floats(const OutputTensor& t) {
  std::vector<float> v(t.buffer.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.buffer.data(), t.buffer.size());
  return v;
}

InputTensor FloatInput(const std::string& name, const Shape& shape, const std::vector<float>& v) {
  return {name, DataType::kFloat32, shape, v.data(), v.size() * sizeof(float)};
}

class SequenceTest : public ::testing::Test {
 protected:
  SequenceTest() { EXPECT_TRUE(RegisterCpuKernels(registry_).ok()); }

  absl::StatusOr<std::unique_ptr<engine::Session>> Make(ModelBuilder& b) {
    absl::StatusOr<std::shared_ptr<const engine::Model>> m =
        engine::Model::Parse(b.Serialize(), "");
    if (!m.ok()) return m.status();
    return engine::Session::Create(*m, engine::SessionOptions(), registry_);
  }

  engine::KernelRegistry registry_;
};

// x [2, 3] split into three [2, 1] pieces along axis 1, then joined again; the last piece read
// with a negative position; the length.
TEST_F(SequenceTest, SplitAtLengthConcatRoundTrip) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {2, 3});
  b.Initializer("last", Shape{}, std::vector<int64_t>{-1});
  ModelBuilder::IntAttr(b.Node("SplitToSequence", {"x"}, {"s"}), "axis", 1);
  b.Node("SequenceAt", {"s", "last"}, {"at"});
  b.Node("SequenceLength", {"s"}, {"n"});
  auto& concat = b.Node("ConcatFromSequence", {"s"}, {"y"});
  ModelBuilder::IntAttr(concat, "axis", 1);
  auto& stack = b.Node("ConcatFromSequence", {"s"}, {"z"});
  ModelBuilder::IntAttr(stack, "axis", 0);
  ModelBuilder::IntAttr(stack, "new_axis", 1);
  b.Output("at", DataType::kFloat32, {2, 1});
  b.Output("n", DataType::kInt64, {});
  b.Output("y", DataType::kFloat32, {2, 3});
  b.Output("z", DataType::kFloat32, {3, 2, 1});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const InputTensor in = FloatInput("x", Shape{2, 3}, x);
  auto out = (*session)->Run({&in, 1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{3, 6}));
  EXPECT_EQ(*static_cast<const int64_t*>((*out)[1].buffer.data()), 3);
  EXPECT_EQ(Floats((*out)[2]), x);
  EXPECT_EQ((*out)[3].shape, (Shape{3, 2, 1}));
  EXPECT_EQ(Floats((*out)[3]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

// A sequence graph input, extended at the front and erased at the back; the output sequence's
// tensors own IOArena buffers.
TEST_F(SequenceTest, SequenceInputAndOutput) {
  ModelBuilder b(17);
  ListValue(b.proto().mutable_graph()->add_input(), "s", ValueKind::kSequence);
  b.Input("t", DataType::kFloat32, {1});
  b.Initializer("front", Shape{}, std::vector<int32_t>{-2});
  b.Node("SequenceInsert", {"s", "t", "front"}, {"s2"});
  b.Node("SequenceErase", {"s2"}, {"s3"});
  ListValue(b.proto().mutable_graph()->add_output(), "s3", ValueKind::kSequence);
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> a = {1}, c = {2, 3}, t = {9};
  InputTensor seq;
  seq.name = "s";
  seq.type = DataType::kFloat32;
  seq.kind = ValueKind::kSequence;
  seq.items = {FloatInput("", Shape{1}, a), FloatInput("", Shape{2}, c)};
  const std::vector<InputTensor> feed = {seq, FloatInput("t", Shape{1}, t)};
  auto out = (*session)->Run(feed);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].kind, ValueKind::kSequence);
  // [1], [2, 3] + 9 at position -2 (= 0) -> [9], [1], [2, 3]; erase the last -> [9], [1].
  ASSERT_EQ((*out)[0].items.size(), 2u);
  EXPECT_EQ(Floats((*out)[0].items[0]), (std::vector<float>{9}));
  EXPECT_EQ(Floats((*out)[0].items[1]), (std::vector<float>{1}));
  for (const OutputTensor& item : (*out)[0].items) {
    EXPECT_EQ(item.buffer.arena_kind(), memory::ArenaKind::kIO);
  }
  // A tensor where the sequence belongs is refused.
  const std::vector<InputTensor> wrong = {FloatInput("s", Shape{1}, a),
                                          FloatInput("t", Shape{1}, t)};
  auto bad = (*session)->Run(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("expected sequence, got tensor"), std::string::npos)
      << bad.status();
  // Positions outside [-n, n]: INVALID_ARGUMENT naming the range.
  seq.items.clear();
  const std::vector<InputTensor> empty = {seq, FloatInput("t", Shape{1}, t)};
  auto out_of_range = (*session)->Run(empty);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("out of range [0, 0]"), std::string::npos)
      << out_of_range.status();
}

TEST_F(SequenceTest, SequenceAtOutOfRangeAndEraseOfEmpty) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {2});
  b.Input("p", DataType::kInt64, {});
  b.Node("SequenceConstruct", {"x", "x"}, {"s"});
  b.Node("SequenceAt", {"s", "p"}, {"y"});
  b.Output("y", DataType::kFloat32, {2});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> x = {1, 2};
  for (int64_t p : {int64_t{2}, int64_t{-3}}) {
    const std::vector<InputTensor> feed = {FloatInput("x", Shape{2}, x),
                                           {"p", DataType::kInt64, Shape{}, &p, sizeof(p)}};
    auto out = (*session)->Run(feed);
    ASSERT_FALSE(out.ok()) << p;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("out of range [-2, 1]"), std::string::npos)
        << out.status();
  }
  int64_t p = -2;
  const std::vector<InputTensor> feed = {FloatInput("x", Shape{2}, x),
                                         {"p", DataType::kInt64, Shape{}, &p, sizeof(p)}};
  auto out = (*session)->Run(feed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), x);

  ModelBuilder e(17);
  e.Input("x", DataType::kFloat32, {2});
  e.Node("SequenceEmpty", {}, {"s"});
  e.Node("SequenceErase", {"s"}, {"s2"});
  e.Node("SequenceLength", {"s2"}, {"n"});
  e.Node("Identity", {"x"}, {"y"});
  e.Output("n", DataType::kInt64, {});
  e.Output("y", DataType::kFloat32, {2});
  auto erase = Make(e);
  ASSERT_TRUE(erase.ok()) << erase.status();
  const InputTensor in = FloatInput("x", Shape{2}, x);
  auto st = (*erase)->Run({&in, 1});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("empty sequence"), std::string::npos) << st.status();
}

TEST_F(SequenceTest, ConcatOfMismatchedShapesIsRefused) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {2, 2});
  b.Input("w", DataType::kFloat32, {3, 3});
  b.Node("SequenceConstruct", {"x", "w"}, {"s"});
  ModelBuilder::IntAttr(b.Node("ConcatFromSequence", {"s"}, {"y"}), "axis", 0);
  b.Output("y", DataType::kFloat32, {-1, -1});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> x(4, 1.0f), w(9, 2.0f);
  const std::vector<InputTensor> feed = {FloatInput("x", Shape{2, 2}, x),
                                         FloatInput("w", Shape{3, 3}, w)};
  auto out = (*session)->Run(feed);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("does not fit"), std::string::npos) << out.status();
}

TEST_F(SequenceTest, SplitToSequenceLengthsAndKeepdims) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {5});
  b.Initializer("two", Shape{}, std::vector<int64_t>{2});
  b.Initializer("bad", Shape{2}, std::vector<int64_t>{2, 2});
  b.Node("SplitToSequence", {"x", "two"}, {"s"});
  auto& drop = b.Node("SplitToSequence", {"x"}, {"d"});
  ModelBuilder::IntAttr(drop, "keepdims", 0);
  b.Node("SequenceLength", {"s"}, {"n"});
  auto& stack = b.Node("ConcatFromSequence", {"d"}, {"y"});
  ModelBuilder::IntAttr(stack, "axis", 0);
  ModelBuilder::IntAttr(stack, "new_axis", 1);
  b.Node("SplitToSequence", {"x", "bad"}, {"e"});
  b.Node("SequenceLength", {"e"}, {"m"});
  b.Output("n", DataType::kInt64, {});
  b.Output("y", DataType::kFloat32, {5});
  b.Output("m", DataType::kInt64, {});
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> x = {1, 2, 3, 4, 5};
  const InputTensor in = FloatInput("x", Shape{5}, x);
  auto out = (*session)->Run({&in, 1});
  // 2 + 2 != 5: refused, naming the extent.
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("do not add up to the extent 5"), std::string::npos)
      << out.status();
  auto& outputs = *b.proto().mutable_graph()->mutable_output();
  outputs.RemoveLast();
  auto& nodes = *b.proto().mutable_graph()->mutable_node();
  nodes.RemoveLast();
  nodes.RemoveLast();
  auto good = Make(b);
  ASSERT_TRUE(good.ok()) << good.status();
  out = (*good)->Run({&in, 1});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*static_cast<const int64_t*>((*out)[0].buffer.data()), 3);  // [2], [2], [1]
  EXPECT_EQ((*out)[1].shape, (Shape{5}));                               // five scalars stacked
  EXPECT_EQ(Floats((*out)[1]), x);
}

// Optional of a tensor, an empty optional graph input, and OptionalGetElement of an empty one.
TEST_F(SequenceTest, Optionals) {
  ModelBuilder b(18);
  b.Input("x", DataType::kFloat32, {2});
  ListValue(b.proto().mutable_graph()->add_input(), "o", ValueKind::kOptional);
  b.Node("Optional", {"x"}, {"ox"});
  b.Node("OptionalHasElement", {"ox"}, {"has_x"});
  b.Node("OptionalGetElement", {"ox"}, {"y"});
  b.Node("OptionalHasElement", {"o"}, {"has_o"});
  b.Node("Identity", {"o"}, {"o2"});
  b.Output("has_x", DataType::kBool, {});
  b.Output("y", DataType::kFloat32, {2});
  b.Output("has_o", DataType::kBool, {});
  ListValue(b.proto().mutable_graph()->add_output(), "o2", ValueKind::kOptional);
  auto session = Make(b);
  ASSERT_TRUE(session.ok()) << session.status();
  const std::vector<float> x = {4, 5};
  InputTensor none;
  none.name = "o";
  none.type = DataType::kFloat32;
  none.kind = ValueKind::kOptional;
  std::vector<InputTensor> feed = {FloatInput("x", Shape{2}, x), none};
  auto out = (*session)->Run(feed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*static_cast<const bool*>((*out)[0].buffer.data()));
  EXPECT_EQ(Floats((*out)[1]), x);
  EXPECT_FALSE(*static_cast<const bool*>((*out)[2].buffer.data()));
  EXPECT_EQ((*out)[3].kind, ValueKind::kOptional);
  EXPECT_TRUE((*out)[3].items.empty());
  // The optional holding a tensor: Identity copies it into the output.
  feed[1].items = {FloatInput("", Shape{2}, x)};
  out = (*session)->Run(feed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(*static_cast<const bool*>((*out)[2].buffer.data()));
  ASSERT_EQ((*out)[3].items.size(), 1u);
  EXPECT_EQ(Floats((*out)[3].items[0]), x);
  // An optional holds at most one value.
  feed[1].items.push_back(FloatInput("", Shape{2}, x));
  EXPECT_FALSE((*session)->Run(feed).ok());

  ModelBuilder g(18);
  ListValue(g.proto().mutable_graph()->add_input(), "o", ValueKind::kOptional);
  g.Node("OptionalGetElement", {"o"}, {"y"});
  g.Output("y", DataType::kFloat32, {2});
  auto get = Make(g);
  ASSERT_TRUE(get.ok()) << get.status();
  none.items.clear();
  auto empty = (*get)->Run({&none, 1});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("the optional input is empty"), std::string::npos)
      << empty.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

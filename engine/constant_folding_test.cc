// Constant folding (engine/constant_folding.h) with small test kernels registered under the ONNX
// op names they stand for (the real ones live in kernels/cpu, which engine/ does not see): what
// folds, what must not, and that a folded session computes what an unfolded one does.
#include "engine/constant_folding.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/session.h"
#include "engine/testing/model_builder.h"

namespace inferd::engine {
namespace {

using testing::ModelBuilder;

// Shape (start / end as opset 15 defines them).
class ShapeKernel : public OpKernel {
 public:
  explicit ShapeKernel(const KernelInfo& info)
      : start_(info.GetInt("start", 0)), end_(info.GetInt("end", INT64_MAX)) {}
  absl::Status Compute(KernelContext& ctx) const override {
    const Shape& s = ctx.input(0)->shape();
    const int64_t rank = static_cast<int64_t>(s.rank());
    auto clamp = [rank](int64_t i) {
      return std::max<int64_t>(0, std::min(rank, i < 0 ? i + rank : i));
    };
    const int64_t b = clamp(start_), e = std::max(b, clamp(end_));
    auto out = ctx.MakeOutputTensor(0, DataType::kInt64, Shape{e - b});
    if (!out.ok()) return out.status();
    for (int64_t i = b; i < e; ++i) (*out)->mutable_data<int64_t>()[i - b] = s[i];
    return absl::OkStatus();
  }

 private:
  int64_t start_, end_;
};

// Gather over axis 0 of 1-D int64 data.
class GatherKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* data = ctx.input(0);
    const Tensor* idx = ctx.input(1);
    auto out = ctx.MakeOutputTensor(0, DataType::kInt64, idx->shape());
    if (!out.ok()) return out.status();
    for (int64_t i = 0; i < idx->NumElements(); ++i) {
      int64_t k = idx->data<int64_t>()[i];
      if (k < 0) k += data->NumElements();
      if (k < 0 || k >= data->NumElements()) return absl::InvalidArgumentError("index");
      (*out)->mutable_data<int64_t>()[i] = data->data<int64_t>()[k];
    }
    return absl::OkStatus();
  }
};

// Unsqueeze of a scalar to [1] (all this test needs).
class UnsqueezeKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x->shape().rank() != 0) return absl::UnimplementedError("scalars only");
    return ctx.MakeOutputAlias(0, 0, Shape{1}).status();
  }
};

// Concat of 1-D int64 tensors.
class ConcatKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    int64_t n = 0;
    for (int i = 0; i < ctx.num_inputs(); ++i) n += ctx.input(i)->NumElements();
    auto out = ctx.MakeOutputTensor(0, DataType::kInt64, Shape{n});
    if (!out.ok()) return out.status();
    int64_t at = 0;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      std::memcpy((*out)->mutable_data<int64_t>() + at, t->raw_data(), t->bytes());
      at += t->NumElements();
    }
    return absl::OkStatus();
  }
};

// Reshape (no 0 or -1 in the shape).
class ReshapeKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* s = ctx.input(1);
    Shape shape(absl::MakeConstSpan(s->data<int64_t>(), s->NumElements()));
    return ctx.MakeOutputAlias(0, 0, shape).status();
  }
  std::vector<std::pair<int, int>> OutputAliases() const override { return {{0, 0}}; }
};

// Y = A + B, float32, same shapes.
class AddKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a->shape() != b->shape()) return absl::InvalidArgumentError("shapes differ");
    auto out = ctx.MakeOutputTensor(0, DataType::kFloat32, a->shape());
    if (!out.ok()) return out.status();
    for (int64_t i = 0; i < a->NumElements(); ++i) {
      (*out)->mutable_data<float>()[i] = a->data<float>()[i] + b->data<float>()[i];
    }
    return absl::OkStatus();
  }
};

// ConstantOfShape: float32 zeros of the shape its input holds.
class ConstantOfShapeKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* s = ctx.input(0);
    Shape shape(absl::MakeConstSpan(s->data<int64_t>(), s->NumElements()));
    auto out = ctx.MakeOutputTensor(0, DataType::kFloat32, shape);
    if (!out.ok()) return out.status();
    std::memset((*out)->raw_mutable_data(), 0, (*out)->bytes());
    return absl::OkStatus();
  }
};

// RandomUniformLike: a different value at every call (what folding must not freeze).
std::atomic<int> g_calls{0};
class RandomLikeKernel : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    auto out = ctx.MakeOutputTensor(0, DataType::kFloat32, ctx.input(0)->shape());
    if (!out.ok()) return out.status();
    const float v = static_cast<float>(++g_calls);
    for (int64_t i = 0; i < (*out)->NumElements(); ++i) (*out)->mutable_data<float>()[i] = v;
    return absl::OkStatus();
  }
};

template <typename K>
KernelDef Def(const std::string& op) {
  KernelDef d;
  d.op_type = op;
  d.create = [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    if constexpr (std::is_constructible_v<K, const KernelInfo&>) {
      return std::make_unique<K>(info);
    } else {
      return std::make_unique<K>();
    }
  };
  return d;
}

class ConstantFoldingTest : public ::testing::Test {
 protected:
  ConstantFoldingTest() {
    EXPECT_TRUE(registry_.Register(Def<ShapeKernel>("Shape")).ok());
    EXPECT_TRUE(registry_.Register(Def<GatherKernel>("Gather")).ok());
    EXPECT_TRUE(registry_.Register(Def<UnsqueezeKernel>("Unsqueeze")).ok());
    EXPECT_TRUE(registry_.Register(Def<ConcatKernel>("Concat")).ok());
    EXPECT_TRUE(registry_.Register(Def<ReshapeKernel>("Reshape")).ok());
    EXPECT_TRUE(registry_.Register(Def<AddKernel>("Add")).ok());
    EXPECT_TRUE(registry_.Register(Def<ConstantOfShapeKernel>("ConstantOfShape")).ok());
    EXPECT_TRUE(registry_.Register(Def<RandomLikeKernel>("RandomUniformLike")).ok());
  }

  // x[2, 3, 4] (or [batch, 3, 4]) -> y = Reshape(x, [d0, d2, d1]) = x as [batch, 4, 3], the
  // new shape computed from x's:
  //   s = Shape(x); d0 = Gather(s, 0); d2 = Gather(s, 2)
  //   tail = Shape(x, start=1); d1 = Gather(tail, 0)
  //   new_shape = Concat(Unsqueeze(d0), Unsqueeze(d2), Unsqueeze(d1))
  // `fix_batch` fixes x's shape at load (ModelLoadOptions), which makes every dim known.
  std::shared_ptr<const Model> ReshapeModel(bool fix_batch) {
    ModelBuilder b(17);
    b.Input("x", DataType::kFloat32, {-1, 3, 4});
    b.Initializer("i0", Shape{}, std::vector<int64_t>{0});
    b.Initializer("i2", Shape{}, std::vector<int64_t>{2});
    b.Initializer("axes", Shape{1}, std::vector<int64_t>{0});
    b.Node("Shape", {"x"}, {"s"}, "shape");
    b.Node("Gather", {"s", "i0"}, {"d0"}, "gather0");
    b.Node("Gather", {"s", "i2"}, {"d2"}, "gather2");
    ModelBuilder::IntAttr(b.Node("Shape", {"x"}, {"tail"}, "shape_tail"), "start", 1);
    b.Node("Gather", {"tail", "i0"}, {"d1"}, "gather1");
    b.Node("Unsqueeze", {"d0", "axes"}, {"u0"}, "unsqueeze0");
    b.Node("Unsqueeze", {"d2", "axes"}, {"u2"}, "unsqueeze2");
    b.Node("Unsqueeze", {"d1", "axes"}, {"u1"}, "unsqueeze1");
    b.Node("Concat", {"u0", "u2", "u1"}, {"new_shape"}, "concat");
    ModelBuilder::IntAttr(
        *b.proto().mutable_graph()->mutable_node(b.proto().graph().node_size() - 1), "axis", 0);
    b.Node("Reshape", {"x", "new_shape"}, {"y"}, "reshape");
    b.Output("y", DataType::kFloat32, {-1, -1, -1});
    ModelLoadOptions load;
    if (fix_batch) load.fixed_input_shapes["x"] = {2, 3, 4};
    auto m = Model::Parse(b.Serialize(), "", load);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : nullptr;
  }

  static std::vector<std::string> NodeNames(const Graph& g) {
    std::vector<std::string> names;
    for (const Node& n : g.nodes) names.push_back(n.name);
    return names;
  }

  static std::vector<int64_t> Int64Weight(const Graph& g, const std::string& name) {
    const int v = g.FindValue(name);
    if (v < 0 || g.values[v].initializer == nullptr) return {};
    const Tensor* t = g.values[v].initializer;
    if (t->dtype() != DataType::kInt64) return {};
    return std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->NumElements());
  }

  // Runs `m` on x = 0, 1, ..., 23 as [2, 3, 4]: output 0's shape and values.
  void RunReshape(std::shared_ptr<const Model> m, Shape* shape, std::vector<float>* values) {
    auto s = Session::Create(std::move(m), {}, registry_);
    ASSERT_TRUE(s.ok()) << s.status();
    std::vector<float> x(24);
    for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
    InputTensor in{"x", DataType::kFloat32, Shape{2, 3, 4}, x.data(), x.size() * sizeof(float)};
    auto out = (*s)->Run({in});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    *shape = (*out)[0].shape;
    const float* y = static_cast<const float*>((*out)[0].buffer.data());
    values->assign(y, y + shape->NumElements());
  }

  KernelRegistry registry_;
};

TEST_F(ConstantFoldingTest, StaticShapeChainFoldsToAWeight) {
  std::shared_ptr<const Model> m = ReshapeModel(/*fix_batch=*/true);
  ASSERT_NE(m, nullptr);
  Graph g = m->graph();
  ASSERT_EQ(g.nodes.size(), 10u);
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 9);
  EXPECT_EQ(NodeNames(g), std::vector<std::string>{"reshape"});
  // The folded value keeps its name and index: the Reshape reads it unchanged.
  EXPECT_EQ(Int64Weight(g, "new_shape"), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(g.nodes[0].inputs[1], g.FindValue("new_shape"));
  EXPECT_GT(derived.bytes(), 0u);
  EXPECT_TRUE(g.Validate().ok());
}

TEST_F(ConstantFoldingTest, FoldedSessionComputesWhatTheUnfoldedOneDoes) {
  // Fixed at load: the whole chain folds; symbolic batch: Shape(x) and its batch dim run.
  Shape folded_shape, dynamic_shape;
  std::vector<float> folded, dynamic;
  RunReshape(ReshapeModel(/*fix_batch=*/true), &folded_shape, &folded);
  RunReshape(ReshapeModel(/*fix_batch=*/false), &dynamic_shape, &dynamic);
  EXPECT_EQ(folded_shape, (Shape{2, 4, 3}));
  EXPECT_EQ(dynamic_shape, folded_shape);
  EXPECT_EQ(dynamic, folded);
  ASSERT_EQ(folded.size(), 24u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(folded[i], static_cast<float>(i));

  auto s = Session::Create(ReshapeModel(true), {}, registry_);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(NodeNames((*s)->graph()), std::vector<std::string>{"reshape"});
}

TEST_F(ConstantFoldingTest, SymbolicBatchFoldsOnlyTheStaticDims) {
  std::shared_ptr<const Model> m = ReshapeModel(/*fix_batch=*/false);
  ASSERT_NE(m, nullptr);
  Graph g = m->graph();
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  // Shape(x, start=1) = [3, 4] folds, and Gather(Shape(x), 2) = 4 (the Shape reads the batch
  // dim, the Gather does not); Gather(Shape(x), 0) is the batch and stays, with what reads it.
  EXPECT_EQ(*removed, 5);
  EXPECT_EQ(NodeNames(g),
            (std::vector<std::string>{"shape", "gather0", "unsqueeze0", "concat", "reshape"}));
  EXPECT_EQ(Int64Weight(g, "tail"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Int64Weight(g, "d2"), (std::vector<int64_t>{4}));
  EXPECT_EQ(Int64Weight(g, "u1"), (std::vector<int64_t>{3}));
  EXPECT_TRUE(Int64Weight(g, "d0").empty());
  EXPECT_TRUE(Int64Weight(g, "s").empty());
}

TEST_F(ConstantFoldingTest, ShapeLeftWithoutReadersIsDropped) {
  // Gather(Shape(x), 1) folds; the Shape then has no reader left and goes too.
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {-1, 3});
  b.Initializer("i1", Shape{1}, std::vector<int64_t>{1});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Node("Gather", {"s", "i1"}, {"d1"}, "gather");
  b.Node("Concat", {"d1", "d1"}, {"c"}, "concat");
  ModelBuilder::IntAttr(*b.proto().mutable_graph()->mutable_node(2), "axis", 0);
  b.Node("Reshape", {"x", "c"}, {"y"}, "reshape");  // a reader that stays
  b.Output("y", DataType::kFloat32, {-1, -1});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  Graph g = (*m)->graph();
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 3);
  EXPECT_EQ(NodeNames(g), std::vector<std::string>{"reshape"});
  EXPECT_EQ(Int64Weight(g, "c"), (std::vector<int64_t>{3, 3}));
}

TEST_F(ConstantFoldingTest, GraphOutputsAndSubgraphReadsAreNotFolded) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {2, 3});
  b.Initializer("i0", Shape{}, std::vector<int64_t>{0});
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Node("Gather", {"s", "i0"}, {"d0"}, "gather");
  b.Output("s", DataType::kInt64, {2});
  b.Output("d0", DataType::kInt64, {});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  Graph g = (*m)->graph();
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"shape", "gather"}));
  EXPECT_EQ(derived.count(), 0u);

  // A value an If branch reads by name (the node's implicit input) keeps its producer; what
  // comes before it still folds.
  std::shared_ptr<const Model> chain = ReshapeModel(/*fix_batch=*/true);
  ASSERT_NE(chain, nullptr);
  Graph h = chain->graph();
  for (Node& n : h.nodes) {
    if (n.name == "reshape") n.implicit_inputs.push_back(h.FindValue("u2"));
  }
  h.RebuildEdges();
  removed = FoldConstants(h, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 7);  // not unsqueeze2, nor concat (u2 is not a weight), nor the reshape
  EXPECT_EQ(NodeNames(h), (std::vector<std::string>{"unsqueeze2", "concat", "reshape"}));
  EXPECT_EQ(Int64Weight(h, "d2"), (std::vector<int64_t>{4}));
}

TEST_F(ConstantFoldingTest, RandomOpsAreNotFolded) {
  // r = RandomUniformLike(w) stays (a new value every run); z = w + w, as constant, folds.
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {4});
  b.Initializer("w", Shape{4}, std::vector<float>{1, 2, 3, 4});
  b.Node("RandomUniformLike", {"w"}, {"r"}, "random");
  b.Node("Add", {"w", "w"}, {"z"}, "twice");
  b.Node("Add", {"r", "z"}, {"rz"}, "add_rz");
  b.Node("Add", {"x", "rz"}, {"y"}, "add_x");
  b.Output("y", DataType::kFloat32, {4});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  Graph g = (*m)->graph();
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"random", "add_rz", "add_x"}));

  auto s = Session::Create(*m, {}, registry_);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<float> x{0, 0, 0, 0};
  InputTensor in{"x", DataType::kFloat32, Shape{4}, x.data(), x.size() * sizeof(float)};
  std::vector<float> first, second;
  for (std::vector<float>* into : {&first, &second}) {
    auto out = (*s)->Run({in});
    ASSERT_TRUE(out.ok()) << out.status();
    const float* y = static_cast<const float*>((*out)[0].buffer.data());
    into->assign(y, y + 4);
  }
  EXPECT_NE(first, second);  // the random op ran in each run
  EXPECT_EQ(second[3] - first[3], 1.0f);
  EXPECT_EQ(second[0] - second[1], -2.0f);  // z = 2w was folded correctly
}

TEST_F(ConstantFoldingTest, LargeOutputsAreNotFolded) {
  // ConstantOfShape of [16] (64 bytes) folds; of [100000] (400 KB, over the 64 KiB default)
  // and of [65536, 65536] (16 GiB) does not, and nothing that large is allocated.
  ModelBuilder b(17);
  b.Initializer("small", Shape{1}, std::vector<int64_t>{16});
  b.Initializer("large", Shape{1}, std::vector<int64_t>{100000});
  b.Initializer("huge", Shape{2}, std::vector<int64_t>{65536, 65536});
  b.Input("x", DataType::kFloat32, {1});
  const char* names[] = {"small", "large", "huge"};
  for (const char* name : names) {
    const std::string c = std::string(name) + "_zeros";
    b.Node("ConstantOfShape", {name}, {c}, c);
    b.Node("Reshape", {c, name}, {std::string(name) + "_out"}, std::string(name) + "_reshape");
    b.Output(std::string(name) + "_out", DataType::kFloat32,
             std::string(name) == "huge" ? std::vector<int64_t>{-1, -1} : std::vector<int64_t>{-1});
  }
  b.Node("Add", {"x", "x"}, {"x2"}, "keep_x");
  b.Output("x2", DataType::kFloat32, {1});
  auto m = Model::Parse(b.Serialize(), "");
  ASSERT_TRUE(m.ok()) << m.status();
  Graph g = (*m)->graph();
  // As if inference had not seen the size: then the kernel's request is what is checked.
  for (Value& v : g.values) {
    if (v.name == "large_zeros") v.shape = ShapeInfo::Unknown();
  }
  DerivedWeights derived;
  absl::StatusOr<int> removed = FoldConstants(g, registry_, derived);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"small_reshape", "large_zeros", "large_reshape",
                                                    "huge_zeros", "huge_reshape", "keep_x"}));
  EXPECT_EQ(derived.bytes(), 64u);

  // A lower limit leaves the small one too.
  Graph h = (*m)->graph();
  DerivedWeights none;
  ConstantFoldingOptions options;
  options.max_output_bytes = 32;
  removed = FoldConstants(h, registry_, none, options);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
  EXPECT_EQ(none.bytes(), 0u);
}

}  // namespace
}  // namespace inferd::engine

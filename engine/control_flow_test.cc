// Loop and Scan through Session::Run with small test kernels (domain "test.inferd"): trip count
// and condition forms, zero trips, early exit, outer-scope captures, loop-carried values whose
// shape grows, scan outputs (stacked, axes, directions), and the errors bad bodies get.
#include "engine/control_flow.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "engine/testing/model_builder.h"

namespace inferd::engine {
namespace {

using testing::ModelBuilder;
constexpr char kTest[] = "test.inferd";

// AddF: Y = A + B (float; B of A's shape or of one element).
class AddF : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    auto y = ctx.MakeOutputTensor(0, DataType::kFloat32, a->shape());
    if (!y.ok()) return y.status();
    const bool scalar = b->NumElements() == 1;
    for (int64_t i = 0; i < a->NumElements(); ++i) {
      (*y)->mutable_data<float>()[i] = a->data<float>()[i] + b->data<float>()[scalar ? 0 : i];
    }
    return absl::OkStatus();
  }
};

// Append: Y = X with the one element of B appended (1-D float; the shape grows).
class Append : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* b = ctx.input(1);
    auto y = ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{x->NumElements() + 1});
    if (!y.ok()) return y.status();
    if (x->bytes() > 0) std::memcpy((*y)->raw_mutable_data(), x->raw_data(), x->bytes());
    (*y)->mutable_data<float>()[x->NumElements()] = b->data<float>()[0];
    return absl::OkStatus();
  }
};

// Below: Y (bool scalar) = A[0] < B[0].
class Below : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    auto y = ctx.MakeOutputTensor(0, DataType::kBool, Shape{});
    if (!y.ok()) return y.status();
    (*y)->mutable_data<bool>()[0] = ctx.input(0)->data<float>()[0] < ctx.input(1)->data<float>()[0];
    return absl::OkStatus();
  }
};

// IterF: Y (float [1]) = the int64 iteration number.
class IterF : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    auto y = ctx.MakeOutputTensor(0, DataType::kFloat32, Shape{1});
    if (!y.ok()) return y.status();
    (*y)->mutable_data<float>()[0] = static_cast<float>(ctx.input(0)->data<int64_t>()[0]);
    return absl::OkStatus();
  }
};

template <typename K>
KernelDef TestDef(const std::string& op) {
  KernelDef d;
  d.domain = kTest;
  d.op_type = op;
  d.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<K>();
  };
  return d;
}

void SetType(onnx::ValueInfoProto* vi, const std::string& name, DataType t,
             const std::vector<int64_t>* dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(t));
  if (dims == nullptr) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims->size(); ++i) {
    if ((*dims)[i] >= 0) {
      shape->add_dim()->set_dim_value((*dims)[i]);
    } else {
      shape->add_dim()->set_dim_param(absl::StrCat(name, "_d", i));
    }
  }
}

// A body graph under construction, attached to `node` as attribute "body".
struct Body {
  onnx::GraphProto* g;
  explicit Body(onnx::NodeProto& node) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    g = a->mutable_g();
    g->set_name("body");
  }
  Body& In(const std::string& n, DataType t, std::vector<int64_t> dims) {
    SetType(g->add_input(), n, t, &dims);
    return *this;
  }
  Body& Out(const std::string& n, DataType t, std::vector<int64_t> dims) {
    SetType(g->add_output(), n, t, &dims);
    return *this;
  }
  Body& Node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_domain(kTest);
    n->set_name(absl::StrCat("body/", op, g->node_size()));
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *this;
  }
};

class ControlFlowTest : public ::testing::Test {
 protected:
  ControlFlowTest() {
    EXPECT_TRUE(registry_.Register(TestDef<AddF>("AddF")).ok());
    EXPECT_TRUE(registry_.Register(TestDef<Append>("Append")).ok());
    EXPECT_TRUE(registry_.Register(TestDef<Below>("Below")).ok());
    EXPECT_TRUE(registry_.Register(TestDef<IterF>("IterF")).ok());
  }

  std::unique_ptr<Session> Make(ModelBuilder& b) {
    auto m = Model::Parse(b.Serialize(), "");
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return nullptr;
    auto s = Session::Create(*m, SessionOptions(), registry_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }

  static std::vector<float> Floats(const OutputTensor& t) {
    const float* p = static_cast<const float*>(t.buffer.data());
    return std::vector<float>(p, p + t.shape.NumElements());
  }

  KernelRegistry registry_;
};

// acc[2] = x; for i < M while cond: acc = acc + w (w read from the outer scope); the scan output
// stacks acc + iteration number. With `early_exit`, the body's condition is acc[0] < limit.
ModelBuilder LoopModel(bool with_cond, bool early_exit) {
  ModelBuilder b(13);
  b.ImportDomain(kTest, 1);
  b.Input("M", DataType::kInt64, {});
  if (with_cond) b.Input("cond", DataType::kBool, {});
  b.Input("x", DataType::kFloat32, {2});
  b.Input("w", DataType::kFloat32, {2});
  b.Input("limit", DataType::kFloat32, {1});
  onnx::NodeProto& loop =
      b.Node("Loop", {"M", with_cond ? "cond" : "", "x"}, {"acc", "scan"}, "loop");
  Body body(loop);
  body.In("i", DataType::kInt64, {}).In("c_in", DataType::kBool, {});
  body.In("a_in", DataType::kFloat32, {2});
  body.Node("AddF", {"a_in", "w"}, {"a_out"});
  body.Node("IterF", {"i"}, {"i_f"});
  body.Node("AddF", {"a_out", "i_f"}, {"s_out"});
  if (early_exit) body.Node("Below", {"a_out", "limit"}, {"c_out"});
  body.Out(early_exit ? "c_out" : "c_in", DataType::kBool, {});
  body.Out("a_out", DataType::kFloat32, {2});
  body.Out("s_out", DataType::kFloat32, {2});
  b.Output("acc", DataType::kFloat32, {2});
  b.Output("scan", DataType::kFloat32, {-1, 2});
  return b;
}

struct LoopFeeds {
  int64_t m = 3;
  uint8_t cond = 1;
  std::vector<float> x = {1, 10}, w = {2, 20}, limit = {1000};
  std::vector<InputTensor> Inputs(bool with_cond) const {
    std::vector<InputTensor> in = {{"M", DataType::kInt64, Shape{}, &m, 8}};
    if (with_cond) in.push_back({"cond", DataType::kBool, Shape{}, &cond, 1});
    in.push_back({"x", DataType::kFloat32, Shape{2}, x.data(), 8});
    in.push_back({"w", DataType::kFloat32, Shape{2}, w.data(), 8});
    in.push_back({"limit", DataType::kFloat32, Shape{1}, limit.data(), 4});
    return in;
  }
};

TEST_F(ControlFlowTest, LoopCarriesValuesReadsOuterScopeAndStacksScanOutputs) {
  for (bool with_cond : {false, true}) {
    ModelBuilder b = LoopModel(with_cond, false);
    auto s = Make(b);
    ASSERT_NE(s, nullptr);
    LoopFeeds f;
    for (int run = 0; run < 2; ++run) {  // the second run reuses the body's slot
      auto out = s->Run(f.Inputs(with_cond));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{7, 70}));
      EXPECT_EQ((*out)[1].shape, (Shape{3, 2}));
      EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{3, 30, 6, 51, 9, 72}));
    }
    EXPECT_EQ(s->devices()[0].execution->Stats().live_bytes, 0u);
  }
}

TEST_F(ControlFlowTest, LoopOfZeroTripsReturnsTheInitialValuesAndEmptyScans) {
  ModelBuilder b = LoopModel(true, false);
  auto s = Make(b);
  ASSERT_NE(s, nullptr);
  for (auto [m, cond] : {std::pair<int64_t, uint8_t>{0, 1}, {5, 0}, {-2, 1}}) {
    LoopFeeds f;
    f.m = m;
    f.cond = cond;
    auto out = s->Run(f.Inputs(true));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Floats((*out)[0]), f.x);
    EXPECT_EQ((*out)[1].shape, (Shape{0, 2}));
  }
}

TEST_F(ControlFlowTest, LoopStopsWhenTheBodysConditionTurnsFalse) {
  ModelBuilder b = LoopModel(true, true);
  auto s = Make(b);
  ASSERT_NE(s, nullptr);
  LoopFeeds f;
  f.m = 100;
  f.limit = {6};  // acc[0]: 3, 5, 7 -> the third iteration says stop
  auto out = s->Run(f.Inputs(true));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{7, 70}));
  EXPECT_EQ((*out)[1].shape, (Shape{3, 2}));
  // Without a cond input the body's condition is ignored: M trips.
  ModelBuilder b2 = LoopModel(false, true);
  auto s2 = Make(b2);
  ASSERT_NE(s2, nullptr);
  f.m = 4;
  out = s2->Run(f.Inputs(false));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{9, 90}));
}

// v = [] grows by one element per trip (a loop-carried value whose shape changes); the scan
// output of a changing shape is refused with a message saying where.
TEST_F(ControlFlowTest, LoopCarriedShapesMayGrowScanSlicesMayNot) {
  for (bool scan_it : {false, true}) {
    ModelBuilder b(13);
    b.ImportDomain(kTest, 1);
    b.Input("M", DataType::kInt64, {});
    b.Input("v", DataType::kFloat32, {-1});
    b.Input("one", DataType::kFloat32, {1});
    std::vector<std::string> outs = {"v_final"};
    if (scan_it) outs.push_back("s");
    onnx::NodeProto& loop = b.Node("Loop", {"M", "", "v"}, outs, "loop");
    Body body(loop);
    body.In("i", DataType::kInt64, {}).In("c", DataType::kBool, {});
    body.In("v_in", DataType::kFloat32, {-1});
    body.Node("Append", {"v_in", "one"}, {"v_out"});
    body.Out("c", DataType::kBool, {}).Out("v_out", DataType::kFloat32, {-1});
    if (scan_it) body.Out("v_out", DataType::kFloat32, {-1});
    b.Output("v_final", DataType::kFloat32, {-1});
    if (scan_it) b.Output("s", DataType::kFloat32, {-1, -1});
    auto s = Make(b);
    ASSERT_NE(s, nullptr);
    const int64_t m = 3;
    const float v = 5, one = 1;
    std::vector<InputTensor> in = {{"M", DataType::kInt64, Shape{}, &m, 8},
                                   {"v", DataType::kFloat32, Shape{1}, &v, 4},
                                   {"one", DataType::kFloat32, Shape{1}, &one, 4}};
    auto out = s->Run(in);
    if (scan_it) {
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("scan output 0 changes"), std::string::npos)
          << out.status();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{5, 1, 1, 1}));
  }
}

TEST_F(ControlFlowTest, LoopRefusesABodyOfTheWrongArityAndBadTripCounts) {
  {
    ModelBuilder b(13);
    b.ImportDomain(kTest, 1);
    b.Input("M", DataType::kInt64, {});
    b.Input("x", DataType::kFloat32, {2});
    onnx::NodeProto& loop = b.Node("Loop", {"M", "", "x"}, {"y"}, "loop");
    Body body(loop);
    body.In("i", DataType::kInt64, {}).In("c", DataType::kBool, {});  // no carried input
    body.Out("c", DataType::kBool, {});
    b.Output("y", DataType::kFloat32, {2});
    auto m = Model::Parse(b.Serialize(), "");
    if (m.ok()) {
      auto s = Session::Create(*m, SessionOptions(), registry_);
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.status().message().find("body declares"), std::string::npos) << s.status();
    }
  }
  ModelBuilder b = LoopModel(true, false);
  auto s = Make(b);
  ASSERT_NE(s, nullptr);
  LoopFeeds f;
  std::vector<InputTensor> in = f.Inputs(true);
  const int32_t m32 = 3;
  in[0] = {"M", DataType::kInt32, Shape{}, &m32, 4};
  EXPECT_FALSE(s->Run(in).ok());
}

// Scan over X [2, 3] along axis 1, optionally in reverse; the state sums the columns; the scan
// output stacks the running sums along output axis `out_axis`, optionally in reverse.
TEST_F(ControlFlowTest, ScanHonoursAxesAndDirections) {
  const std::vector<float> x = {1, 2, 3, 10, 20, 30};
  for (int in_dir : {0, 1}) {
    for (int out_axis : {0, 1, -1}) {
      for (int out_dir : {0, 1}) {
        SCOPED_TRACE(::testing::Message()
                     << "in_dir=" << in_dir << " out_axis=" << out_axis << " out_dir=" << out_dir);
        ModelBuilder b(11);
        b.ImportDomain(kTest, 1);
        b.Input("s0", DataType::kFloat32, {2});
        b.Input("x", DataType::kFloat32, {2, 3});
        onnx::NodeProto& scan = b.Node("Scan", {"s0", "x"}, {"s", "ys"}, "scan");
        ModelBuilder::IntAttr(scan, "num_scan_inputs", 1);
        ModelBuilder::IntsAttr(scan, "scan_input_axes", {1});
        ModelBuilder::IntsAttr(scan, "scan_input_directions", {in_dir});
        ModelBuilder::IntsAttr(scan, "scan_output_axes", {out_axis});
        ModelBuilder::IntsAttr(scan, "scan_output_directions", {out_dir});
        Body body(scan);
        body.In("s_in", DataType::kFloat32, {2}).In("col", DataType::kFloat32, {2});
        body.Node("AddF", {"s_in", "col"}, {"s_out"});
        body.Out("s_out", DataType::kFloat32, {2}).Out("s_out", DataType::kFloat32, {2});
        b.Output("s", DataType::kFloat32, {2});
        b.Output("ys", DataType::kFloat32, {-1, -1});
        auto s = Make(b);
        ASSERT_NE(s, nullptr);
        const std::vector<float> s0 = {0, 0};
        std::vector<InputTensor> in = {{"s0", DataType::kFloat32, Shape{2}, s0.data(), 8},
                                       {"x", DataType::kFloat32, Shape{2, 3}, x.data(), 24}};
        auto out = s->Run(in);
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{6, 60}));
        // Running sums per iteration (rows: iterations).
        std::vector<std::vector<float>> it =
            in_dir == 0 ? std::vector<std::vector<float>>{{1, 10}, {3, 30}, {6, 60}}
                        : std::vector<std::vector<float>>{{3, 30}, {5, 50}, {6, 60}};
        if (out_dir == 1) std::swap(it[0], it[2]);
        std::vector<float> want;
        if (out_axis == 0) {
          for (const auto& r : it) want.insert(want.end(), r.begin(), r.end());
          EXPECT_EQ((*out)[1].shape, (Shape{3, 2}));
        } else {
          for (int j = 0; j < 2; ++j) {
            for (const auto& r : it) want.push_back(r[j]);
          }
          EXPECT_EQ((*out)[1].shape, (Shape{2, 3}));
        }
        EXPECT_EQ(Floats((*out)[1]), want);
      }
    }
  }
}

// Scan-8: a batch of two sequences of lengths 3 and 1 (sequence_lens), read backwards; each batch
// entry scans its own slices; scan outputs past a sequence's length are zero.
TEST_F(ControlFlowTest, Scan8RunsEachBatchEntryToItsLength) {
  ModelBuilder b(8);
  b.ImportDomain(kTest, 1);
  b.Input("lens", DataType::kInt64, {2});
  b.Input("s0", DataType::kFloat32, {2, 1});
  b.Input("x", DataType::kFloat32, {2, 3, 1});
  onnx::NodeProto& scan = b.Node("Scan", {"lens", "s0", "x"}, {"s", "ys"}, "scan");
  ModelBuilder::IntAttr(scan, "num_scan_inputs", 1);
  ModelBuilder::IntsAttr(scan, "directions", {1});
  Body body(scan);
  body.In("s_in", DataType::kFloat32, {1}).In("v", DataType::kFloat32, {1});
  body.Node("AddF", {"s_in", "v"}, {"s_out"});
  body.Out("s_out", DataType::kFloat32, {1}).Out("s_out", DataType::kFloat32, {1});
  b.Output("s", DataType::kFloat32, {2, 1});
  b.Output("ys", DataType::kFloat32, {2, 3, 1});
  auto s = Make(b);
  ASSERT_NE(s, nullptr);
  const std::vector<int64_t> lens = {3, 1};
  const std::vector<float> s0 = {0, 100};
  const std::vector<float> x = {1, 2, 3, 10, 20, 30};
  std::vector<InputTensor> in = {{"lens", DataType::kInt64, Shape{2}, lens.data(), 16},
                                 {"s0", DataType::kFloat32, Shape{2, 1}, s0.data(), 8},
                                 {"x", DataType::kFloat32, Shape{2, 3, 1}, x.data(), 24}};
  auto out = s->Run(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{6, 110}));
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{3, 5, 6, 110, 0, 0}));
  // A length past the sequence axis is refused.
  const std::vector<int64_t> bad = {4, 1};
  in[0].data = bad.data();
  EXPECT_FALSE(s->Run(in).ok());
}

TEST_F(ControlFlowTest, ScanOfLengthZeroAndMismatchedLengths) {
  ModelBuilder b(11);
  b.ImportDomain(kTest, 1);
  b.Input("s0", DataType::kFloat32, {2});
  b.Input("x", DataType::kFloat32, {-1, 2});
  b.Input("z", DataType::kFloat32, {-1, 2});
  onnx::NodeProto& scan = b.Node("Scan", {"s0", "x", "z"}, {"s", "ys"}, "scan");
  ModelBuilder::IntAttr(scan, "num_scan_inputs", 2);
  Body body(scan);
  body.In("s_in", DataType::kFloat32, {2}).In("row", DataType::kFloat32, {2});
  body.In("zrow", DataType::kFloat32, {2});
  body.Node("AddF", {"s_in", "row"}, {"s_out"});
  body.Out("s_out", DataType::kFloat32, {2}).Out("zrow", DataType::kFloat32, {2});
  b.Output("s", DataType::kFloat32, {2});
  b.Output("ys", DataType::kFloat32, {-1, 2});
  auto s = Make(b);
  ASSERT_NE(s, nullptr);
  const std::vector<float> s0 = {1, 2}, x = {1, 1, 2, 2};
  std::vector<InputTensor> in = {{"s0", DataType::kFloat32, Shape{2}, s0.data(), 8},
                                 {"x", DataType::kFloat32, Shape{0, 2}, x.data(), 0},
                                 {"z", DataType::kFloat32, Shape{0, 2}, x.data(), 0}};
  auto out = s->Run(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), s0);
  EXPECT_EQ((*out)[1].shape, (Shape{0, 2}));
  // A scan input returned as is becomes a scan output (copied out of the input).
  in[1] = {"x", DataType::kFloat32, Shape{2, 2}, x.data(), 16};
  in[2] = {"z", DataType::kFloat32, Shape{2, 2}, x.data(), 16};
  out = s->Run(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{4, 5}));
  EXPECT_EQ(Floats((*out)[1]), x);
  in[2] = {"z", DataType::kFloat32, Shape{1, 2}, x.data(), 8};
  out = s->Run(in);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("sequence length"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace inferd::engine

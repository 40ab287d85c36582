// The Reduce* kernels against a naive reference (every input element folded into its output in
// double): all ten ops over shapes whose reduced axes are inner, outer, interleaved, negative,
// all or none; keepdims; ReduceSum's axes input and noop_with_empty_axes (opset 13) vs the
// attribute (opset 11); int32 / int64 / float64; empty dims; a long single-output reduction;
// 1 vs 2 threads; errors.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;
using testing::ExpectNear;
using testing::RandomFloats;
using testing::Unflatten;

const char* const kOps[] = {"ReduceSum",    "ReduceMean",     "ReduceMax", "ReduceMin",
                            "ReduceProd",   "ReduceL1",       "ReduceL2",  "ReduceSumSquare",
                            "ReduceLogSum", "ReduceLogSumExp"};

// The reference: output shape and values (in double).
std::vector<double> RefReduce(const std::string& op, const Shape& s, const std::vector<double>& x,
                              std::vector<int64_t> axes, bool keepdims, Shape* out_shape) {
  const size_t rank = s.rank();
  std::vector<bool> mask(rank, axes.empty());
  for (int64_t a : axes) mask[a < 0 ? a + rank : a] = true;
  Shape full;  // the output with reduced dims as 1
  out_shape->resize(0);
  for (size_t i = 0; i < rank; ++i) {
    full.push_back(mask[i] ? 1 : s[i]);
    if (!mask[i] || keepdims) out_shape->push_back(mask[i] ? 1 : s[i]);
  }
  const int64_t outputs = full.NumElements();
  std::vector<std::vector<double>> groups(outputs);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    std::vector<int64_t> idx = Unflatten(i, s);
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o = o * full[d] + (mask[d] ? 0 : idx[d]);
    groups[o].push_back(x[i]);
  }
  std::vector<double> y(outputs);
  for (int64_t o = 0; o < outputs; ++o) {
    const std::vector<double>& g = groups[o];
    double sum = 0, sq = 0, abs = 0, prod = 1, sum_exp = 0;
    double mx = -std::numeric_limits<double>::infinity(), mn = -mx;
    for (double v : g) {
      sum += v;
      sq += v * v;
      abs += std::fabs(v);
      prod *= v;
      mx = std::max(mx, v);
      mn = std::min(mn, v);
      sum_exp += std::exp(v);
    }
    if (op == "ReduceSum") y[o] = sum;
    if (op == "ReduceMean") y[o] = sum / g.size();
    if (op == "ReduceMax") y[o] = mx;
    if (op == "ReduceMin") y[o] = mn;
    if (op == "ReduceProd") y[o] = prod;
    if (op == "ReduceL1") y[o] = abs;
    if (op == "ReduceL2") y[o] = std::sqrt(sq);
    if (op == "ReduceSumSquare") y[o] = sq;
    if (op == "ReduceLogSum") y[o] = std::log(sum);
    if (op == "ReduceLogSumExp") y[o] = std::log(sum_exp);
  }
  return y;
}

struct ReduceCall {
  std::string op;
  int opset = 13;
  std::optional<std::vector<int64_t>> axes;  // nullopt: no attribute / no input
  bool axes_as_input = false;                // ReduceSum 13+
  std::optional<int64_t> keepdims, noop;
  int threads = 1;
};

template <typename T>
absl::StatusOr<std::vector<engine::Tensor>> RunReduce(KernelTester& t, const ReduceCall& c,
                                                      const Shape& s, const std::vector<T>& x) {
  t.Input<T>(s, x).Threads(c.threads);
  if (c.keepdims) t.Attr("keepdims", *c.keepdims);
  if (c.noop) t.Attr("noop_with_empty_axes", *c.noop);
  if (c.axes && c.axes_as_input) {
    t.Input<int64_t>(Shape{static_cast<int64_t>(c.axes->size())}, *c.axes);
  } else if (c.axes) {
    t.Attr("axes", *c.axes);
  }
  return t.Run(CpuRegistry());
}

// Runs the float kernel and compares with the reference (relative tolerance).
void Check(const ReduceCall& c, const Shape& s, const std::vector<float>& x) {
  SCOPED_TRACE(c.op + " " + s.ToString() + " axes " +
               (c.axes ? std::to_string(c.axes->size()) : std::string("none")));
  KernelTester t(c.op, c.opset);
  auto out = RunReduce<float>(t, c, s, x);
  ASSERT_TRUE(out.ok()) << out.status();
  Shape expected_shape;
  const std::vector<double> xd(x.begin(), x.end());
  const std::vector<double> ref = RefReduce(c.op, s, xd, c.axes.value_or(std::vector<int64_t>{}),
                                            c.keepdims.value_or(1) != 0, &expected_shape);
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), ref.size());
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(y[i], ref[i], 1e-5 + 1e-4 * std::fabs(ref[i])) << "at " << i;
  }
}

TEST(ReduceTest, EveryOpOverManyAxisPatterns) {
  const Shape s{3, 4, 5, 6};
  const auto x = RandomFloats(s.NumElements(), 1, 0.5f, 1.5f);  // positive: logs and products
  const std::vector<std::vector<int64_t>> patterns = {
      {3},    {0},    {1},       {2},  {1, 2},   {2, 3},       {0, 1}, {0, 2},
      {1, 3}, {0, 3}, {0, 2, 3}, {-1}, {-3, -1}, {0, 1, 2, 3}, {}};
  for (const char* op : kOps) {
    for (const auto& axes : patterns) {
      for (int64_t keep : {0, 1}) {
        ReduceCall c{op, 11};
        c.axes = axes;
        c.keepdims = keep;
        Check(c, s, x);
      }
    }
    // No axes at all: everything.
    Check(ReduceCall{op, 11}, s, x);
  }
}

TEST(ReduceTest, SizeOneDimsLongRowsAndWideColumns) {
  // Size-1 dims between reduced and kept ones collapse away; wide inner dims use several tiles.
  const Shape s{2, 1, 3, 1, 2500};
  const auto x = RandomFloats(s.NumElements(), 2, 0.5f, 1.5f);
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceLogSumExp", "ReduceL2"}) {
    for (const auto& axes : std::vector<std::vector<int64_t>>{{0}, {2}, {4}, {1, 3}, {0, 2}}) {
      ReduceCall c{op, 11};
      c.axes = axes;
      Check(c, s, x);
      c.threads = 2;
      Check(c, s, x);
    }
  }
}

TEST(ReduceTest, OneThreadAndTwoThreadsAgreeExactly) {
  // A long single-output reduction (chunked), a column reduction with few blocks (narrow tiles)
  // and a row reduction.
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{{200000}, {0}}, {{300, 700}, {0}}, {{700, 300}, {1}}, {{4, 50, 300}, {1}}};
  for (const Case& k : cases) {
    const auto x = RandomFloats(k.shape.NumElements(), 3);
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceLogSumExp", "ReduceMax"}) {
      std::vector<float> results[2];
      for (int threads : {1, 2}) {
        KernelTester t(op, 11);
        ReduceCall c{op, 11};
        c.axes = k.axes;
        c.threads = threads;
        auto out = RunReduce<float>(t, c, k.shape, x);
        ASSERT_TRUE(out.ok()) << out.status();
        results[threads - 1] = Values<float>((*out)[0]);
      }
      EXPECT_EQ(results[0], results[1]) << op << " " << k.shape.ToString();
      ReduceCall c{op, 11};
      c.axes = k.axes;
      c.threads = 2;
      Check(c, k.shape, x);
    }
  }
}

TEST(ReduceTest, ReduceSumAxesInputAndNoop) {
  const Shape s{2, 3, 4};
  const auto x = RandomFloats(s.NumElements(), 4);
  ReduceCall c{"ReduceSum", 13};
  c.axes = std::vector<int64_t>{-2};
  c.axes_as_input = true;
  Check(c, s, x);
  c.axes = std::vector<int64_t>{0, 2};
  c.keepdims = 0;
  Check(c, s, x);
  // Empty axes: everything, or (noop_with_empty_axes) the input unchanged.
  c.axes = std::vector<int64_t>{};
  c.keepdims = 1;
  Check(c, s, x);
  c.noop = 1;
  KernelTester t("ReduceSum", 13);
  auto out = RunReduce<float>(t, c, s, x);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), s);
  EXPECT_EQ(Values<float>((*out)[0]), x);
  // Absent axes input with noop: also unchanged.
  KernelTester absent("ReduceSum", 13);
  absent.Attr("noop_with_empty_axes", int64_t{1}).Input<float>(s, x);
  auto same = absent.Run(CpuRegistry());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(Values<float>((*same)[0]), x);
}

TEST(ReduceTest, IntegerAndDoubleTypes) {
  const Shape s{3, 4};
  const std::vector<int32_t> xi = {1, -2, 3, 4, 5, 6, -7, 8, 9, 10, 11, 12};
  KernelTester sum("ReduceSum", 11);
  sum.Attr("axes", std::vector<int64_t>{1}).Attr("keepdims", int64_t{0}).Input<int32_t>(s, xi);
  auto out = sum.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{6, 12, 42}));

  const std::vector<int64_t> xl = {1, -2, 3, 4, 5, 6, -7, 8, 9, 10, 11, 12};
  KernelTester mx("ReduceMin", 13);
  mx.Attr("axes", std::vector<int64_t>{0}).Input<int64_t>(s, xl);
  out = mx.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{1, -2, -7, 4}));

  KernelTester mean("ReduceMean", 13);
  mean.Input<int64_t>(s, xl);
  out = mean.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{5}));  // 60 / 12

  const std::vector<double> xd = {1e3, 1e3 + 1, -1e3, 0.5};
  KernelTester lse("ReduceLogSumExp", 13);
  lse.Attr("axes", std::vector<int64_t>{1}).Input<double>(Shape{2, 2}, xd);
  out = lse.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> y = Values<double>((*out)[0]);
  EXPECT_NEAR(y[0], 1e3 + 1 + std::log1p(std::exp(-1.0)), 1e-9);  // no overflow
  EXPECT_NEAR(y[1], 0.5, 1e-9);
}

TEST(ReduceTest, EmptyInputs) {
  // A reduced dim of size 0: the fold of nothing.
  const Shape s{2, 0, 3};
  struct Expect {
    const char* op;
    float value;
  };
  const Expect cases[] = {{"ReduceSum", 0.0f},
                          {"ReduceProd", 1.0f},
                          {"ReduceMax", -std::numeric_limits<float>::infinity()},
                          {"ReduceLogSumExp", -std::numeric_limits<float>::infinity()}};
  for (const Expect& e : cases) {
    KernelTester t(e.op, 11);
    t.Attr("axes", std::vector<int64_t>{1}).Input<float>(s, {});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 1, 3}));
    EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>(6, e.value)) << e.op;
  }
  // A kept dim of size 0: an empty output.
  KernelTester t("ReduceMean", 13);
  t.Attr("axes", std::vector<int64_t>{2}).Input<float>(s, {});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 0, 1}));
  // A scalar reduces to itself.
  KernelTester scalar("ReduceL2", 13);
  scalar.Input<float>(Shape{}, {-3.0f});
  out = scalar.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>{3.0f});
}

TEST(ReduceTest, Errors) {
  KernelTester t("ReduceMax", 13);
  t.Attr("axes", std::vector<int64_t>{2}).Input<float>({2, 3}, std::vector<float>(6));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_ReduceMax' (ReduceMax): axes value 2 is out of range for rank 2 "
            "(expected -2..1)");
  KernelTester bad_axes("ReduceSum", 13);
  bad_axes.Input<float>({2, 3}, std::vector<float>(6)).Input<int32_t>({1}, {0});
  out = bad_axes.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("input 1 has element type int32, expected int64"),
            std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace inferd::kernels::cpu

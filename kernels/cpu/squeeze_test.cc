// Flatten, Squeeze, Unsqueeze: output shapes for every axis form (attribute up to opset 12, input
// from 13, negative axes, no axes), errors naming the node, and that the output is a view (no
// byte copied through a context that honours aliases).
#include "engine/copy.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::RunKernel;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;

std::vector<float> Iota(const Shape& s) {
  std::vector<float> v(s.NumElements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return v;
}

absl::StatusOr<Shape> Flatten(const Shape& in, std::optional<int64_t> axis, int opset = 13) {
  KernelTester t("Flatten", opset);
  if (axis) t.Attr("axis", *axis);
  t.Input<float>(in, Iota(in));
  auto out = t.Run(CpuRegistry());
  if (!out.ok()) return out.status();
  EXPECT_EQ(Values<float>((*out)[0]), Iota(in));
  return (*out)[0].shape();
}

// Squeeze/Unsqueeze with axes as an attribute (opset 11) and as an input (opset 13): both must
// agree; nullopt axes: none given.
absl::StatusOr<Shape> AxesOp(const std::string& op, const Shape& in,
                             std::optional<std::vector<int64_t>> axes) {
  absl::StatusOr<Shape> results[2];
  for (int k = 0; k < 2; ++k) {
    const int opset = k == 0 ? 11 : 13;
    KernelTester t(op, opset);
    t.Input<float>(in, Iota(in));
    if (axes && opset < 13) t.Attr("axes", *axes);
    if (axes && opset >= 13) {
      t.Input<int64_t>({static_cast<int64_t>(axes->size())}, *axes);
    }
    auto out = t.Run(CpuRegistry());
    if (!out.ok()) {
      results[k] = out.status();
      continue;
    }
    EXPECT_EQ(Values<float>((*out)[0]), Iota(in));
    results[k] = (*out)[0].shape();
  }
  EXPECT_EQ(results[0].ok(), results[1].ok());
  if (results[0].ok() && results[1].ok()) {
    EXPECT_EQ(*results[0], *results[1]);
  }
  return results[1];
}

TEST(FlattenTest, Axes) {
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, std::nullopt), (Shape{2, 60}));
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, 0), (Shape{1, 120}));
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, 4), (Shape{120, 1}));
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, -1), (Shape{24, 5}));
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, -4), (Shape{1, 120}));
  EXPECT_EQ(*Flatten({2, 3, 4, 5}, 2, 1), (Shape{6, 20}));
  EXPECT_EQ(*Flatten({}, 0), (Shape{1, 1}));  // a scalar
  EXPECT_EQ(*Flatten({3, 0, 2}, 2), (Shape{0, 2}));
  auto bad = Flatten({2, 3}, -3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "node 'test_Flatten' (Flatten): axis -3 is out of range for rank 2 (expected -2..2)");
  EXPECT_FALSE(Flatten({2, 3}, 3).ok());
}

TEST(SqueezeTest, AxesAttributeAndInput) {
  EXPECT_EQ(*AxesOp("Squeeze", {1, 3, 1, 5}, std::nullopt), (Shape{3, 5}));
  EXPECT_EQ(*AxesOp("Squeeze", {1, 3, 1, 5}, std::vector<int64_t>{0}), (Shape{3, 1, 5}));
  EXPECT_EQ(*AxesOp("Squeeze", {1, 3, 1, 5}, std::vector<int64_t>{-2, 0}), (Shape{3, 5}));
  EXPECT_EQ(*AxesOp("Squeeze", {1}, std::nullopt), Shape{});
  EXPECT_EQ(*AxesOp("Squeeze", {2, 3}, std::nullopt), (Shape{2, 3}));
  auto bad = AxesOp("Squeeze", {1, 3}, std::vector<int64_t>{1});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "node 'test_Squeeze' (Squeeze): cannot squeeze dimension 1 of size 3 (input shape "
            "[1,3])");
  EXPECT_FALSE(AxesOp("Squeeze", {1, 3}, std::vector<int64_t>{2}).ok());
}

TEST(UnsqueezeTest, AxesAttributeAndInput) {
  EXPECT_EQ(*AxesOp("Unsqueeze", {3, 4}, std::vector<int64_t>{0}), (Shape{1, 3, 4}));
  EXPECT_EQ(*AxesOp("Unsqueeze", {3, 4}, std::vector<int64_t>{2}), (Shape{3, 4, 1}));
  EXPECT_EQ(*AxesOp("Unsqueeze", {3, 4}, std::vector<int64_t>{-1}), (Shape{3, 4, 1}));
  EXPECT_EQ(*AxesOp("Unsqueeze", {3, 4}, std::vector<int64_t>{3, 0}), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(*AxesOp("Unsqueeze", {3, 4}, std::vector<int64_t>{1, 2}), (Shape{3, 1, 1, 4}));
  EXPECT_EQ(*AxesOp("Unsqueeze", {}, std::vector<int64_t>{0}), (Shape{1}));
  auto dup = AxesOp("Unsqueeze", {3}, std::vector<int64_t>{0, -3});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(),
            "node 'test_Unsqueeze' (Unsqueeze): axes [0,-3] repeat dimension 0");
  EXPECT_FALSE(AxesOp("Unsqueeze", {3}, std::vector<int64_t>{2}).ok());
  auto none = AxesOp("Unsqueeze", {3}, std::nullopt);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("axes are required"), std::string::npos);
}

TEST(ViewKernelsTest, OutputsAliasTheInput) {
  const auto data = TestTensor::Of<int64_t>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const auto axes = TestTensor::Of<int64_t>({1}, {0});
  struct Case {
    const char* op;
    bool with_axes;
    Shape expected;
  };
  for (const Case& c : {Case{"Flatten", false, Shape{1, 6}}, Case{"Squeeze", true, Shape{2, 3}},
                        Case{"Unsqueeze", true, Shape{1, 1, 2, 3}}}) {
    SCOPED_TRACE(c.op);
    KernelTester spec(c.op, 13);
    spec.Input(data, /*shape_known=*/false);
    if (c.with_axes) spec.Input(axes, true, true);
    auto kernel = spec.Create(CpuRegistry());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ((*kernel)->OutputAliases(), (std::vector<std::pair<int, int>>{{0, 0}}));
    const uint64_t copied = engine::PayloadBytesCopied();
    std::vector<const TestTensor*> inputs = {&data};
    if (c.with_axes) inputs.push_back(&axes);
    auto out = RunKernel(**kernel, inputs, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, c.expected);
    EXPECT_EQ((*out)[0].values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(engine::PayloadBytesCopied(), copied);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Reshape (0 copies a dim; -1 inferred; allowzero at opset 14; errors; the output aliases the
// input) and Concat (every axis, negative axes, any element type, empty inputs, a single input,
// mismatches, threads).
#include "engine/copy.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::RunKernel;
using engine::testing::TestTensor;
using engine::testing::Values;
using testing::CpuRegistry;

absl::StatusOr<Shape> Reshape(int opset, const Shape& in, const std::vector<int64_t>& target,
                              std::optional<int64_t> allowzero = std::nullopt) {
  KernelTester t("Reshape", opset);
  if (allowzero) t.Attr("allowzero", *allowzero);
  std::vector<float> data(in.NumElements());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  t.Input<float>(in, data).Input<int64_t>({static_cast<int64_t>(target.size())}, target);
  auto out = t.Run(CpuRegistry());
  if (!out.ok()) return out.status();
  EXPECT_EQ(Values<float>((*out)[0]), data);  // same values, same order
  return (*out)[0].shape();
}

TEST(ReshapeTest, ZerosAndInferredDims) {
  for (int opset : {5, 13, 14, 17}) {
    EXPECT_EQ(*Reshape(opset, {2, 3, 4}, {4, 6}), (Shape{4, 6}));
    EXPECT_EQ(*Reshape(opset, {2, 3, 4}, {0, -1}), (Shape{2, 12}));
    EXPECT_EQ(*Reshape(opset, {2, 3, 4}, {-1}), (Shape{24}));
    EXPECT_EQ(*Reshape(opset, {2, 3, 4}, {0, 0, 2, 2}), (Shape{2, 3, 2, 2}));
    EXPECT_EQ(*Reshape(opset, {2, 3, 4}, {1, -1, 1, 4}), (Shape{1, 6, 1, 4}));
    EXPECT_EQ(*Reshape(opset, {1}, {}), Shape{});
    EXPECT_EQ(*Reshape(opset, {0, 4}, {0, 2, 2}), (Shape{0, 2, 2}));
    EXPECT_FALSE(Reshape(opset, {0, 4}, {0, 2, -1}).ok());  // -1 is ambiguous (as in numpy)
  }
}

TEST(ReshapeTest, AllowZero) {
  // opset 14, allowzero=1: 0 is a zero dimension.
  EXPECT_EQ(*Reshape(14, {0, 4}, {4, 0}, 1), (Shape{4, 0}));
  // allowzero=0 copies the input's dim: [0,4] with {4,0} -> [4,4] holds 16 != 0 elements: error.
  EXPECT_FALSE(Reshape(14, {0, 4}, {4, 0}, 0).ok());
  EXPECT_FALSE(Reshape(13, {0, 4}, {4, 0}, 1).ok());  // the attribute does not exist before 14
  EXPECT_EQ(*Reshape(13, {2, 3}, {0, 3}, 1), (Shape{2, 3}));
  // allowzero=1 with both 0 and -1 is invalid.
  auto both = Reshape(14, {0, 4}, {0, -1}, 1);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("does not allow both 0 and -1"), std::string::npos);
  EXPECT_EQ(*Reshape(14, {2, 3}, {3, 2}, 1), (Shape{3, 2}));
}

TEST(ReshapeTest, ErrorsNameTheNode) {
  struct Bad {
    Shape in;
    std::vector<int64_t> target;
    const char* message;
  };
  for (const Bad& c : std::vector<Bad>{
           {{2, 3}, {-1, -1}, "more than one -1"},
           {{2, 3}, {4, -1}, "cannot infer the -1 dimension"},
           {{2, 3}, {5}, "the requested shape has 5 elements, the input 6"},
           {{2, 3}, {-2, 3}, "invalid dimension -2"},
           {{6}, {2, 0, 3}, "copies a dimension the input does not have"},
       }) {
    auto s = Reshape(14, c.in, c.target);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("node 'test_Reshape' (Reshape): "), std::string::npos);
    EXPECT_NE(s.status().message().find(c.message), std::string::npos) << s.status();
  }
  KernelTester t("Reshape", 14);
  t.Input<float>({2}, {1, 2}).Input<int32_t>({1}, {2});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("input 1 has element type int32, expected int64"),
            std::string::npos);
}

TEST(ReshapeTest, OutputAliasesTheInput) {
  // Through a context that honours aliases, the output points at the input's bytes.
  const auto data = TestTensor::Of<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto shape = TestTensor::Of<int64_t>({1}, {-1});
  KernelTester spec("Reshape", 14);
  spec.Input(data).Input(shape, true, true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const uint64_t copied = engine::PayloadBytesCopied();
  auto out = RunKernel(**kernel, {&data, &shape}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, Shape{6});
  EXPECT_EQ((*out)[0].values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(engine::PayloadBytesCopied(), copied);
}

template <typename T>
void CheckConcat(const std::vector<Shape>& shapes, int64_t axis, int threads = 1) {
  SCOPED_TRACE("axis " + std::to_string(axis) + " first " + shapes[0].ToString());
  const int rank = shapes[0].rank();
  const int a = axis < 0 ? axis + rank : axis;
  KernelTester t("Concat", 13);
  t.Attr("axis", axis).Threads(threads);
  std::vector<std::vector<T>> inputs;
  Shape out_shape = shapes[0];
  out_shape[a] = 0;
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<T> v(shapes[k].NumElements());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(k * 1000 + i);
    t.template Input<T>(shapes[k], v);
    inputs.push_back(v);
    out_shape[a] += shapes[k][a];
  }
  // Expected: for each outer index, each input's block in turn.
  std::vector<T> expected;
  const int64_t outer = shapes[0].SizeBetween(0, a);
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < shapes.size(); ++k) {
      const int64_t block = shapes[k].SizeFrom(a);
      expected.insert(expected.end(), inputs[k].begin() + o * block,
                      inputs[k].begin() + (o + 1) * block);
    }
  }
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(ConcatTest, AxesAndTypes) {
  CheckConcat<float>({{2, 3}, {2, 1}, {2, 4}}, 1);
  CheckConcat<float>({{2, 3}, {2, 1}, {2, 4}}, -1);
  CheckConcat<float>({{1, 3}, {4, 3}}, 0);
  CheckConcat<float>({{1, 3}, {4, 3}}, -2);
  CheckConcat<int64_t>({{2}, {3}, {1}}, 0);  // shape tensors
  CheckConcat<int32_t>({{2, 3, 4}, {2, 2, 4}}, 1);
  CheckConcat<uint8_t>({{2, 3, 4}, {2, 3, 1}}, 2);
  CheckConcat<double>({{2, 3, 4}, {1, 3, 4}}, -3);
  CheckConcat<float>({{2, 0}, {2, 3}, {2, 0}}, 1);  // empty inputs
  CheckConcat<float>({{2, 5}}, 1);                  // one input: aliased
  CheckConcat<float>({{512, 70}, {512, 30}, {512, 1}}, 1, 2);
}

TEST(ConcatTest, OpsetOneDefaultsToAxisOne) {
  KernelTester t("Concat", 1);
  t.Input<float>({2, 1}, {1, 2}).Input<float>({2, 2}, {3, 4, 5, 6});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{1, 3, 4, 2, 5, 6}));
}

TEST(ReshapeTest, OpsetOneShapeAttribute) {
  KernelTester t("Reshape", 1);
  t.Attr("shape", std::vector<int64_t>{0, -1}).Input<float>({2, 3, 2}, std::vector<float>(12));
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6}));
  KernelTester missing("Reshape", 4);
  missing.Input<float>({2}, {1, 2});
  EXPECT_FALSE(missing.Run(CpuRegistry()).ok());
}

TEST(ConcatTest, Errors) {
  {
    KernelTester t("Concat", 13);
    t.Attr("axis", int64_t{0})
        .Input<float>({2, 3}, std::vector<float>(6))
        .Input<float>({2, 4}, std::vector<float>(8));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().message(),
              "node 'test_Concat' (Concat): input 1 has shape [2,4], which does not match input 0 "
              "[2,3] outside axis 0");
  }
  {
    KernelTester t("Concat", 13);
    t.Input<float>({2, 3}, std::vector<float>(6));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("'axis' is missing"), std::string::npos);
  }
  {
    KernelTester t("Concat", 13);
    t.Attr("axis", int64_t{2}).Input<float>({2, 3}, std::vector<float>(6));
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {
    KernelTester t("Concat", 13);
    t.Attr("axis", int64_t{0}).Input<float>({2}, {1, 2}).Input<int32_t>({2}, {1, 2});
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("input 1 has element type int32"), std::string::npos);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

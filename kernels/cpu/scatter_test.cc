// ScatterND (elements and slices, reductions add/mul with repeated indices, opset 11 ignoring
// the attribute), ScatterElements (axes, negative indices, indices smaller than data, reductions,
// a naive reference on random cases), Scatter-9, and errors naming the node.
#include <random>

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
using testing::Strides;
using testing::Unflatten;

absl::StatusOr<std::vector<float>> Scatter(const std::string& op, int opset, const Shape& ds,
                                           const std::vector<float>& data, const Shape& is,
                                           const std::vector<int64_t>& idx, const Shape& us,
                                           const std::vector<float>& updates,
                                           const std::string& reduction = "", int64_t axis = 0) {
  KernelTester t(op, opset);
  if (!reduction.empty()) t.Attr("reduction", reduction);
  if (op != "ScatterND") t.Attr("axis", axis);
  t.Input<float>(ds, data).Input<int64_t>(is, idx).Input<float>(us, updates);
  auto out = t.Run(CpuRegistry());
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].shape(), ds);
  return Values<float>((*out)[0]);
}

TEST(ScatterNdTest, ElementsSlicesReductions) {
  const std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(*Scatter("ScatterND", 13, {8}, data, {4, 1}, {4, 3, 1, 7}, {4}, {9, 10, 11, 12}),
            (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  EXPECT_EQ(*Scatter("ScatterND", 16, {8}, data, {4, 1}, {4, 3, 1, 4}, {4}, {1, 2, 3, 4}, "add"),
            (std::vector<float>{1, 5, 3, 6, 10, 6, 7, 8}));
  EXPECT_EQ(*Scatter("ScatterND", 16, {8}, data, {2, 1}, {-1, -1}, {2}, {2, 3}, "mul"),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 48}));
  // Opset 11 has no reduction attribute: a later write wins.
  EXPECT_EQ(*Scatter("ScatterND", 11, {8}, data, {2, 1}, {0, 0}, {2}, {5, 6}),
            (std::vector<float>{6, 2, 3, 4, 5, 6, 7, 8}));
  // Slices: rows of a [2,3] and a [2,2,2] tensor.
  EXPECT_EQ(*Scatter("ScatterND", 13, {2, 3}, {1, 2, 3, 4, 5, 6}, {1, 1}, {1}, {1, 3}, {7, 8, 9}),
            (std::vector<float>{1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(
      *Scatter("ScatterND", 16, {2, 2, 2}, data, {2, 2}, {0, 1, 1, 0}, {2, 2}, {1, 1, 2, 2}, "add"),
      (std::vector<float>{1, 2, 4, 5, 7, 8, 7, 8}));
  EXPECT_EQ(*Scatter("ScatterND", 13, {2, 2}, {1, 2, 3, 4}, {2}, {1, 0}, {}, {9}),
            (std::vector<float>{1, 2, 9, 4}));
}

TEST(ScatterNdTest, Errors) {
  auto bad = Scatter("ScatterND", 13, {4}, {1, 2, 3, 4}, {1, 1}, {4}, {1}, {9});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "node 'test_ScatterND' (ScatterND): index 4 (position 0) is out of range for "
            "dimension 0 of data [4]");
  auto shape = Scatter("ScatterND", 13, {4}, {1, 2, 3, 4}, {1, 1}, {0}, {2}, {9, 9});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("updates should be [1]"), std::string::npos);
  KernelTester t("ScatterND", 16);
  t.Attr("reduction", std::string("max2"));
  t.Input<float>({1}, {1}).Input<int64_t>({1, 1}, {0}).Input<float>({1}, {1});
  EXPECT_FALSE(t.Run(CpuRegistry()).ok());
}

TEST(ScatterElementsTest, Examples) {
  const std::vector<float> zeros(9, 0.0f);
  for (const char* op : {"ScatterElements", "Scatter"}) {
    const int opset = std::string(op) == "Scatter" ? 9 : 13;
    EXPECT_EQ(*Scatter(op, opset, {3, 3}, zeros, {2, 3}, {1, 0, 2, 0, 2, 1}, {2, 3},
                       {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f}),
              (std::vector<float>{2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f}));
    EXPECT_EQ(
        *Scatter(op, opset, {1, 5}, {1, 2, 3, 4, 5}, {1, 2}, {1, -3}, {1, 2}, {1.1f, 2.1f}, "", 1),
        (std::vector<float>{1, 1.1f, 2.1f, 4, 5}));
  }
  EXPECT_EQ(*Scatter("ScatterElements", 16, {1, 5}, {1, 2, 3, 4, 5}, {1, 2}, {1, 1}, {1, 2},
                     {1.5f, 2.0f}, "mul", -1),
            (std::vector<float>{1, 6, 3, 4, 5}));
  EXPECT_EQ(*Scatter("ScatterElements", 16, {1, 5}, {1, 2, 3, 4, 5}, {1, 2}, {1, 1}, {1, 2},
                     {1.5f, 2.0f}, "add", 1),
            (std::vector<float>{1, 5.5f, 3, 4, 5}));
}

TEST(ScatterElementsTest, RandomAgainstReference) {
  std::mt19937 gen(3);
  const Shape ds{4, 5, 6};
  std::vector<float> data(ds.NumElements());
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  for (int64_t axis : {0, 1, 2, -1}) {
    const int a = axis < 0 ? axis + 3 : axis;
    Shape is{3, 4, 5};
    is[a] = 7;  // longer than data along the axis: repeated targets
    std::vector<int64_t> idx(is.NumElements());
    std::vector<float> updates(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) {
      idx[i] = std::uniform_int_distribution<int64_t>(-ds[a], ds[a] - 1)(gen);
      updates[i] = static_cast<float>(i % 5) + 0.5f;
    }
    std::vector<float> expected = data;
    const std::vector<int64_t> st = Strides(ds);
    for (size_t i = 0; i < idx.size(); ++i) {
      std::vector<int64_t> at = Unflatten(i, is);
      at[a] = idx[i] < 0 ? idx[i] + ds[a] : idx[i];
      int64_t off = 0;
      for (int d = 0; d < 3; ++d) off += at[d] * st[d];
      expected[off] += updates[i];
    }
    SCOPED_TRACE("axis " + std::to_string(axis));
    EXPECT_EQ(*Scatter("ScatterElements", 16, ds, data, is, idx, is, updates, "add", axis),
              expected);
  }
}

TEST(ScatterElementsTest, Errors) {
  auto bad = Scatter("ScatterElements", 13, {1, 3}, {1, 2, 3}, {1, 1}, {-4}, {1, 1}, {9}, "", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "node 'test_ScatterElements' (ScatterElements): index -4 (position 0) is out of "
            "range for axis 1 of size 3");
  EXPECT_FALSE(
      Scatter("ScatterElements", 13, {1, 3}, {1, 2, 3}, {1, 2}, {0, 0}, {1, 1}, {9}, "", 1).ok());
  EXPECT_FALSE(
      Scatter("ScatterElements", 13, {1, 3}, {1, 2, 3}, {1, 1}, {0}, {1, 1}, {9}, "", 2).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Split: equal and explicit parts on every axis (negative too), split as attribute (opset 11) and
// as input (opset 13), zero-size parts, a single output (a view), element types, threads, errors.
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
using testing::Unflatten;

// Part k of `in` along `axis`, element by element.
template <typename T>
std::vector<T> RefPart(const std::vector<T>& in, const Shape& s, int axis, int64_t start,
                       int64_t len) {
  std::vector<T> out;
  for (int64_t i = 0; i < s.NumElements(); ++i) {
    const int64_t c = Unflatten(i, s)[axis];
    if (c >= start && c < start + len) out.push_back(in[i]);
  }
  return out;
}

template <typename T>
void CheckSplit(const Shape& s, int64_t axis, int outputs, std::vector<int64_t> split, int opset,
                int threads = 1) {
  SCOPED_TRACE(s.ToString() + " axis " + std::to_string(axis) + " opset " + std::to_string(opset));
  std::vector<T> in(s.NumElements());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i % 113);
  KernelTester t("Split", opset);
  t.Attr("axis", axis).Input<T>(s, in).Outputs(outputs).Threads(threads);
  if (!split.empty()) {
    if (opset >= 13) {
      t.Input<int64_t>({static_cast<int64_t>(split.size())}, split);
    } else {
      t.Attr("split", split);
    }
  }
  const int a = axis < 0 ? axis + static_cast<int>(s.rank()) : static_cast<int>(axis);
  if (split.empty()) split.assign(outputs, s[a] / outputs);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  int64_t start = 0;
  for (int k = 0; k < outputs; ++k) {
    Shape expected = s;
    expected[a] = split[k];
    EXPECT_EQ((*out)[k].shape(), expected);
    EXPECT_EQ(Values<T>((*out)[k]), RefPart(in, s, a, start, split[k])) << "output " << k;
    start += split[k];
  }
}

TEST(SplitTest, PartsAxesAndForms) {
  for (int opset : {2, 11, 13, 17}) {
    CheckSplit<float>({6}, 0, 3, {}, opset);
    CheckSplit<float>({2, 6}, 1, 2, {2, 4}, opset);
    CheckSplit<float>({4, 3, 5}, 2, 3, {1, 0, 4}, opset);  // a zero-size part
    CheckSplit<int64_t>({4, 3, 5}, 0, 2, {}, opset);
    CheckSplit<uint8_t>({4, 3, 5}, 1, 3, {}, opset);
  }
  CheckSplit<float>({2, 6}, -1, 3, {}, 13);
  CheckSplit<double>({2, 6, 2}, -2, 2, {5, 1}, 11);
  CheckSplit<int32_t>({3, 4}, 1, 1, {}, 13);  // one output: a view
  CheckSplit<float>({4000, 30}, 1, 3, {10, 5, 15}, 13, 2);
  CheckSplit<float>({64, 1000}, 0, 2, {}, 13, 2);
}

TEST(SplitTest, Errors) {
  {
    KernelTester t("Split", 13);
    t.Attr("axis", int64_t{0}).Input<float>({5}, std::vector<float>(5)).Outputs(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().message(),
              "node 'test_Split' (Split): dimension 0 of size 5 cannot be split into 2 equal "
              "parts");
  }
  {
    KernelTester t("Split", 13);
    t.Input<float>({5}, std::vector<float>(5)).Input<int64_t>({2}, {2, 2}).Outputs(2);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("split [2,2] does not cut dimension 0 of size 5"),
              std::string::npos);
  }
  {
    KernelTester t("Split", 11);
    t.Attr("axis", int64_t{2}).Input<float>({5}, std::vector<float>(5)).Outputs(1);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Pad against a naive reference (numpy's constant / edge / reflect rules): pads on every dim,
// negative pads (cropping), reflect wider than the dimension, opset 2 attributes and opset 11+
// inputs with and without constant_value, element types, threads, errors naming the node.
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

// numpy.pad's index rules for one position i relative to the input's start; -1: constant.
int64_t RefIndex(int64_t i, int64_t n, const std::string& mode) {
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;  // reflect until inside
  return i;
}

template <typename T>
void CheckPad(const Shape& in, const std::vector<int64_t>& pads, const std::string& mode,
              int opset = 13, std::optional<T> value = std::nullopt, int threads = 1) {
  SCOPED_TRACE(in.ToString() + " pads " + Shape(pads).ToString() + " " + mode + " opset " +
               std::to_string(opset));
  const size_t rank = in.rank();
  std::vector<T> x(in.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 101 + 1);
  Shape out_shape;
  for (size_t d = 0; d < rank; ++d) out_shape.push_back(in[d] + pads[d] + pads[rank + d]);
  const std::vector<int64_t> st = Strides(in);
  std::vector<T> expected(out_shape.NumElements());
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, out_shape);
    int64_t off = 0;
    bool constant = false;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t j = RefIndex(idx[d] - pads[d], in[d], mode);
      if (j < 0) constant = true;
      off += j * st[d];
    }
    expected[i] = constant ? value.value_or(T(0)) : x[off];
  }
  KernelTester t("Pad", opset);
  t.Attr("mode", mode).template Input<T>(in, x).Threads(threads);
  if (opset >= 11) {
    t.template Input<int64_t>({static_cast<int64_t>(pads.size())}, pads);
    if (value) t.template Input<T>({}, {*value});
  } else {
    t.Attr("pads", pads);
    if (value) t.Attr("value", static_cast<float>(*value));
  }
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(PadTest, Modes) {
  for (const char* mode : {"constant", "edge", "reflect"}) {
    for (int opset : {2, 11, 13}) {
      CheckPad<float>({3, 4}, {0, 2, 0, 1}, mode, opset);
      CheckPad<float>({3, 4}, {1, 0, 2, 0}, mode, opset);
      CheckPad<float>({3, 4}, {1, 2, 2, 1}, mode, opset);
      CheckPad<float>({2, 3, 4, 5}, {0, 0, 1, 2, 0, 0, 3, 1}, mode, opset);
      CheckPad<float>({2, 3, 4, 5}, {0, 1, 0, 0, 0, 2, 0, 0}, mode, opset);  // a middle dim
      CheckPad<float>({3, 4}, {0, 0, 0, 0}, mode, opset);                    // nothing
      CheckPad<float>({3, 4}, {-1, 1, 0, -2}, mode, opset);                  // cropping
      CheckPad<double>({5}, {4, 3}, mode, opset);
    }
    CheckPad<float>({3, 4}, {5, 9, 7, 6}, mode);  // wider than the dims (reflects again)
    CheckPad<float>({1, 4}, {2, 0, 3, 0}, mode);  // a dim of size 1
    CheckPad<int64_t>({3, 4}, {1, 1, 1, 1}, mode);
    CheckPad<uint8_t>({2, 3, 4}, {1, 0, 2, 0, 1, 1}, mode);
    CheckPad<float>({8, 64, 56, 56}, {0, 0, 1, 1, 0, 0, 1, 1}, mode, 13, std::nullopt, 2);
  }
  CheckPad<float>({3, 4}, {1, 2, 2, 1}, "constant", 11, 7.5f);
  CheckPad<float>({3, 4}, {1, 2, 2, 1}, "constant", 2, -1.5f);
  CheckPad<int32_t>({3, 4}, {1, 2, 2, 1}, "constant", 13, -3);
  CheckPad<float>({0, 4}, {1, 1, 1, 1}, "constant", 13, 2.0f);  // an empty input
}

TEST(PadTest, Errors) {
  auto run = [](const Shape& in, const std::vector<int64_t>& pads, const std::string& mode) {
    KernelTester t("Pad", 13);
    t.Attr("mode", mode)
        .Input<float>(in, std::vector<float>(in.NumElements()))
        .Input<int64_t>({static_cast<int64_t>(pads.size())}, pads);
    return t.Run(CpuRegistry()).status();
  };
  EXPECT_EQ(run({3, 4}, {1, 1}, "constant").message(),
            "node 'test_Pad' (Pad): pads [1,1] must have 4 entries for input [3,4]");
  EXPECT_NE(run({3, 4}, {-2, 0, -2, 0}, "constant").message().find("crop dimension 0"),
            std::string::npos);
  EXPECT_NE(run({0, 4}, {1, 0, 0, 0}, "edge").message().find("empty dimension 0"),
            std::string::npos);
  EXPECT_EQ(run({3}, {1, 1}, "wrap").message(), "node 'test_Pad' (Pad): unknown mode 'wrap'");
  KernelTester v("Pad", 13);
  v.Input<float>({2}, {1, 2}).Input<int64_t>({2}, {1, 1}).Input<int32_t>({}, {1});
  EXPECT_FALSE(v.Run(CpuRegistry()).ok());  // constant_value of another type
}

}  // namespace
}  // namespace inferd::kernels::cpu

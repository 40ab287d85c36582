// Conv against a naive N-d reference: 1-D, 2-D and 3-D, groups (incl. depthwise), strides,
// dilations, explicit and asymmetric pads, every auto_pad, with and without bias, prepacked
// constant weights, shapes unknown at load, errors, workspace declared == estimated, threads.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
using testing::ExpectNear;
using testing::RandomFloats;
using testing::RefWindow;

struct ConvCase {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;  // empty: ONNX defaults
  std::string auto_pad;                           // empty: not set
  bool bias = true;
  bool constant_w = false;
  int threads = 1;
};

// The padding the reference should use (computed independently from the ONNX formulas).
RefWindow ReferenceWindow(const ConvCase& c) {
  const size_t sp = c.x.rank() - 2;
  RefWindow w;
  w.strides = c.strides.empty() ? std::vector<int64_t>(sp, 1) : c.strides;
  w.dilations = c.dilations.empty() ? std::vector<int64_t>(sp, 1) : c.dilations;
  w.pad_begin.assign(sp, 0);
  w.pad_end.assign(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = c.x[2 + i], k = c.w[2 + i], ext = (k - 1) * w.dilations[i] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + ext - in);
      w.pad_begin[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else if (c.auto_pad.empty() && !c.pads.empty()) {
      w.pad_begin[i] = c.pads[i];
      w.pad_end[i] = c.pads[sp + i];
    }
  }
  return w;
}

KernelTester& AddAttributes(const ConvCase& c, KernelTester& t) {
  if (c.group != 1) t.Attr("group", c.group);
  if (!c.strides.empty()) t.Attr("strides", c.strides);
  if (!c.dilations.empty()) t.Attr("dilations", c.dilations);
  if (!c.pads.empty()) t.Attr("pads", c.pads);
  if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad);
  return t;
}

void CheckConv(const ConvCase& c) {
  SCOPED_TRACE(absl::StrCat("x ", c.x.ToString(), " w ", c.w.ToString(), " group ", c.group,
                            " auto_pad '", c.auto_pad, "' bias ", c.bias, " constW ", c.constant_w,
                            " threads ", c.threads));
  const std::vector<float> x = RandomFloats(c.x.NumElements(), 21);
  const std::vector<float> w = RandomFloats(c.w.NumElements(), 22);
  const std::vector<float> b = c.bias ? RandomFloats(c.w[0], 23) : std::vector<float>();
  Shape expected_shape;
  const std::vector<float> expected =
      testing::RefConv(x, c.x, w, c.w, b, c.group, ReferenceWindow(c), &expected_shape);

  KernelTester t("Conv", 11);
  AddAttributes(c, t).Threads(c.threads);
  t.Input<float>(c.x, x).Input<float>(c.w, w, c.constant_w);
  if (c.bias) t.Input<float>({c.w[0]}, b, c.constant_w);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  ExpectNear(Values<float>((*out)[0]), expected, 1e-4f * (1 + c.w.SizeFrom(1)));

  KernelTester spec("Conv", 11);
  if (c.group != 1) spec.Attr("group", c.group);
  if (!c.strides.empty()) spec.Attr("strides", c.strides);
  if (!c.dilations.empty()) spec.Attr("dilations", c.dilations);
  if (!c.pads.empty()) spec.Attr("pads", c.pads);
  if (!c.auto_pad.empty()) spec.Attr("auto_pad", c.auto_pad);
  spec.Threads(c.threads)
      .Input(TestTensor::Of<float>(c.x, x))
      .Input(TestTensor::Of<float>(c.w, w), true, c.constant_w);
  if (c.bias) spec.Input(TestTensor::Of<float>({c.w[0]}, b), true, c.constant_w);
  absl::StatusOr<size_t> estimate = spec.Estimate(CpuRegistry());
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  EXPECT_EQ(*estimate, t.workspace_bytes_declared());
}

TEST(ConvTest, TwoD) {
  for (bool constant_w : {false, true}) {
    for (bool bias : {false, true}) {
      CheckConv({.x = {1, 3, 7, 7}, .w = {4, 3, 3, 3}, .bias = bias, .constant_w = constant_w});
    }
    CheckConv({.x = {2, 4, 9, 8},
               .w = {6, 4, 3, 2},
               .strides = {2, 1},
               .pads = {1, 0, 2, 1},
               .constant_w = constant_w});
    CheckConv({.x = {1, 2, 10, 10},
               .w = {3, 2, 3, 3},
               .dilations = {2, 3},
               .pads = {2, 3, 2, 3},
               .constant_w = constant_w});
    CheckConv({.x = {1, 6, 8, 8},
               .w = {9, 2, 3, 3},
               .group = 3,
               .pads = {1, 1, 1, 1},
               .constant_w = constant_w});
    CheckConv({.x = {1, 8, 9, 9},
               .w = {8, 1, 3, 3},
               .group = 8,
               .strides = {2, 2},
               .pads = {1, 1, 1, 1},
               .constant_w = constant_w});  // depthwise
  }
}

TEST(ConvTest, AutoPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"}) {
    for (int64_t stride : {1, 2, 3}) {
      CheckConv(
          {.x = {1, 2, 8, 7}, .w = {3, 2, 4, 3}, .strides = {stride, stride}, .auto_pad = mode});
    }
  }
}

TEST(ConvTest, OneAndThreeD) {
  CheckConv({.x = {2, 3, 17}, .w = {5, 3, 4}, .strides = {2}, .pads = {1, 2}});
  CheckConv(
      {.x = {1, 4, 12}, .w = {4, 2, 3}, .group = 2, .dilations = {2}, .auto_pad = "SAME_UPPER"});
  CheckConv({.x = {1, 2, 5, 6, 7},
             .w = {3, 2, 3, 3, 3},
             .strides = {1, 2, 1},
             .pads = {1, 1, 1, 1, 0, 1}});
}

// Trailing spatial axes of size 1 (a 1-D convolution written as [N, C, L, 1] with a [k, 1]
// kernel, or 3-D with two such axes) run as the lower-rank convolution: same results, grouped,
// strided, split over threads; a unit axis with padding, or a leading one, keeps its rank.
TEST(ConvTest, TrailingUnitAxes) {
  for (int threads : {1, 2}) {
    for (bool constant_w : {false, true}) {
      CheckConv({.x = {2, 8, 30, 1},
                 .w = {16, 8, 5, 1},
                 .strides = {2, 3},
                 .pads = {2, 0, 1, 0},
                 .constant_w = constant_w,
                 .threads = threads});
      CheckConv({.x = {1, 6, 11, 1, 1},
                 .w = {9, 2, 3, 1, 1},
                 .group = 3,
                 .dilations = {2, 1, 1},
                 .constant_w = constant_w,
                 .threads = threads});
    }
  }
  CheckConv({.x = {1, 4, 9, 1}, .w = {4, 4, 3, 1}, .pads = {1, 1, 1, 1}});  // padded: stays 2-D
  CheckConv({.x = {1, 4, 1, 9}, .w = {4, 4, 1, 3}});
}

TEST(ConvTest, LargerAndThreaded) {
  for (int threads : {1, 2}) {
    CheckConv({.x = {1, 32, 28, 28},
               .w = {48, 32, 3, 3},
               .pads = {1, 1, 1, 1},
               .constant_w = true,
               .threads = threads});
    CheckConv({.x = {2, 16, 20, 20}, .w = {32, 16, 1, 1}, .constant_w = false, .threads = threads});
  }
}

TEST(ConvTest, TwoThreadsMatchOne) {
  const Shape xs{1, 16, 24, 24}, ws{32, 16, 3, 3};
  const std::vector<float> x = RandomFloats(xs.NumElements(), 31),
                           w = RandomFloats(ws.NumElements(), 32);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    KernelTester t("Conv", 11);
    t.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Threads(threads);
    t.Input<float>(xs, x).Input<float>(ws, w, true);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(Values<float>((*out)[0]));
  }
  ExpectNear(results[1], results[0], 1e-5f);
}

TEST(ConvTest, ShapesUnknownAtLoad) {
  const Shape ws{4, 3, 3, 3};
  const auto w = TestTensor::Of<float>(ws, RandomFloats(ws.NumElements(), 41));
  const auto b = TestTensor::Of<float>({4}, RandomFloats(4, 42));
  KernelTester spec("Conv", 11);
  spec.Attr("auto_pad", std::string("SAME_UPPER"))
      .Input(TestTensor::Of<float>({1, 3, 4, 4}, std::vector<float>(48)), /*shape_known=*/false)
      .Input(w, true, true)
      .Input(b, true, true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (const Shape& xs : {Shape{1, 3, 8, 8}, Shape{2, 3, 5, 9}, Shape{1, 3, 8, 8}}) {
    const auto x = TestTensor::Of<float>(xs, RandomFloats(xs.NumElements(), 43));
    Shape expected_shape;
    ConvCase c{.x = xs, .w = ws, .auto_pad = "SAME_UPPER"};
    const auto expected =
        testing::RefConv(x.values<float>(), xs, w.values<float>(), ws, b.values<float>(), 1,
                         ReferenceWindow(c), &expected_shape);
    auto out = RunKernel(**kernel, {&x, &w, &b}, 1, 2);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape, expected_shape);
    ExpectNear((*out)[0].values<float>(), expected, 1e-4f);
  }
}

// A model served at several batch sizes: the plan of each batch size reads one packed copy of the
// constant weights, held and counted once.
TEST(ConvTest, ShapesUnknownAtLoadShareOnePackedCopy) {
  const Shape ws{32, 16, 3, 3};
  const auto w = TestTensor::Of<float>(ws, RandomFloats(ws.NumElements(), 44));
  const auto b = TestTensor::Of<float>({32}, RandomFloats(32, 45));
  KernelTester spec("Conv", 11);
  spec.Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Input(TestTensor::Of<float>({1, 16, 14, 14}, std::vector<float>(16 * 14 * 14)),
             /*shape_known=*/false)
      .Input(w, true, true)
      .Input(b, true, true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  size_t after_first = 0;
  for (const int64_t n : {1, 3, 2, 1}) {
    const Shape xs{n, 16, 14, 14};
    const auto x = TestTensor::Of<float>(xs, RandomFloats(xs.NumElements(), 46 + n));
    Shape expected_shape;
    ConvCase c{.x = xs, .w = ws, .pads = {1, 1, 1, 1}};
    const auto expected =
        testing::RefConv(x.values<float>(), xs, w.values<float>(), ws, b.values<float>(), 1,
                         ReferenceWindow(c), &expected_shape);
    auto out = RunKernel(**kernel, {&x, &w, &b}, 1, 1);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear((*out)[0].values<float>(), expected, 1e-3f);
    if (after_first == 0) after_first = (*kernel)->PersistentBytes();
  }
  EXPECT_GE(after_first, ws.NumElements() * sizeof(float));  // one packed copy
  EXPECT_EQ((*kernel)->PersistentBytes(), after_first);      // shared by every batch size
}

TEST(ConvTest, ZeroBatch) {
  KernelTester t("Conv", 11);
  t.Input<float>({0, 2, 4, 4}, {}).Input<float>({3, 2, 3, 3}, std::vector<float>(54, 1.0f));
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{0, 3, 2, 2}));
}

TEST(ConvTest, BadInputsNameTheNode) {
  struct Bad {
    Shape x, w;
    std::vector<std::pair<std::string, std::vector<int64_t>>> attrs;
    std::string auto_pad;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {{1, 3, 5, 5}, {8, 3, 3}, {}, "", "but a rank-4 weight is expected"},
      {{1, 4, 5, 5}, {8, 3, 3, 3}, {}, "", "do not match for group 1"},
      {{1, 4, 5, 5}, {8, 2, 3, 3}, {{"group", {3}}}, "", "do not match for group"},
      {{1, 3, 2, 2}, {8, 3, 3, 3}, {}, "", "larger than the padded input"},
      {{1, 3, 5, 5}, {8, 3, 3, 3}, {{"strides", {1, 1, 1}}}, "", "'strides' has 3 values"},
      {{1, 3, 5, 5}, {8, 3, 3, 3}, {{"pads", {-1, 0, 0, 0}}}, "", "must not be negative"},
      {{1, 3, 5, 5}, {8, 3, 3, 3}, {{"kernel_shape", {2, 2}}}, "", "kernel_shape does not match"},
      {{1, 3, 5, 5}, {8, 3, 3, 3}, {}, "SAME", "auto_pad 'SAME'"},
      {{3, 5}, {8, 3, 3}, {}, "", "rank-3, -4 or -5"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.message);
    KernelTester t("Conv", 11);
    for (const auto& [name, v] : c.attrs) {
      if (name == "group") {
        t.Attr(name, v[0]);
      } else {
        t.Attr(name, v);
      }
    }
    if (!c.auto_pad.empty()) t.Attr("auto_pad", c.auto_pad);
    t.Input<float>(c.x, std::vector<float>(c.x.NumElements(), 1.0f))
        .Input<float>(c.w, std::vector<float>(c.w.NumElements(), 1.0f));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_NE(out.status().message().find("node 'test_Conv' (Conv)"), std::string::npos)
        << out.status();
    EXPECT_NE(out.status().message().find(c.message), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

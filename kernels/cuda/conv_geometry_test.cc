// How Conv and ConvTranspose nodes map onto cuDNN's symmetric-padding convolutions: staging of
// asymmetric pads, ConvTranspose's output window, 1-D as 2-D, and what cannot be expressed.
// Pure arithmetic: runs without a GPU.
#include "kernels/cuda/conv_geometry.h"

#include <vector>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using V = std::vector<int64_t>;

absl::StatusOr<ConvGeometry> Geometry(const KernelTester& t, bool transposed, const Shape& x,
                                      const Shape& w, const Shape* b = nullptr) {
  const engine::KernelInfo info = t.Info();
  absl::StatusOr<ConvAttributes> attrs = ConvAttributes::Read(info, transposed);
  if (!attrs.ok()) return attrs.status();
  return ComputeConvGeometry(*attrs, x, w, b, cpu::NodeLabel(info));
}

TEST(ConvGeometryTest, SymmetricPadsNeedNoStaging) {
  KernelTester t("Conv", 11);
  t.Attr("pads", V{1, 1, 1, 1});
  const Shape bias{4};
  absl::StatusOr<ConvGeometry> g = Geometry(t, false, {1, 3, 8, 8}, {4, 3, 3, 3}, &bias);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->out, (Shape{1, 4, 8, 8}));
  EXPECT_FALSE(g->staged);
  EXPECT_FALSE(g->degenerate);
  EXPECT_EQ(g->x, (V{1, 3, 8, 8}));
  EXPECT_EQ(g->w, (V{4, 3, 3, 3}));
  EXPECT_EQ(g->y, (V{1, 4, 8, 8}));
  EXPECT_EQ(g->pad, (V{1, 1}));
  EXPECT_EQ(g->strides, (V{1, 1}));
  EXPECT_EQ(g->dilations, (V{1, 1}));
}

TEST(ConvGeometryTest, SameUpperAndLowerStageTheExtraPad) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    SCOPED_TRACE(mode);
    KernelTester t("Conv", 11);
    t.Attr("auto_pad", std::string(mode)).Attr("strides", V{2, 2});
    // 8 inputs, stride 2: 4 outputs reading 9 positions, one of them padding.
    absl::StatusOr<ConvGeometry> g = Geometry(t, false, {1, 1, 8, 8}, {1, 1, 3, 3});
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->out, (Shape{1, 1, 4, 4}));
    EXPECT_TRUE(g->staged);
    EXPECT_EQ(g->x, (V{1, 1, 9, 9}));
    EXPECT_EQ(g->node_tensor, (V{1, 1, 8, 8}));
    EXPECT_EQ(g->pad, (V{0, 0}));
    const int64_t offset = std::string(mode) == "SAME_LOWER" ? 1 : 0;
    EXPECT_EQ(g->offset, (V{offset, offset}));
  }
}

TEST(ConvGeometryTest, ExplicitAsymmetricPads) {
  KernelTester t("Conv", 11);
  t.Attr("pads", V{2, 0, 1, 3});  // h: 2 before, 1 after; w: 0 before, 3 after
  absl::StatusOr<ConvGeometry> g = Geometry(t, false, {2, 3, 5, 6}, {4, 3, 3, 3});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->out, (Shape{2, 4, 6, 7}));
  EXPECT_TRUE(g->staged);
  EXPECT_EQ(g->pad, (V{1, 0}));
  EXPECT_EQ(g->offset, (V{1, 0}));
  EXPECT_EQ(g->x, (V{2, 3, 6, 9}));
}

TEST(ConvGeometryTest, OneDimensionalIsTwoDimensionalOfHeightOne) {
  KernelTester t("Conv", 11);
  t.Attr("pads", V{1, 1}).Attr("strides", V{2}).Attr("dilations", V{2}).Attr("group", int64_t{2});
  absl::StatusOr<ConvGeometry> g = Geometry(t, false, {2, 4, 10}, {6, 2, 3});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->out, (Shape{2, 6, 4}));  // (10 + 2 - 5) / 2 + 1
  EXPECT_EQ(g->output, (V{2, 6, 1, 4}));
  EXPECT_EQ(g->x, (V{2, 4, 1, 10}));
  EXPECT_EQ(g->w, (V{6, 2, 1, 3}));
  EXPECT_EQ(g->pad, (V{0, 1}));
  EXPECT_EQ(g->strides, (V{1, 2}));
  EXPECT_EQ(g->dilations, (V{1, 2}));
  EXPECT_EQ(g->group, 2);
}

TEST(ConvGeometryTest, NoInputChannelsIsDegenerate) {
  KernelTester t("Conv", 11);
  absl::StatusOr<ConvGeometry> g = Geometry(t, false, {1, 0, 5, 5}, {4, 0, 3, 3});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->degenerate);
  EXPECT_EQ(g->out, (Shape{1, 4, 3, 3}));
  EXPECT_EQ(g->output, (V{1, 4, 3, 3}));
}

TEST(ConvGeometryTest, ChecksAreTheCpuKernels) {
  KernelTester t("Conv", 11);
  t.Attr("group", int64_t{2});
  absl::StatusOr<ConvGeometry> g = Geometry(t, false, {1, 3, 5, 5}, {4, 3, 3, 3});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("do not match for group 2"), absl::string_view::npos);
}

struct TransposedCase {
  const char* label;
  V x, w, strides, pads, output_padding, output_shape;
  V out, full, pad, offset;
};

TEST(ConvGeometryTest, ConvTransposeOutputWindow) {
  const std::vector<TransposedCase> cases = {
      // natural size 2 * (3 - 1) + 3 = 7
      {"natural", {1, 2, 3, 3}, {2, 3, 3, 3}, {2, 2}, {}, {}, {}, {7, 7}, {7, 7}, {0, 0}, {0, 0}},
      {"pads 1",
       {1, 2, 3, 3},
       {2, 3, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       {},
       {},
       {5, 5},
       {5, 5},
       {1, 1},
       {0, 0}},
      {"output_padding",
       {1, 2, 3, 3},
       {2, 3, 3, 3},
       {2, 2},
       {1, 1, 1, 1},
       {1, 1},
       {},
       {6, 6},
       {6, 6},
       {1, 1},
       {0, 0}},
      // the ONNX backend test convtranspose_output_shape: past the natural size by one
      {"output_shape",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       {3, 2},
       {},
       {},
       {10, 8},
       {10, 8},
       {10, 8},
       {0, 0},
       {0, 0}},
      // pads 2 before, 0 after: cuDNN pads 0 and the output is its window at 2
      {"asymmetric",
       {1, 1, 4, 4},
       {1, 1, 3, 3},
       {1, 1},
       {2, 2, 0, 0},
       {},
       {},
       {4, 4},
       {6, 6},
       {0, 0},
       {2, 2}},
  };
  for (const TransposedCase& c : cases) {
    SCOPED_TRACE(c.label);
    KernelTester t("ConvTranspose", 11);
    t.Attr("strides", c.strides);
    if (!c.pads.empty()) t.Attr("pads", c.pads);
    if (!c.output_padding.empty()) t.Attr("output_padding", c.output_padding);
    if (!c.output_shape.empty()) t.Attr("output_shape", c.output_shape);
    const Shape x(absl::MakeConstSpan(c.x)), w(absl::MakeConstSpan(c.w));
    absl::StatusOr<ConvGeometry> g = Geometry(t, true, x, w);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->out, (Shape{c.x[0], c.w[1], c.out[0], c.out[1]}));
    EXPECT_EQ(g->y, (V{c.x[0], c.w[1], c.full[0], c.full[1]}));
    EXPECT_EQ(g->x, c.x);
    EXPECT_EQ(g->pad, c.pad);
    EXPECT_EQ(g->offset, c.offset);
    EXPECT_EQ(g->staged, (c.full != c.out || c.offset != V{0, 0}));
    for (size_t i = 0; i < 2; ++i) {  // cuDNN's forward convolution of y gives back x
      const int64_t extent = (c.w[2 + i] - 1) + 1;
      EXPECT_EQ((c.full[i] + 2 * c.pad[i] - extent) / c.strides[i] + 1, c.x[2 + i]);
    }
  }
}

TEST(ConvGeometryTest, ConvTransposeOutputShapeFarPastTheInputsIsUnimplemented) {
  KernelTester t("ConvTranspose", 11);
  t.Attr("output_shape", V{8, 8});  // natural size 5; cuDNN reaches at most 5 + stride - 1
  absl::StatusOr<ConvGeometry> g = Geometry(t, true, {1, 1, 3, 3}, {1, 1, 3, 3});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented) << g.status();
}

TEST(ConvGeometryTest, ConvTransposeOfAnEmptyInputIsDegenerate) {
  KernelTester t("ConvTranspose", 11);
  absl::StatusOr<ConvGeometry> g = Geometry(t, true, {1, 0, 3, 3}, {0, 2, 3, 3});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->degenerate);
  EXPECT_EQ(g->out, (Shape{1, 2, 5, 5}));
}

}  // namespace
}  // namespace inferd::kernels::cuda

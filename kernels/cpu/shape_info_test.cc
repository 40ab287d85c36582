// Shape (start/end from opset 15, clamping, before 15 ignored), Size, ConstantOfShape (value
// types, default, scalar and empty outputs), Range (float and integer types, negative deltas,
// empty ranges), NonZero (row-major coordinates, -0.0 is zero, bool, scalar), errors.
#include <cmath>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

std::vector<int64_t> ShapeOp(int opset, const Shape& in, std::optional<int64_t> start,
                             std::optional<int64_t> end) {
  KernelTester t("Shape", opset);
  if (start) t.Attr("start", *start);
  if (end) t.Attr("end", *end);
  t.Input<uint8_t>(in, std::vector<uint8_t>(in.NumElements()));
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), DataType::kInt64);
  EXPECT_EQ((*out)[0].shape().rank(), 1u);
  return Values<int64_t>((*out)[0]);
}

TEST(ShapeTest, StartEnd) {
  using V = std::vector<int64_t>;
  const Shape s{2, 3, 4, 5};
  EXPECT_EQ(ShapeOp(13, s, std::nullopt, std::nullopt), (V{2, 3, 4, 5}));
  EXPECT_EQ(ShapeOp(15, s, 1, std::nullopt), (V{3, 4, 5}));
  EXPECT_EQ(ShapeOp(15, s, std::nullopt, -1), (V{2, 3, 4}));
  EXPECT_EQ(ShapeOp(15, s, -3, -1), (V{3, 4}));
  EXPECT_EQ(ShapeOp(15, s, -10, 10), (V{2, 3, 4, 5}));  // clamped
  EXPECT_EQ(ShapeOp(15, s, 3, 1), V{});                 // empty
  EXPECT_EQ(ShapeOp(13, s, 1, 2), (V{2, 3, 4, 5}));     // no start/end before opset 15
  EXPECT_EQ(ShapeOp(15, Shape{}, std::nullopt, std::nullopt), V{});
}

TEST(SizeTest, Counts) {
  for (const Shape& s : {Shape{2, 3, 4}, Shape{}, Shape{5, 0}}) {
    KernelTester t("Size", 13);
    t.Input<float>(s, std::vector<float>(s.NumElements()));
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), Shape{});
    EXPECT_EQ(Values<int64_t>((*out)[0]), std::vector<int64_t>{s.NumElements()});
  }
}

onnx::AttributeProto ValueAttr(onnx::TensorProto::DataType type, bool raw) {
  onnx::AttributeProto a;
  a.set_name("value");
  a.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = a.mutable_t();
  t->set_data_type(type);
  t->add_dims(1);
  if (type == onnx::TensorProto::FLOAT) {
    const float v = 2.5f;
    if (raw) {
      t->set_raw_data(&v, sizeof(v));
    } else {
      t->add_float_data(v);
    }
  } else if (type == onnx::TensorProto::INT64) {
    const int64_t v = -7;
    if (raw) {
      t->set_raw_data(&v, sizeof(v));
    } else {
      t->add_int64_data(v);
    }
  } else {  // INT32
    t->add_int32_data(9);
  }
  return a;
}

TEST(ConstantOfShapeTest, ValuesAndShapes) {
  {
    KernelTester t("ConstantOfShape", 9);
    t.Input<int64_t>({2}, {2, 3}).OutputType(0, DataType::kFloat32);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>(6, 0.0f));
  }
  for (bool raw : {false, true}) {
    KernelTester t("ConstantOfShape", 9);
    t.Attr(ValueAttr(onnx::TensorProto::FLOAT, raw))
        .Input<int64_t>({3}, {2, 1, 2})
        .OutputType(0, DataType::kFloat32);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>(4, 2.5f));
    KernelTester i("ConstantOfShape", 9);
    i.Attr(ValueAttr(onnx::TensorProto::INT64, raw))
        .Input<int64_t>({1}, {3})
        .OutputType(0, DataType::kInt64);
    auto io = i.Run(CpuRegistry());
    ASSERT_TRUE(io.ok()) << io.status();
    EXPECT_EQ(Values<int64_t>((*io)[0]), std::vector<int64_t>(3, -7));
  }
  KernelTester s("ConstantOfShape", 9);
  s.Attr(ValueAttr(onnx::TensorProto::INT32, false))
      .Input<int64_t>({0}, {})
      .OutputType(0, DataType::kInt32);
  auto scalar = s.Run(CpuRegistry());
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ((*scalar)[0].shape(), Shape{});
  EXPECT_EQ(Values<int32_t>((*scalar)[0]), std::vector<int32_t>{9});
  KernelTester e("ConstantOfShape", 9);
  e.Input<int64_t>({2}, {0, 4}).OutputType(0, DataType::kFloat32);
  auto empty = e.Run(CpuRegistry());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), (Shape{0, 4}));
  KernelTester n("ConstantOfShape", 9);
  n.Input<int64_t>({1}, {-1}).OutputType(0, DataType::kFloat32);
  EXPECT_EQ(n.Run(CpuRegistry()).status().message(),
            "node 'test_ConstantOfShape' (ConstantOfShape): invalid dimension -1");
}

template <typename T>
std::vector<T> Range(T start, T limit, T delta) {
  KernelTester t("Range", 11);
  t.Input<T>({}, {start}).template Input<T>({}, {limit}).template Input<T>({}, {delta});
  auto out = t.Run(CpuRegistry());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].shape().rank(), 1u);
  return Values<T>((*out)[0]);
}

TEST(RangeTest, TypesAndDirections) {
  EXPECT_EQ(Range<float>(1, 5, 2), (std::vector<float>{1, 3}));
  EXPECT_EQ(Range<float>(1, 5.5f, 1.5f), (std::vector<float>{1, 2.5f, 4}));
  EXPECT_EQ(Range<double>(10, 4, -3), (std::vector<double>{10, 7}));
  EXPECT_EQ(Range<int32_t>(10, 6, -3), (std::vector<int32_t>{10, 7}));
  EXPECT_EQ(Range<int64_t>(0, 5, 1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Range<int64_t>(0, -5, 1), std::vector<int64_t>{});
  EXPECT_EQ(Range<int16_t>(-3, 4, 3), (std::vector<int16_t>{-3, 0, 3}));
  KernelTester zero("Range", 11);
  zero.Input<int64_t>({}, {0}).Input<int64_t>({}, {5}).Input<int64_t>({}, {0});
  EXPECT_EQ(zero.Run(CpuRegistry()).status().message(), "node 'test_Range' (Range): delta is 0");
  KernelTester mixed("Range", 11);
  mixed.Input<int64_t>({}, {0}).Input<int32_t>({}, {5}).Input<int64_t>({}, {1});
  EXPECT_FALSE(mixed.Run(CpuRegistry()).ok());
}

TEST(NonZeroTest, Coordinates) {
  {
    KernelTester t("NonZero", 13);
    t.Input<float>({2, 3}, {0, 1.5f, 0, -0.0f, 2, NAN});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 1, 1, 1, 1, 2}));
  }
  {
    const std::vector<uint8_t> b = {1, 0, 0, 1};
    KernelTester t("NonZero", 13);
    t.RawInput(DataType::kBool, {2, 2}, b.data(), b.size());
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
    EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 1, 0, 1}));
  }
  {
    KernelTester t("NonZero", 13);
    t.Input<int32_t>({}, {5});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{1, 1}));
    EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0}));
  }
  {
    KernelTester t("NonZero", 13);
    t.Input<int64_t>({3}, {0, 0, 0});
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].shape(), (Shape{1, 0}));
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

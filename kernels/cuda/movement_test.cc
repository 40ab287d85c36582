// The data-movement and view kernels on CUDA against the CPU kernels, byte for byte: Transpose
// (the tiled swap, batched and NCHW -> NHWC, the general strided path, order-preserving perms),
// Concat, Split (input, attribute and num_outputs forms), Slice (negative steps, clamping),
// Expand, Gather (int32 / int64 and negative indices), Cast (each pair of float32, float16,
// int32, int64, uint8, bool), Where (broadcasting) and Reshape, Flatten, Squeeze, Unsqueeze,
// Identity; host inputs stay on the host (the harness binds KernelDef::host_inputs there).
// Skips without a GPU.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/cuda_status.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"

namespace inferd::kernels::cuda {
namespace {

using engine::DataType;
using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;

TestTensor Floats(const Shape& shape, uint32_t seed) {
  return TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), -10, 10, seed));
}

TestTensor Int64s(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v(shape.NumElements());
  for (int64_t& x : v) x = static_cast<int64_t>(rng()) << 20 | rng();
  return TestTensor::Of<int64_t>(shape, v);
}

TestTensor Indices(const std::vector<int64_t>& v) {
  return TestTensor::Of<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// Runs `t` on both devices and expects every output the same, byte for byte.
void ExpectSame(KernelTester& t, const std::vector<const TestTensor*>& inputs, int outputs = 1) {
  absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs, outputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->cuda.size(), out->cpu.size());
  for (size_t i = 0; i < out->cpu.size(); ++i) {
    EXPECT_EQ(out->cuda[i].type, out->cpu[i].type) << "output " << i;
    EXPECT_EQ(out->cuda[i].shape, out->cpu[i].shape) << "output " << i;
    EXPECT_EQ(out->cuda[i].bytes, out->cpu[i].bytes) << "output " << i;
  }
}

class CudaMovementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    seed_ = std::random_device{}();
  }
  uint32_t next() { return seed_ + count_++; }
  uint32_t seed_ = 0, count_ = 0;
};

TEST_F(CudaMovementTest, Transpose) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;  // empty: the default (reversed)
  };
  for (const Case& c : std::vector<Case>{{{2, 3}, {}},
                                         {{67, 45}, {1, 0}},
                                         {{4, 33, 65}, {0, 2, 1}},
                                         {{2, 3, 4, 5}, {0, 2, 3, 1}},  // NCHW -> NHWC
                                         {{2, 3, 4, 5}, {0, 3, 1, 2}},  // NHWC -> NCHW
                                         {{2, 3, 4, 5}, {3, 1, 0, 2}},
                                         {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}},
                                         {{1, 5, 1}, {2, 1, 0}},
                                         {{5}, {0}},
                                         {{0, 3}, {1, 0}}}) {
    SCOPED_TRACE(absl::StrCat(c.shape.ToString(), " perm [", absl::StrJoin(c.perm, ","), "]"));
    for (const TestTensor& x : {Floats(c.shape, next()), Int64s(c.shape, next())}) {
      KernelTester t("Transpose", 13);
      t.Input(x);
      if (!c.perm.empty()) t.Attr("perm", c.perm);
      ExpectSame(t, {&x});
    }
  }
}

TEST_F(CudaMovementTest, ConcatAndSplit) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  const TestTensor a = Floats({2, 3, 4}, next());
  const TestTensor b = Floats({2, 5, 4}, next());
  const TestTensor e = Floats({2, 0, 4}, next());
  KernelTester concat("Concat", 13);
  concat.Input(a).Input(b).Input(e).Attr("axis", int64_t{-2});
  ExpectSame(concat, {&a, &b, &e});
  const TestTensor c = Floats({2, 3, 7}, next());
  KernelTester last("Concat", 13);
  last.Input(a).Input(c).Attr("axis", int64_t{2});
  ExpectSame(last, {&a, &c});

  const TestTensor x = Floats({4, 10, 3}, next());
  const TestTensor split = Indices({2, 0, 8});
  KernelTester with_input("Split", 13);
  with_input.Input(x).Input(split).Attr("axis", int64_t{1}).Outputs(3);
  ExpectSame(with_input, {&x, &split}, 3);
  KernelTester equal("Split", 13);
  equal.Input(x).Attr("axis", int64_t{-1}).Outputs(3);
  ExpectSame(equal, {&x}, 3);
  KernelTester attribute("Split", 11);
  attribute.Input(x).Attr("axis", int64_t{0}).Attr("split", std::vector<int64_t>{1, 3}).Outputs(2);
  ExpectSame(attribute, {&x}, 2);
  KernelTester num_outputs("Split", 18);
  num_outputs.Input(x).Attr("axis", int64_t{1}).Attr("num_outputs", int64_t{3}).Outputs(3);
  ExpectSame(num_outputs, {&x}, 3);
}

TEST_F(CudaMovementTest, Slice) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const TestTensor x = Floats({5, 6, 7}, next());
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  for (const Case& c : std::vector<Case>{{{1}, {3}, {}, {}},
                                         {{0, 1}, {kMax, -1}, {2, 0}, {}},
                                         {{-1}, {-kMax}, {1}, {-1}},
                                         {{4, 6}, {0, 0}, {0, -1}, {-2, -3}},
                                         {{0, 1, 2}, {5, 6, 7}, {0, 1, 2}, {2, 2, 3}},
                                         {{3}, {3}, {0}, {1}},
                                         {{10}, {20}, {1}, {1}}}) {
    SCOPED_TRACE(absl::StrCat("starts [", absl::StrJoin(c.starts, ","), "] ends [",
                              absl::StrJoin(c.ends, ","), "] axes [", absl::StrJoin(c.axes, ","),
                              "] steps [", absl::StrJoin(c.steps, ","), "]"));
    const TestTensor starts = Indices(c.starts), ends = Indices(c.ends), axes = Indices(c.axes),
                     steps = Indices(c.steps);
    KernelTester t("Slice", 13);
    t.Input(x).Input(starts).Input(ends);
    std::vector<const TestTensor*> inputs = {&x, &starts, &ends};
    if (!c.axes.empty()) {
      t.Input(axes);
      inputs.push_back(&axes);
    }
    if (!c.steps.empty()) {
      if (c.axes.empty()) {
        t.AbsentInput();
        inputs.push_back(nullptr);
      }
      t.Input(steps);
      inputs.push_back(&steps);
    }
    ExpectSame(t, inputs);
  }
  KernelTester attributes("Slice", 9);
  attributes.Input(x)
      .Attr("starts", std::vector<int64_t>{1, -3})
      .Attr("ends", std::vector<int64_t>{4, kMax})
      .Attr("axes", std::vector<int64_t>{0, 2});
  ExpectSame(attributes, {&x});
}

TEST_F(CudaMovementTest, ExpandAndWhere) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  struct Case {
    Shape in;
    std::vector<int64_t> shape;
  };
  for (const Case& c : std::vector<Case>{{{3, 1}, {2, 3, 4}},
                                         {{1}, {5}},
                                         {{2, 3}, {2, 1}},
                                         {{4, 1, 6}, {4, 5, 6}},
                                         {{0, 1}, {0, 3}}}) {
    const TestTensor x = Int64s(c.in, next());
    const TestTensor shape = Indices(c.shape);
    KernelTester t("Expand", 13);
    t.Input(x).Input(shape);
    ExpectSame(t, {&x, &shape});
  }
  struct Where {
    Shape c, x, y;
  };
  for (const Where& w : std::vector<Where>{{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
                                           {{3, 1}, {1, 4}, {}},
                                           {{4}, {2, 3, 4}, {3, 1}},
                                           {{1}, {0, 2}, {2}}}) {
    std::mt19937 rng(next());
    std::vector<uint8_t> bits(w.c.NumElements());
    for (uint8_t& b : bits) b = rng() & 1;
    TestTensor cond;
    cond.type = DataType::kBool;
    cond.shape = w.c;
    cond.bytes.assign(bits.begin(), bits.end());
    const TestTensor x = Floats(w.x, next());
    const TestTensor y = Floats(w.y, next());
    KernelTester t("Where", 16);
    t.Input(cond).Input(x).Input(y);
    ExpectSame(t, {&cond, &x, &y});
  }
}

TEST_F(CudaMovementTest, Gather) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  const TestTensor data = Floats({5, 4, 3}, next());
  const std::vector<int64_t> idx = {0, 2, -1, 1, -3, 2};
  const TestTensor i64 = TestTensor::Of<int64_t>({2, 3}, idx);
  const TestTensor i32 =
      TestTensor::Of<int32_t>({2, 3}, std::vector<int32_t>(idx.begin(), idx.end()));
  const TestTensor scalar = TestTensor::Of<int64_t>({}, {-2});
  const TestTensor none = TestTensor::Of<int64_t>({0}, {});
  for (int64_t axis : {0, 1, -1}) {
    for (const TestTensor* indices : {&i64, &i32, &scalar, &none}) {
      SCOPED_TRACE(absl::StrCat("axis ", axis, " indices ", indices->shape.ToString()));
      KernelTester t("Gather", 13);
      t.Input(data).Input(*indices).Attr("axis", axis);
      ExpectSame(t, {&data, indices});
    }
  }
}

TEST_F(CudaMovementTest, Cast) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  // Values every type holds (0 to 250 with fractions, zeros for bool), so that the conversions
  // are defined in C++ on both sides.
  std::vector<float> v = RandomFloats(1000, 0, 250, next());
  for (size_t i = 0; i < v.size(); i += 7) v[i] = 0.0f;
  const TestTensor f32 = TestTensor::Of<float>({10, 100}, v);
  const std::vector<DataType> types = {DataType::kFloat32, DataType::kFloat16, DataType::kInt32,
                                       DataType::kInt64,   DataType::kUint8,   DataType::kBool};
  for (DataType from : types) {
    // The input in `from`: the CPU kernel's cast of the float values.
    TestTensor x = f32;
    if (from != DataType::kFloat32) {
      KernelTester to_from("Cast", 13);
      to_from.Input(f32).Attr("to", int64_t{static_cast<int64_t>(from)});
      absl::StatusOr<testing::CpuAndCuda> made = RunOnCpuAndCuda(to_from, {&f32});
      ASSERT_TRUE(made.ok()) << made.status();
      x = made->cpu[0];
    }
    for (DataType to : types) {
      SCOPED_TRACE(absl::StrCat(engine::DataTypeName(from), " -> ", engine::DataTypeName(to)));
      KernelTester t("Cast", 13);
      t.Input(x).Attr("to", int64_t{static_cast<int64_t>(to)});
      ExpectSame(t, {&x});
    }
  }
}

TEST_F(CudaMovementTest, Views) {
  SCOPED_TRACE(absl::StrCat("seed ", seed_));
  const TestTensor x = Floats({2, 1, 3, 4}, next());
  const TestTensor shape = Indices({0, -1, 4});
  KernelTester reshape("Reshape", 14);
  reshape.Input(x).Input(shape);
  ExpectSame(reshape, {&x, &shape});
  KernelTester flatten("Flatten", 13);
  flatten.Input(x).Attr("axis", int64_t{-2});
  ExpectSame(flatten, {&x});
  const TestTensor axes = Indices({1});
  KernelTester squeeze("Squeeze", 13);
  squeeze.Input(x).Input(axes);
  ExpectSame(squeeze, {&x, &axes});
  const TestTensor new_axes = Indices({0, -1});
  KernelTester unsqueeze("Unsqueeze", 13);
  unsqueeze.Input(x).Input(new_axes);
  ExpectSame(unsqueeze, {&x, &new_axes});
  KernelTester identity("Identity", 16);
  identity.Input(x);
  ExpectSame(identity, {&x});
}

}  // namespace
}  // namespace inferd::kernels::cuda

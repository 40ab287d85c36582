// Expand (broadcast in both directions, rank growth, same shape as a view, empty, element types,
// threads) and Tile (every dim, zero repeats, threads) against naive references; errors name the
// node.
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
using testing::BroadcastOffset;
using testing::CpuRegistry;
using testing::RefBroadcastShape;
using testing::Strides;
using testing::Unflatten;

template <typename T>
void CheckExpand(const Shape& in, const std::vector<int64_t>& shape, int threads = 1) {
  SCOPED_TRACE(in.ToString() + " to " + Shape(shape).ToString());
  std::vector<T> x(in.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 97 + 1);
  const Shape out_shape = RefBroadcastShape(in, Shape(shape));
  std::vector<T> expected(out_shape.NumElements());
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i] = x[BroadcastOffset(Unflatten(i, out_shape), in)];
  }
  KernelTester t("Expand", 13);
  t.template Input<T>(in, x).template Input<int64_t>({static_cast<int64_t>(shape.size())}, shape);
  t.Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(ExpandTest, Broadcasts) {
  CheckExpand<float>({3, 1}, {2, 1, 6});
  CheckExpand<float>({3, 1}, {3, 4});
  CheckExpand<float>({1, 4}, {3, 4});
  CheckExpand<float>({4}, {2, 3, 4});
  CheckExpand<float>({3, 4}, {1});  // the target is smaller: the input's shape
  CheckExpand<float>({2, 1, 3}, {1, 5, 1});
  CheckExpand<float>({1, 3, 1, 2}, {4, 3, 5, 2});
  CheckExpand<float>({}, {2, 3});      // a scalar
  CheckExpand<float>({2, 1}, {2, 0});  // empty
  CheckExpand<int64_t>({3, 1}, {3, 5});
  CheckExpand<uint8_t>({1, 7}, {5, 7});
  CheckExpand<int16_t>({5, 1, 1}, {5, 6, 7});
  CheckExpand<float>({64, 1, 1}, {64, 56, 56}, 2);
  CheckExpand<float>({1, 1000}, {300, 1000}, 2);
}

TEST(ExpandTest, SameShapeIsAView) {
  const auto data = TestTensor::Of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto shape = TestTensor::Of<int64_t>({2}, {2, 1});
  KernelTester spec("Expand", 13);
  spec.Input(data).Input(shape, true, /*constant=*/true);
  auto kernel = spec.Create(CpuRegistry());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->OutputAliases(), (std::vector<std::pair<int, int>>{{0, 0}}));
  const uint64_t copied = engine::PayloadBytesCopied();
  auto out = RunKernel(**kernel, {&data, &shape}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape, (Shape{2, 3}));
  EXPECT_EQ((*out)[0].values<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(engine::PayloadBytesCopied(), copied);
  // A shape that broadcasts is not a view.
  KernelTester spec2("Expand", 13);
  spec2.Input(data).Input(TestTensor::Of<int64_t>({3}, {4, 2, 3}), true, true);
  auto k2 = spec2.Create(CpuRegistry());
  ASSERT_TRUE(k2.ok());
  EXPECT_TRUE((*k2)->OutputAliases().empty());
}

TEST(ExpandTest, Errors) {
  KernelTester t("Expand", 13);
  t.Input<float>({3, 2}, std::vector<float>(6)).Input<int64_t>({2}, {3, 4});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_Expand' (Expand): shapes [3,2] and [3,4] cannot be broadcast (dimension "
            "1: 2 vs 4)");
  KernelTester neg("Expand", 13);
  neg.Input<float>({3}, std::vector<float>(3)).Input<int64_t>({1}, {-1});
  EXPECT_FALSE(neg.Run(CpuRegistry()).ok());
}

template <typename T>
void CheckTile(const Shape& in, const std::vector<int64_t>& repeats, int threads = 1) {
  SCOPED_TRACE(in.ToString() + " repeats " + Shape(repeats).ToString());
  std::vector<T> x(in.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 89 + 1);
  Shape out_shape;
  for (size_t d = 0; d < in.rank(); ++d) out_shape.push_back(in[d] * repeats[d]);
  const std::vector<int64_t> st = Strides(in);
  std::vector<T> expected(out_shape.NumElements());
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, out_shape);
    int64_t off = 0;
    for (size_t d = 0; d < in.rank(); ++d) off += (idx[d] % in[d]) * st[d];
    expected[i] = x[off];
  }
  KernelTester t("Tile", 13);
  t.template Input<T>(in, x)
      .template Input<int64_t>({static_cast<int64_t>(repeats.size())}, repeats)
      .Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), out_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(TileTest, Repeats) {
  CheckTile<float>({2, 3}, {1, 1});
  CheckTile<float>({2, 3}, {2, 1});
  CheckTile<float>({2, 3}, {1, 3});
  CheckTile<float>({2, 3}, {3, 2});
  CheckTile<float>({4}, {5});
  CheckTile<int64_t>({2, 1, 3}, {2, 4, 1});
  CheckTile<uint8_t>({2, 3}, {0, 2});  // empty
  CheckTile<float>({32, 100}, {40, 3}, 2);
}

TEST(TileTest, Errors) {
  KernelTester t("Tile", 13);
  t.Input<float>({2, 3}, std::vector<float>(6)).Input<int64_t>({1}, {2});
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_Tile' (Tile): repeats has 1 entries for input [2,3]");
  KernelTester neg("Tile", 13);
  neg.Input<float>({2}, std::vector<float>(2)).Input<int64_t>({1}, {-1});
  EXPECT_FALSE(neg.Run(CpuRegistry()).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

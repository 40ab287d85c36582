// ReduceSum, ReduceMean, ReduceMax, ReduceMin on CUDA against the CPU kernels on fresh random
// inputs: axes as the attribute (opset 13) and as the host input (opset 18), negative axes,
// keepdims 0 and 1, every plan reduce.cu has (rows, short rows, columns, strided), all axes,
// empty axes with noop_with_empty_axes, empty tensors and empty folds; int32 and int64 exact.
// ArgMax, ArgMin: every axis of a few shapes (warp rows, short rows, columns), keepdims,
// select_last_index on inputs full of ties, float32 / int32 / int64, exact. Skips without a GPU.
#include <cstdint>
#include <random>
#include <string>
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

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::RandomFloats;
using testing::RunOnCpuAndCuda;

struct Case {
  Shape shape;
  std::vector<int64_t> axes;  // empty: all
};

const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {{8, 1000}, {1}},        // rows, one block each
      {{300, 7}, {-1}},        // short rows, one thread each
      {{1, 100000}, {1}},      // one long row
      {{16, 33, 5}, {1}},      // [outer, n, inner] columns
      {{64, 9}, {0}},          // [n, inner]
      {{4, 5, 6, 7}, {0, 2}},  // strided
      {{4, 5, 6, 7}, {1, 3}},  // strided
      {{3, 1, 4}, {1}},        // a size-1 reduced dim: a copy
      {{2, 3, 4}, {}},         // all
      {{2, 0, 3}, {1}},        // empty folds
      {{0, 3}, {1}},           // no outputs
      {{}, {}},                // a scalar
  };
  return *cases;
}

template <typename T>
std::vector<T> RandomValues(const Shape& shape, uint32_t seed) {
  if constexpr (std::is_floating_point_v<T>) {
    return RandomFloats(shape.NumElements(), -4, 4, seed);
  } else {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> dist(-1000, 1000);
    std::vector<T> v(shape.NumElements());
    for (T& x : v) x = static_cast<T>(dist(rng));
    return v;
  }
}

template <typename T>
void ExpectMatchesCpu(testing::CpuComparison& compare) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    for (int opset : {13, 18}) {
      const bool axes_input = opset >= 18 || std::string(op) == "ReduceSum";
      for (const Case& c : Cases()) {
        for (int64_t keepdims : {0, 1}) {
          // A float empty fold is NaN (Mean) or infinite (Max, Min) on both sides, which
          // ExpectNear counts as a mismatch: those are compared in the integer runs.
          const bool sum = std::string(op) == "ReduceSum";
          if (std::is_floating_point_v<T> && !sum && c.shape.NumElements() == 0) continue;
          int64_t reduced = 1;
          for (size_t d = 0; d < c.shape.rank(); ++d) {
            bool r = c.axes.empty();
            for (int64_t a : c.axes) r |= (a < 0 ? a + int64_t(c.shape.rank()) : a) == int64_t(d);
            if (r) reduced *= c.shape[d];
          }
          SCOPED_TRACE(absl::StrCat(op, "-", opset, " ", c.shape.ToString(), " axes [",
                                    absl::StrJoin(c.axes, ","), "] keepdims ", keepdims));
          const TestTensor x = TestTensor::Of<T>(c.shape, RandomValues<T>(c.shape, next++));
          const TestTensor axes = TestTensor::Of<int64_t>({int64_t(c.axes.size())}, c.axes);
          KernelTester t(op, opset);
          t.Input(x).Attr("keepdims", keepdims);
          std::vector<const TestTensor*> inputs = {&x};
          if (axes_input) {
            if (!c.axes.empty()) {
              t.Input(axes);
              inputs.push_back(&axes);
            }
          } else if (!c.axes.empty()) {
            t.Attr("axes", c.axes);
          }
          absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
          ASSERT_TRUE(out.ok()) << out.status();
          if constexpr (std::is_floating_point_v<T>) {
            // Sums of up to 1e5 values in [-4, 4), folded in another order: rounding grows
            // with the count; Max and Min are exact.
            const bool extremum = !sum && std::string(op) != "ReduceMean";
            compare.ExpectNear(*out, extremum ? 0.0f : sum ? 1e-6f * reduced + 1e-5f : 1e-5f);
          } else {
            EXPECT_EQ(out->cuda[0].shape, out->cpu[0].shape);
            EXPECT_EQ(out->cuda[0].template values<T>(), out->cpu[0].template values<T>());
          }
        }
      }
    }
  }
}

TEST(CudaReduceTest, FloatMatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  testing::CpuComparison compare;
  ExpectMatchesCpu<float>(compare);
  compare.Record();
}

TEST(CudaReduceTest, IntegersMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  testing::CpuComparison unused;
  ExpectMatchesCpu<int32_t>(unused);
  ExpectMatchesCpu<int64_t>(unused);
}

TEST(CudaReduceTest, EmptyAxesWithNoopCopy) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const TestTensor x = TestTensor::Of<float>({3, 4}, RandomFloats(12, -1, 1, 7));
  const TestTensor axes = TestTensor::Of<int64_t>({0}, {});
  for (const char* op : {"ReduceSum", "ReduceMax"}) {
    KernelTester t(op, 18);
    t.Input(x).Input(axes).Attr("noop_with_empty_axes", int64_t{1});
    absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x, &axes});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->cuda[0].shape, Shape({3, 4}));
    EXPECT_EQ(out->cuda[0].values<float>(), out->cpu[0].values<float>());
  }
}

// Values drawn from few integers, so that ties decide between the first and the last index.
template <typename T>
TestTensor Tied(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(shape.NumElements());
  for (T& x : v) x = static_cast<T>(static_cast<int>(rng() % 9) - 4);
  return TestTensor::Of<T>(shape, v);
}

template <typename T>
void ExpectArgMatchesCpu(uint32_t seed) {
  uint32_t next = seed;
  for (const Shape& shape : {Shape{8, 1000}, Shape{300, 7}, Shape{1, 100000}, Shape{16, 33, 5},
                             Shape{3, 40, 2, 37}, Shape{5}, Shape{0, 6}}) {
    const TestTensor x = Tied<T>(shape, next++);
    for (int64_t axis = -static_cast<int64_t>(shape.rank()); axis < 0; ++axis) {
      if (shape[shape.rank() + axis] == 0) continue;  // an empty axis is an error on both
      for (const char* op : {"ArgMax", "ArgMin"}) {
        for (int opset : {11, 13}) {
          for (int64_t last : {0, 1}) {
            if (opset == 11 && last == 1) continue;
            for (int64_t keepdims : {0, 1}) {
              SCOPED_TRACE(absl::StrCat(op, " ", shape.ToString(), " axis ", axis, " opset ", opset,
                                        " last ", last, " keepdims ", keepdims));
              KernelTester t(op, opset);
              t.Attr("axis", axis).Attr("keepdims", keepdims).Input(x);
              if (opset >= 12) t.Attr("select_last_index", last);
              absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x});
              ASSERT_TRUE(out.ok()) << out.status();
              EXPECT_EQ(out->cuda[0].shape, out->cpu[0].shape);
              EXPECT_EQ(out->cuda[0].values<int64_t>(), out->cpu[0].values<int64_t>());
            }
          }
        }
      }
    }
  }
}

TEST(CudaReduceTest, ArgMaxArgMinMatchCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  ExpectArgMatchesCpu<float>(seed);
  ExpectArgMatchesCpu<int32_t>(seed + 100);
  ExpectArgMatchesCpu<int64_t>(seed + 200);
}

// Distinct random floats, the common case (no ties): a vocabulary-sized last axis.
TEST(CudaReduceTest, ArgMaxOfLogits) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const Shape shape{4, 32000};
  const TestTensor x =
      TestTensor::Of<float>(shape, RandomFloats(shape.NumElements(), -20, 20, seed));
  KernelTester t("ArgMax", 13);
  t.Attr("axis", int64_t{-1}).Input(x);
  absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, {&x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->cuda[0].values<int64_t>(), out->cpu[0].values<int64_t>());
}

}  // namespace
}  // namespace inferd::kernels::cuda

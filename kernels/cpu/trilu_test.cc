// Trilu: upper and lower, k positive / negative / beyond the matrix, batched and non-square
// matrices, element types, threads, errors naming the node.
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

template <typename T>
void CheckTrilu(const Shape& s, bool upper, std::optional<int64_t> k, int threads = 1) {
  SCOPED_TRACE(s.ToString() + (upper ? " upper k " : " lower k ") + std::to_string(k.value_or(0)));
  std::vector<T> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 97 + 1);
  std::vector<T> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, s);
    const int64_t r = idx[s.rank() - 2], c = idx[s.rank() - 1], kk = k.value_or(0);
    expected[i] = (upper ? c - r >= kk : c - r <= kk) ? x[i] : T(0);
  }
  KernelTester t("Trilu", 14);
  t.Attr("upper", int64_t{upper}).template Input<T>(s, x).Threads(threads);
  if (k) t.template Input<int64_t>({}, {*k});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), s);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(TriluTest, UpperLowerAndK) {
  for (bool upper : {true, false}) {
    for (std::optional<int64_t> k :
         {std::optional<int64_t>(), std::optional<int64_t>(1), std::optional<int64_t>(-1),
          std::optional<int64_t>(3), std::optional<int64_t>(-7), std::optional<int64_t>(9),
          std::optional<int64_t>(INT64_MAX), std::optional<int64_t>(INT64_MIN)}) {
      CheckTrilu<float>({4, 5}, upper, k);
      CheckTrilu<float>({5, 3}, upper, k);
      CheckTrilu<int64_t>({2, 3, 3}, upper, k);
    }
    CheckTrilu<uint8_t>({3, 0, 4}, upper, 1);
    CheckTrilu<float>({16, 200, 300}, upper, 5, 2);
  }
}

TEST(TriluTest, Errors) {
  KernelTester t("Trilu", 14);
  t.Input<float>({4}, std::vector<float>(4));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_Trilu' (Trilu): the input must have rank >= 2, got [4]");
  KernelTester k("Trilu", 14);
  k.Input<float>({2, 2}, std::vector<float>(4)).Input<int32_t>({}, {1});
  EXPECT_FALSE(k.Run(CpuRegistry()).ok());
}

}  // namespace
}  // namespace inferd::kernels::cpu

// Transpose against a naive reference: default (reversed) perm, 2-D, batched last-two swaps,
// last-dimension-preserving perms, general perms, size-1 dims (merged away; order kept means an
// alias), every element size, empty tensors, bad perms, threads.
#include "absl/strings/str_join.h"
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

template <typename T>
void CheckTranspose(const Shape& s, std::optional<std::vector<int64_t>> perm, int threads = 1) {
  std::vector<int64_t> p;
  if (perm) {
    p = *perm;
  } else {
    for (size_t i = s.rank(); i-- > 0;) p.push_back(static_cast<int64_t>(i));
  }
  SCOPED_TRACE(s.ToString() + " perm " + absl::StrJoin(p, ",") + " size " +
               std::to_string(sizeof(T)));
  std::vector<T> x(s.NumElements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 251 + 1);
  Shape expected_shape;
  const std::vector<T> expected = testing::RefTranspose(x, s, p, &expected_shape);
  KernelTester t("Transpose", 13);
  if (perm) t.Attr("perm", *perm);
  t.template Input<T>(s, x).Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), expected_shape);
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(TransposeTest, Paths) {
  CheckTranspose<float>({3, 5}, std::nullopt);                            // 2-D tiled
  CheckTranspose<float>({70, 45}, std::vector<int64_t>{1, 0});            // several tiles
  CheckTranspose<float>({2, 3, 4}, std::nullopt);                         // reversed: general
  CheckTranspose<float>({2, 3, 4, 5}, std::vector<int64_t>{0, 2, 1, 3});  // last dim kept
  CheckTranspose<float>({2, 3, 4, 5}, std::vector<int64_t>{0, 1, 3, 2});  // batched swap
  CheckTranspose<float>({2, 3, 4, 5}, std::vector<int64_t>{0, 2, 3, 1});  // NCHW -> NHWC
  CheckTranspose<float>({2, 3, 4, 5}, std::vector<int64_t>{0, 3, 1, 2});  // NHWC -> NCHW
  CheckTranspose<float>({2, 3, 4, 5}, std::vector<int64_t>{3, 1, 0, 2});  // general
  CheckTranspose<float>({2, 3, 4, 5, 6}, std::vector<int64_t>{4, 2, 0, 3, 1});
  CheckTranspose<float>({1, 3, 1, 4}, std::vector<int64_t>{2, 1, 0, 3});  // order kept: alias
  CheckTranspose<float>({1, 3, 1, 4}, std::vector<int64_t>{3, 0, 2, 1});  // size-1 dims dropped
  CheckTranspose<float>({5}, std::nullopt);
  CheckTranspose<float>(Shape(), std::nullopt);
  CheckTranspose<float>({0, 3}, std::nullopt);
  CheckTranspose<float>({3, 4}, std::vector<int64_t>{0, 1});  // identity
}

TEST(TransposeTest, ElementSizes) {
  for (const auto& perm : std::vector<std::vector<int64_t>>{{1, 0, 2}, {2, 1, 0}, {0, 2, 1}}) {
    CheckTranspose<uint8_t>({3, 4, 5}, perm);
    CheckTranspose<int16_t>({3, 4, 5}, perm);
    CheckTranspose<int32_t>({3, 4, 5}, perm);
    CheckTranspose<int64_t>({3, 4, 5}, perm);
    CheckTranspose<double>({3, 4, 5}, perm);
  }
  // bool (1 byte, through RawInput: std::vector<bool> has no data()).
  const bool x[6] = {true, false, false, true, true, false};
  KernelTester t("Transpose", 13);
  t.RawInput(engine::DataType::kBool, {2, 3}, x, sizeof(x));
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), engine::DataType::kBool);
  const bool* y = (*out)[0].data<bool>();
  EXPECT_EQ(std::vector<bool>(y, y + 6),
            (std::vector<bool>{true, true, false, true, false, false}));
}

TEST(TransposeTest, LargeAndThreaded) {
  for (int threads : {1, 2}) {
    CheckTranspose<float>({8, 12, 64, 64}, std::vector<int64_t>{0, 2, 1, 3}, threads);
    CheckTranspose<float>({4, 12, 128, 64}, std::vector<int64_t>{0, 1, 3, 2}, threads);
    CheckTranspose<float>({2, 64, 56, 56}, std::vector<int64_t>{0, 2, 3, 1}, threads);
    CheckTranspose<float>({30, 40, 50}, std::vector<int64_t>{2, 0, 1}, threads);
  }
}

TEST(TransposeTest, BadPermNamesTheNode) {
  for (const auto& perm : std::vector<std::vector<int64_t>>{{0, 0}, {0}, {0, 2}, {-1, 0}}) {
    KernelTester t("Transpose", 13);
    t.Attr("perm", perm).Input<float>({2, 3}, std::vector<float>(6));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("node 'test_Transpose' (Transpose): perm ["),
              std::string::npos)
        << out.status();
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

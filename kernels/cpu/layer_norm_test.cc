// LayerNormalization against a naive reference: every axis (negative too), epsilon, with and
// without B, broadcast Scale/B, optional Mean/InvStdDev outputs, errors, threads.
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
using testing::ExpectNear;
using testing::RandomFloats;

TEST(LayerNormTest, EveryAxisWithStatistics) {
  const Shape s{2, 3, 4, 5};
  const auto x = RandomFloats(s.NumElements(), 1, -3.0f, 3.0f);
  for (int64_t axis : {-4, -3, -2, -1, 0, 1, 2, 3}) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(axis);
      const int a = axis < 0 ? axis + 4 : axis;
      const Shape normalized(s.dims().subspan(a));
      const int64_t rows = s.SizeBetween(0, a), d = normalized.NumElements();
      const auto scale = RandomFloats(d, 2),
                 bias = with_bias ? RandomFloats(d, 3) : std::vector<float>();
      std::vector<float> mean, inv;
      const auto expected = testing::RefLayerNorm(x, rows, d, scale, bias, 1e-3f, &mean, &inv);
      KernelTester t("LayerNormalization", 17);
      t.Attr("axis", axis)
          .Attr("epsilon", 1e-3f)
          .Input<float>(s, x)
          .Input<float>(normalized, scale);
      if (with_bias) t.Input<float>(normalized, bias);
      t.Outputs(3).Threads(2);
      auto out = t.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].shape(), s);
      ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
      Shape stats = s;
      for (int i = a; i < 4; ++i) stats[i] = 1;
      EXPECT_EQ((*out)[1].shape(), stats);
      EXPECT_EQ((*out)[2].shape(), stats);
      ExpectNear(Values<float>((*out)[1]), mean, 1e-5f);
      ExpectNear(Values<float>((*out)[2]), inv, 1e-4f);
    }
  }
}

TEST(LayerNormTest, DefaultsBroadcastScaleAndUnwantedOutputs) {
  const Shape s{4, 6};
  const auto x = RandomFloats(s.NumElements(), 4);
  std::vector<float> mean, inv;
  // Scale [1] and B [6] broadcast over the normalized shape [6]; default axis -1, epsilon 1e-5.
  const auto expected =
      testing::RefLayerNorm(x, 4, 6, std::vector<float>(6, 0.5f),
                            std::vector<float>{1, 2, 3, 4, 5, 6}, 1e-5f, &mean, &inv);
  KernelTester t("LayerNormalization", 17);
  t.Input<float>(s, x).Input<float>({1}, {0.5f}).Input<float>({6}, {1, 2, 3, 4, 5, 6});
  t.Outputs(3).UnwantedOutput(1).UnwantedOutput(2);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), expected, 1e-5f);
  EXPECT_TRUE((*out)[1].empty());
  EXPECT_TRUE((*out)[2].empty());
}

TEST(LayerNormTest, LargeRowsTwoThreadsMatchOne) {
  const Shape s{300, 768};
  const auto x = RandomFloats(s.NumElements(), 5), scale = RandomFloats(768, 6),
             b = RandomFloats(768, 7);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    KernelTester t("LayerNormalization", 17);
    t.Input<float>(s, x).Input<float>({768}, scale).Input<float>({768}, b).Threads(threads);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back(Values<float>((*out)[0]));
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(LayerNormTest, Errors) {
  {
    KernelTester t("LayerNormalization", 17);
    t.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({4}, std::vector<float>(4));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("node 'test_LayerNormalization' (LayerNormalization): "
                                          "input 1 has shape [4]"),
              std::string::npos)
        << out.status();
  }
  {
    KernelTester t("LayerNormalization", 17);
    t.Attr("axis", int64_t{-3})
        .Input<float>({2, 3}, std::vector<float>(6))
        .Input<float>({3}, std::vector<float>(3));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("axis -3 is out of range"), std::string::npos);
  }
  {  // Not registered before opset 17 (it was a function before).
    KernelTester t("LayerNormalization", 16);
    t.Input<float>({2, 3}, std::vector<float>(6)).Input<float>({3}, std::vector<float>(3));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  }
  {  // Statistics in bfloat16 (stash_type 16): refused at load.
    KernelTester t("LayerNormalization", 17);
    t.Attr("stash_type", int64_t{16})
        .Input<float>({2, 3}, std::vector<float>(6))
        .Input<float>({3}, std::vector<float>(3));
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_NE(out.status().message().find("stash_type 16"), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

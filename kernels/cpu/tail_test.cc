// The operator tail's tricky semantics: the losses' reductions with weights and ignore_index
// (against a naive reference), their errors, SoftmaxCrossEntropyLoss's log_prob; IsInf's flags;
// Shrink on integers; BitShift past the type's width; Gelu's two forms; bad attributes;
// NonMaxSuppression's greedy selection; Unique's outputs; Compress, Det, EyeLike, HannWindow.
#include <cmath>
#include <limits>

#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

// Naive NLL over x [N, C, D] (log-probabilities or scores when `softmax`).
std::vector<double> NaiveLoss(const std::vector<float>& x, const std::vector<int64_t>& t,
                              const std::vector<float>* w, int64_t n, int64_t c, int64_t d,
                              int64_t ignore, bool softmax, double* weight_sum) {
  std::vector<double> loss(n * d, 0.0);
  *weight_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < d; ++k) {
      const int64_t label = t[b * d + k];
      if (label == ignore) continue;
      double lse = 0;
      if (softmax) {
        double s = 0;
        for (int64_t j = 0; j < c; ++j) s += std::exp(x[(b * c + j) * d + k]);
        lse = std::log(s);
      }
      const double wt = w ? (*w)[label] : 1.0;
      loss[b * d + k] = -(x[(b * c + label) * d + k] - lse) * wt;
      *weight_sum += wt;
    }
  }
  return loss;
}

void CheckLoss(const std::string& op, const std::string& reduction, bool weighted,
               std::optional<int64_t> ignore) {
  SCOPED_TRACE(op + " " + reduction + (weighted ? " weighted" : "") +
               (ignore ? " ignore " + std::to_string(*ignore) : ""));
  const int64_t n = 3, c = 4, d = 5;
  std::vector<float> x(n * c * d);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * i) - 0.2f;
  std::vector<int64_t> t(n * d);
  for (size_t i = 0; i < t.size(); ++i) t[i] = (i * 7) % c;
  if (ignore) t[2] = t[9] = *ignore;
  const std::vector<float> w = {0.5f, 2.0f, 1.0f, 0.25f};
  KernelTester k(op, 13);
  k.Attr("reduction", reduction);
  if (ignore) k.Attr("ignore_index", *ignore);
  k.Input<float>({n, c, d}, x).Input<int64_t>({n, d}, t);
  if (weighted) k.Input<float>({c}, w);
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  double weight_sum;
  const std::vector<double> ref =
      NaiveLoss(x, t, weighted ? &w : nullptr, n, c, d, ignore.value_or(-1000),
                op == "SoftmaxCrossEntropyLoss", &weight_sum);
  const std::vector<float> got = Values<float>((*out)[0]);
  if (reduction == "none") {
    EXPECT_EQ((*out)[0].shape(), Shape({n, d}));
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5) << i;
    return;
  }
  EXPECT_EQ((*out)[0].shape(), Shape({}));
  double sum = 0;
  for (double v : ref) sum += v;
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NEAR(got[0], reduction == "sum" ? sum : sum / weight_sum, 1e-5);
}

TEST(LossTest, ReductionsWeightsIgnoreIndex) {
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (bool weighted : {false, true}) {
        CheckLoss(op, reduction, weighted, std::nullopt);
        CheckLoss(op, reduction, weighted, 1);
        CheckLoss(op, reduction, weighted, -5);
      }
    }
  }
}

TEST(LossTest, LogProbOutputIsLogSoftmax) {
  KernelTester k("SoftmaxCrossEntropyLoss", 13);
  k.Input<double>({2, 3}, {1, 2, 3, 0, 0, 0}).Input<int32_t>({2}, {2, 1}).Outputs(2);
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> lp = Values<double>((*out)[1]);
  ASSERT_EQ(lp.size(), 6u);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(lp[0], 1 - lse, 1e-12);
  EXPECT_NEAR(lp[4], -std::log(3.0), 1e-12);
  // mean of -(3 - lse) and log(3)
  EXPECT_NEAR(Values<double>((*out)[0])[0], ((lse - 3) + std::log(3.0)) / 2, 1e-12);
}

TEST(LossTest, Errors) {
  // A target outside [0, C) that is not ignore_index.
  KernelTester bad("NegativeLogLikelihoodLoss", 13);
  bad.Input<float>({2, 3}, {0, 0, 0, 0, 0, 0}).Input<int64_t>({2}, {0, 3});
  auto out = bad.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("outside [0, 3)"), std::string::npos) << out.status();
  // Target shape mismatch.
  KernelTester shape("SoftmaxCrossEntropyLoss", 13);
  shape.Input<float>({2, 3, 4}, std::vector<float>(24)).Input<int64_t>({2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_FALSE(shape.Run(CpuRegistry()).ok());
  // Rank 1 input.
  KernelTester rank("NegativeLogLikelihoodLoss", 13);
  rank.Input<float>({3}, {0, 0, 0}).Input<int64_t>({}, {0});
  EXPECT_FALSE(rank.Run(CpuRegistry()).ok());
  // Weight of the wrong length, unknown reduction.
  KernelTester weight("NegativeLogLikelihoodLoss", 13);
  weight.Input<float>({1, 3}, {0, 0, 0}).Input<int64_t>({1}, {0}).Input<float>({2}, {1, 1});
  EXPECT_FALSE(weight.Run(CpuRegistry()).ok());
  KernelTester red("NegativeLogLikelihoodLoss", 13);
  red.Attr("reduction", std::string("max"))
      .Input<float>({1, 3}, {0, 0, 0})
      .Input<int64_t>({1}, {0});
  EXPECT_FALSE(red.Run(CpuRegistry()).ok());
}

TEST(TailTest, IsInfFlags) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {kInf, -kInf, 1.0f, std::nanf("")};
  for (int64_t pos : {0, 1}) {
    for (int64_t neg : {0, 1}) {
      KernelTester k("IsInf", 20);
      k.Attr("detect_positive", pos).Attr("detect_negative", neg).Input<float>({4}, x);
      auto out = k.Run(CpuRegistry());
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Values<uint8_t>((*out)[0]),
                (std::vector<uint8_t>{uint8_t(pos != 0), uint8_t(neg != 0), 0, 0}));
    }
  }
}

TEST(TailTest, ShrinkIntegersAndBitShiftPastWidth) {
  KernelTester s("Shrink", 9);
  s.Attr("lambd", 1.5f).Attr("bias", 1.0f).Input<int32_t>({5}, {-3, -1, 0, 2, 5});
  auto out = s.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{-2, 0, 0, 1, 4}));

  KernelTester b("BitShift", 11);
  b.Attr("direction", std::string("LEFT"))
      .Input<uint8_t>({4}, {1, 1, 3, 255})
      .Input<uint8_t>({4}, {7, 8, 1, 200});
  out = b.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{128, 0, 6, 0}));

  KernelTester bad("BitShift", 11);
  bad.Attr("direction", std::string("UP")).Input<uint8_t>({1}, {1}).Input<uint8_t>({1}, {1});
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
}

TEST(TailTest, GeluForms) {
  const std::vector<double> x = {-3, -0.5, 0, 0.5, 3};
  for (const char* mode : {"none", "tanh"}) {
    KernelTester k("Gelu", 20);
    k.Attr("approximate", std::string(mode)).Input<double>({5}, x);
    auto out = k.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> y = Values<double>((*out)[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double ref =
          std::string(mode) == "none"
              ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
              : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(y[i], ref, 1e-12) << mode << " " << v;
    }
  }
  KernelTester bad("Gelu", 20);
  bad.Attr("approximate", std::string("fast")).Input<float>({1}, {1});
  EXPECT_FALSE(bad.Run(CpuRegistry()).ok());
}

TEST(TailTest, NonMaxSuppressionSelectsGreedilyPerClass) {
  // Three overlapping boxes and one apart (corners [y1, x1, y2, x2], the second one flipped).
  const std::vector<float> boxes = {0, 0, 1, 1, 1.1f, 1, 0.1f, 0, 0, 0, 0.9f, 1, 5, 5, 6, 6};
  const std::vector<float> scores = {0.9f, 0.95f, 0.5f, 0.3f, 0.1f, 0.2f, 0.3f, 0.4f};
  KernelTester k("NonMaxSuppression", 11);
  k.Input<float>({1, 4, 4}, boxes)
      .Input<float>({1, 2, 4}, scores)
      .Input<int64_t>({1}, {3})
      .Input<float>({1}, {0.5f})
      .Input<float>({1}, {0.15f});
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), Shape({4, 3}));
  // class 0: box 1 (0.95), boxes 0 and 2 suppressed by it, box 3; class 1: box 3, box 2 (box 1
  // overlaps box 2 too much).
  // Box 0 (0.1) is under the score threshold.
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 3, 0, 1, 3, 0, 1, 2}));
}

TEST(TailTest, UniqueUnsortedAndAlongAxis) {
  KernelTester k("Unique", 11);
  k.Attr("sorted", int64_t{0}).Input<float>({6}, {2, 1, 1, 3, 4, 3}).Outputs(4);
  auto out = k.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{1, 2, 2, 1}));

  KernelTester a("Unique", 11);
  a.Attr("axis", int64_t{1}).Input<int32_t>({2, 3}, {1, 0, 1, 2, 5, 2}).Outputs(4);
  out = a.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  // Columns (1,2), (0,5), (1,2): sorted unique columns (0,5), (1,2).
  EXPECT_EQ((*out)[0].shape(), Shape({2, 2}));
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{0, 1, 5, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{1, 2}));
}

TEST(TailTest, CompressDetEyeLikeWindows) {
  const uint8_t kFalseTrue[] = {0, 1}, kTrueTrue[] = {1, 1};
  KernelTester c("Compress", 11);
  c.Attr("axis", int64_t{1})
      .Input<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})
      .RawInput(engine::DataType::kBool, {2}, kFalseTrue, 2);
  auto out = c.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{2, 5}));
  KernelTester too_long("Compress", 11);
  too_long.Attr("axis", int64_t{0})
      .Input<float>({1}, {1})
      .RawInput(engine::DataType::kBool, {2}, kTrueTrue, 2);
  EXPECT_FALSE(too_long.Run(CpuRegistry()).ok());

  KernelTester d("Det", 11);
  d.Input<double>({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0});
  out = d.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<double>((*out)[0]), (std::vector<double>{-2, -1}));
  KernelTester not_square("Det", 11);
  not_square.Input<float>({2, 3}, std::vector<float>(6));
  EXPECT_FALSE(not_square.Run(CpuRegistry()).ok());

  KernelTester e("EyeLike", 9);
  e.Attr("k", int64_t{-1}).Input<int32_t>({3, 2}, std::vector<int32_t>(6, 7));
  out = e.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{0, 0, 1, 0, 0, 1}));

  KernelTester h("HannWindow", 17);
  h.Attr("periodic", int64_t{0}).Input<int64_t>({}, {5});
  out = h.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> hann = Values<float>((*out)[0]);
  const std::vector<float> want = {0, 0.5f, 1, 0.5f, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(hann[i], want[i], 1e-6) << i;
}

}  // namespace
}  // namespace inferd::kernels::cpu

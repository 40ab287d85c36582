// fast_math.h against double precision over sweeps of the float range (relative error < 1e-6),
// its special values; float16.h's portable conversions against the hardware ones (every half,
// a sweep of floats); and broadcast.h's plans (merged dims and strides) and run coverage.
#include "kernels/cpu/fast_math.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/thread_pool.h"
#include "gtest/gtest.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/float16.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Max relative error of f against ref over floats x with lo < |x| < hi, stepping the bits.
double MaxRelError(float (*f)(float), double (*ref)(double), double lo, double hi, float* worst) {
  double max_err = 0;
  for (uint64_t u = 0; u < 0xff800000u; u += 4099) {
    const float x = FromBits(static_cast<uint32_t>(u));
    if (std::isnan(x) || std::fabs(x) <= lo || std::fabs(x) >= hi) continue;
    const double e = ref(x);
    if (e == 0 || std::fabs(e) < 1.2e-38) continue;  // float subnormal results flush
    const double err = std::fabs(f(x) - e) / std::fabs(e);
    if (err > max_err) {
      max_err = err;
      *worst = x;
    }
  }
  return max_err;
}

TEST(FastMathTest, RelativeErrorBelow1e6) {
  float worst = 0;
  EXPECT_LT(MaxRelError(
                FastExp, [](double x) { return std::exp(x); }, 0, 88.7, &worst),
            1e-6)
      << worst;
  EXPECT_LT(MaxRelError(
                FastExpM1, [](double x) { return std::expm1(x); }, 1e-37, 88.7, &worst),
            1e-6)
      << worst;
  EXPECT_LT(MaxRelError(
                FastSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, 0, 87, &worst),
            1e-6)
      << worst;
  EXPECT_LT(MaxRelError(
                FastTanh, [](double x) { return std::tanh(x); }, 1e-37, 1e30, &worst),
            1e-6)
      << worst;
  EXPECT_LT(MaxRelError(
                FastErf, [](double x) { return std::erf(x); }, 1e-37, 1e30, &worst),
            1e-6)
      << worst;
}

TEST(FastMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(FastExp(inf), inf);
  EXPECT_EQ(FastExp(-inf), 0.0f);
  EXPECT_EQ(FastExp(89.0f), inf);
  EXPECT_EQ(FastExp(0.0f), 1.0f);
  EXPECT_EQ(FastExp(-100.0f), 0.0f);  // subnormal: flushed
  EXPECT_EQ(FastExp(-87.4f), 0.0f);
  EXPECT_GE(FastExp(-87.3f), 1.17549435e-38f);  // the smallest normal results stay
  EXPECT_EQ(FastTanh(inf), 1.0f);
  EXPECT_EQ(FastTanh(-inf), -1.0f);
  EXPECT_EQ(FastErf(inf), 1.0f);
  EXPECT_EQ(FastErf(-inf), -1.0f);
  EXPECT_EQ(FastSigmoid(-inf), 0.0f);
  EXPECT_EQ(FastSigmoid(inf), 1.0f);
  EXPECT_EQ(FastExpM1(-inf), -1.0f);
  for (float (*f)(float) : {FastExp, FastExpM1, FastTanh, FastSigmoid, FastErf}) {
    EXPECT_TRUE(std::isnan(f(nan)));
  }
}

TEST(Float16Test, PortableConversionsMatchHardware) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float a = HalfToFloat(static_cast<uint16_t>(h));
    const float b = HalfToFloatPortable(static_cast<uint16_t>(h));
    if (std::isnan(a)) {
      EXPECT_TRUE(std::isnan(b)) << h;
    } else {
      EXPECT_EQ(std::memcmp(&a, &b, 4), 0) << h;
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) {
    const float x = FromBits(static_cast<uint32_t>(u));
    const uint16_t a = FloatToHalf(x), b = FloatToHalfPortable(x);
    if (std::isnan(x)) {
      EXPECT_EQ(a & 0x7c00, 0x7c00);
      EXPECT_EQ(b & 0x7c00, 0x7c00);
      EXPECT_NE(b & 0x3ff, 0);
    } else {
      ASSERT_EQ(a, b) << x;
    }
  }
}

TEST(BroadcastTest, PlansMergeDimensions) {
  const Shape a{2, 3, 4, 5}, b{3, 1, 1}, out{2, 3, 4, 5};
  const BroadcastPlan<2> plan = MakeBroadcastPlan<2>({&a, &b}, out);
  EXPECT_EQ(plan.dims, (DimVector{2, 3, 20}));
  EXPECT_EQ(plan.strides[0], (DimVector{60, 20, 1}));
  EXPECT_EQ(plan.strides[1], (DimVector{0, 1, 0}));
  EXPECT_TRUE(plan.contiguous(0));
  EXPECT_FALSE(plan.contiguous(1));
  // Size-1 output dims drop; scalars give one element.
  const Shape s{}, one{1, 1};
  const BroadcastPlan<2> scalar = MakeBroadcastPlan<2>({&s, &one}, one);
  EXPECT_EQ(scalar.dims, (DimVector{1}));
}

TEST(BroadcastTest, RunsCoverTheOutputOnce) {
  const Shape a{3, 1, 100001}, b{7, 1}, out{3, 7, 100001};
  const BroadcastPlan<2> plan = MakeBroadcastPlan<2>({&a, &b}, out);
  for (int threads : {1, 2, 3}) {
    engine::ThreadPool pool(threads);
    std::vector<int> hits(out.NumElements(), 0);
    std::vector<int64_t> a_off(out.NumElements(), -1), b_off(out.NumElements(), -1);
    ForEachRun<2>(plan, pool, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t len) {
      for (int64_t k = 0; k < len; ++k) {
        ++hits[o + k];
        a_off[o + k] = off[0] + (plan.contiguous(0) ? k : 0);
        b_off[o + k] = off[1] + (plan.contiguous(1) ? k : 0);
      }
    });
    for (int64_t i = 0; i < out.NumElements(); i += 1) {
      ASSERT_EQ(hits[i], 1) << i;
      const int64_t i0 = i / (7 * 100001), i1 = (i / 100001) % 7, i2 = i % 100001;
      ASSERT_EQ(a_off[i], i0 * 100001 + i2) << i;
      ASSERT_EQ(b_off[i], i1) << i;
    }
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

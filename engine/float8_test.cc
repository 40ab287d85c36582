#include "engine/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace inferd::engine {
namespace {

constexpr DataType kAll[] = {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
                             DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Float8, EveryCodeRoundTrips) {
  for (DataType t : kAll) {
    int nans = 0;
    for (int b = 0; b < 256; ++b) {
      const float v = Float8ToFloat(static_cast<uint8_t>(b), t);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      EXPECT_EQ(FloatToFloat8(v, t, /*saturate=*/false), b) << DataTypeName(t) << " " << b;
    }
    const int expected_nans = t == DataType::kFloat8E4M3FN ? 2 : t == DataType::kFloat8E5M2 ? 6 : 1;
    EXPECT_EQ(nans, expected_nans) << DataTypeName(t);
  }
}

TEST(Float8, KnownValues) {
  EXPECT_EQ(Float8ToFloat(0x7E, DataType::kFloat8E4M3FN), 448.0f);
  EXPECT_EQ(Float8ToFloat(0x7F, DataType::kFloat8E4M3FNUZ), 240.0f);
  EXPECT_EQ(Float8ToFloat(0x7B, DataType::kFloat8E5M2), 57344.0f);
  EXPECT_EQ(Float8ToFloat(0x7F, DataType::kFloat8E5M2FNUZ), 57344.0f);
  EXPECT_EQ(Float8ToFloat(0x7C, DataType::kFloat8E5M2), kInf);
  EXPECT_EQ(Float8ToFloat(0x01, DataType::kFloat8E4M3FN), std::ldexp(1.0f, -9));
  EXPECT_EQ(Float8ToFloat(0x01, DataType::kFloat8E5M2FNUZ), std::ldexp(1.0f, -17));
  EXPECT_EQ(Float8ToFloat(0x38, DataType::kFloat8E4M3FN), 1.0f);
  EXPECT_EQ(Float8ToFloat(0xB8, DataType::kFloat8E4M3FN), -1.0f);
  EXPECT_TRUE(std::isnan(Float8ToFloat(0x80, DataType::kFloat8E5M2FNUZ)));
}

TEST(Float8, RoundsHalfToEven) {
  const DataType t = DataType::kFloat8E4M3FN;
  // Between 1 (0x38) and 1.125 (0x39): the tie goes to the even mantissa.
  EXPECT_EQ(FloatToFloat8(1.0625f, t, true), 0x38);
  EXPECT_EQ(FloatToFloat8(1.0626f, t, true), 0x39);
  // Between 1.125 (0x39) and 1.25 (0x3A).
  EXPECT_EQ(FloatToFloat8(1.1875f, t, true), 0x3A);
  // Subnormals: 2^-9 steps; 1.5 steps -> 2 steps, 2.5 steps -> 2 steps.
  EXPECT_EQ(FloatToFloat8(1.5f * std::ldexp(1.0f, -9), t, true), 0x02);
  EXPECT_EQ(FloatToFloat8(2.5f * std::ldexp(1.0f, -9), t, true), 0x02);
  EXPECT_EQ(FloatToFloat8(0.5f * std::ldexp(1.0f, -9), t, true), 0x00);
  EXPECT_EQ(FloatToFloat8(-0.5f * std::ldexp(1.0f, -9), t, true), 0x80);  // -0
  EXPECT_EQ(FloatToFloat8(-0.5f * std::ldexp(1.0f, -10), DataType::kFloat8E4M3FNUZ, true), 0x00);
  // Rounding up into the next binade: 1.9375 -> 2.
  EXPECT_EQ(FloatToFloat8(1.9375f, t, true), 0x40);
}

TEST(Float8, OutOfRangeFollowsSaturate) {
  const DataType fn = DataType::kFloat8E4M3FN, e5 = DataType::kFloat8E5M2;
  EXPECT_EQ(FloatToFloat8(464.0f, fn, false), 0x7E);  // the tie rounds down to 448
  EXPECT_EQ(FloatToFloat8(465.0f, fn, false), 0x7F);  // NaN
  EXPECT_EQ(FloatToFloat8(465.0f, fn, true), 0x7E);
  EXPECT_EQ(FloatToFloat8(-1e9f, fn, true), 0xFE);
  EXPECT_EQ(FloatToFloat8(kInf, fn, false), 0x7F);
  EXPECT_EQ(FloatToFloat8(-kInf, fn, true), 0xFE);
  EXPECT_EQ(FloatToFloat8(1e9f, e5, false), 0x7C);
  EXPECT_EQ(FloatToFloat8(-1e9f, e5, false), 0xFC);
  EXPECT_EQ(FloatToFloat8(1e9f, e5, true), 0x7B);
  EXPECT_EQ(FloatToFloat8(kInf, DataType::kFloat8E5M2FNUZ, false), 0x80);
  EXPECT_EQ(FloatToFloat8(kInf, DataType::kFloat8E5M2FNUZ, true), 0x7F);
  EXPECT_EQ(FloatToFloat8(-300.0f, DataType::kFloat8E4M3FNUZ, true), 0xFF);
  EXPECT_EQ(FloatToFloat8(kNaN, DataType::kFloat8E4M3FNUZ, true), 0x80);
  EXPECT_EQ(FloatToFloat8(kNaN, e5, true), 0x7F);
}

}  // namespace
}  // namespace inferd::engine

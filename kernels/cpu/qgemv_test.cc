// QgemvRows against the naive formula: int8 and uint8 weights, zero points per column and
// per tensor, K not a multiple of 4, N not a multiple of 16, 1 to 9 rows, on every path this CPU
// has (INFERD_QGEMV_ISA is not needed: both are called directly).
#include "kernels/cpu/qgemv.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace inferd::kernels::cpu {
namespace {

struct Case {
  int64_t rows, k, n;
  bool is_uint8, per_column;
};

void Check(const Case& c, QgemvIsa isa) {
  SCOPED_TRACE(::testing::Message() << "rows " << c.rows << " K " << c.k << " N " << c.n
                                    << (c.is_uint8 ? " uint8" : " int8")
                                    << (c.per_column ? " per column" : " per tensor") << " isa "
                                    << static_cast<int>(isa));
  std::mt19937 rng(static_cast<uint32_t>(c.rows * 131 + c.k * 7 + c.n));
  std::vector<uint8_t> b(c.k * c.n), zp(c.per_column ? c.n : 1);
  std::vector<float> scales(zp.size());
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  for (auto& v : zp) v = static_cast<uint8_t>(rng());
  for (auto& s : scales) s = 0.001f + static_cast<float>(rng() % 1000) * 1e-5f;
  const PackedInt8Weights packed =
      PackInt8Weights(b.data(), c.is_uint8, c.k, c.n, c.n, scales.data(), zp.data(), c.per_column);
  const int64_t lda = packed.k4 + 4;  // rows padded with zeros past K
  std::vector<uint8_t> a(c.rows * lda, 0);
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t i = 0; i < c.k; ++i) a[r * lda + i] = static_cast<uint8_t>(rng());
  }
  const int32_t a_zp = static_cast<int32_t>(rng() % 256);
  const float a_scale = 0.02f;
  const int64_t ldy = c.n + 3;
  std::vector<float> y(c.rows * ldy, -7.0f);
  QgemvRows(isa, a.data(), c.rows, lda, a_zp, a_scale, packed, y.data(), ldy);
  auto weight = [&](int64_t i) {
    return c.is_uint8 ? int64_t{b[i]} : int64_t{static_cast<int8_t>(b[i])};
  };
  auto zero = [&](int64_t col) {
    const uint8_t z = zp[c.per_column ? col : 0];
    return c.is_uint8 ? int64_t{z} : int64_t{static_cast<int8_t>(z)};
  };
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t col = 0; col < c.n; ++col) {
      int64_t dot = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        dot += (int64_t{a[r * lda + i]} - a_zp) * (weight(i * c.n + col) - zero(col));
      }
      const float expected = (a_scale * scales[c.per_column ? col : 0]) * static_cast<float>(dot);
      ASSERT_EQ(y[r * ldy + col], expected) << "row " << r << " column " << col;
    }
    for (int64_t col = c.n; col < ldy; ++col) ASSERT_EQ(y[r * ldy + col], -7.0f);  // untouched
  }
}

TEST(QgemvTest, MatchesTheFormula) {
  const Case cases[] = {
      {1, 256, 1024, false, false}, {1, 13, 7, false, true},  {2, 80, 33, true, false},
      {3, 100, 48, true, true},     {4, 64, 17, false, true}, {5, 31, 200, true, false},
      {9, 512, 130, false, false},  {1, 1, 1, true, true},    {6, 257, 129, false, true},
  };
  std::vector<QgemvIsa> isas = {QgemvIsa::kPortable};
  if (BestQgemvIsa() != QgemvIsa::kPortable) isas.push_back(BestQgemvIsa());
  for (QgemvIsa isa : isas) {
    for (const Case& c : cases) Check(c, isa);
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

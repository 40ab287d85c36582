// com.microsoft MatMulNBits against a naive dequantize-then-multiply reference: both paths
// (M <= 4 on the fly, larger M through dequantized panels and sgemm), block sizes 16..256, K not
// a multiple of the block, zero points absent / packed uint8 / float, bias, threads, and the
// refusals (bits, g_idx, shapes, types). accuracy_level 4 (any M: A quantized to int8 per
// block, integer dot products) against a reference written from that scheme, on every dot-product
// path this CPU has (INFERD_NBITS_ISA picks one).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

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

enum class Zp { kNone, kPacked, kFloat };

struct Case {
  int64_t m, k, n, block;
  Zp zp;
  bool bias;
};

// Random quantized weights and their reference product.
struct Weights {
  std::vector<uint8_t> b, zp_packed;
  std::vector<float> scales, zp_float, bias;
  std::vector<float> dense;  // [N, K] dequantized
};

Weights MakeWeights(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t blocks = (c.k + c.block - 1) / c.block, blob = c.block / 2;
  Weights w;
  w.b.resize(c.n * blocks * blob);
  for (auto& v : w.b) v = static_cast<uint8_t>(rng() & 0xFF);
  w.scales = RandomFloats(c.n * blocks, seed + 1, 0.01f, 0.2f);
  const int64_t zp_row = (blocks + 1) / 2;
  w.zp_packed.resize(c.n * zp_row);
  for (auto& v : w.zp_packed) v = static_cast<uint8_t>(rng() & 0xFF);
  w.zp_float = RandomFloats(c.n * blocks, seed + 2, 0.0f, 15.0f);
  w.bias = RandomFloats(c.n, seed + 3);
  w.dense.resize(c.n * c.k);
  for (int64_t col = 0; col < c.n; ++col) {
    for (int64_t k = 0; k < c.k; ++k) {
      const int64_t blk = k / c.block, j = k % c.block;
      const uint8_t byte = w.b[(col * blocks + blk) * blob + j / 2];
      const float q = static_cast<float>((j & 1) ? (byte >> 4) : (byte & 0x0F));
      float z = 8.0f;
      if (c.zp == Zp::kPacked) {
        const uint8_t zb = w.zp_packed[col * zp_row + blk / 2];
        z = static_cast<float>((blk & 1) ? (zb >> 4) : (zb & 0x0F));
      } else if (c.zp == Zp::kFloat) {
        z = w.zp_float[col * blocks + blk];
      }
      w.dense[col * c.k + k] = (q - z) * w.scales[col * blocks + blk];
    }
  }
  return w;
}

// `bits` and `block_attr` override the attributes (the refusal tests).
KernelTester MakeTester(const Case& c, const Weights& w, const std::vector<float>& a,
                        int64_t bits = 4, int64_t block_attr = 0, int64_t level = 0,
                        bool constant_b = true) {
  const int64_t blocks = (c.k + c.block - 1) / c.block;
  KernelTester t("MatMulNBits", 1, "com.microsoft");
  t.Attr("K", c.k).Attr("N", c.n).Attr("bits", bits);
  t.Attr("block_size", block_attr > 0 ? block_attr : c.block);
  t.Attr("accuracy_level", level);
  t.Input<float>({c.m, c.k}, a)
      .Input<uint8_t>({c.n, blocks, c.block / 2}, w.b, constant_b)
      .Input<float>({c.n * blocks}, w.scales, true);
  if (c.zp == Zp::kPacked) {
    t.Input<uint8_t>({c.n * ((blocks + 1) / 2)}, w.zp_packed, true);
  } else if (c.zp == Zp::kFloat) {
    t.Input<float>({c.n * blocks}, w.zp_float, true);
  } else if (c.bias) {
    t.AbsentInput();
  }
  if (c.bias) t.AbsentInput().Input<float>({c.n}, w.bias, true);
  t.Outputs(1);
  return t;
}

TEST(MatMulNBitsTest, MatchesDequantizedReference) {
  const Case cases[] = {
      {1, 64, 8, 16, Zp::kNone, false},
      {1, 4096 / 16, 33, 32, Zp::kPacked, true},
      {1, 100, 7, 32, Zp::kPacked, false},
      {3, 257, 19, 64, Zp::kFloat, true},
      {4, 300, 5, 128, Zp::kNone, true},
      {1, 512, 16, 256, Zp::kPacked, false},
      {5, 96, 12, 16, Zp::kPacked, true},
      {17, 333, 150, 32, Zp::kFloat, false},
      {9, 256, 260, 128, Zp::kNone, true},
      {2, 31, 3, 16, Zp::kPacked, false},
      // K and block multiples of 32: the AVX-512 decode form where the CPU has it (a partial
      // last block, each row count, 4 columns at a time and the remainder).
      {2, 96, 13, 64, Zp::kNone, true},
      {3, 160, 9, 32, Zp::kPacked, false},
      {4, 256, 10, 128, Zp::kPacked, true},
      {4, 192, 7, 64, Zp::kFloat, false},
      {1, 224, 70, 64, Zp::kNone, false},
  };
  // The default forms, then the portable decode form (INFERD_NBITS_ISA=avx2) on every case.
  for (const char* isa : {"", "avx2"}) {
    if (*isa != 0) setenv("INFERD_NBITS_ISA", isa, 1);
    uint32_t seed = 1;
    for (const Case& c : cases) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << "isa '" << isa << "' M=" << c.m << " K=" << c.k << " N=" << c.n << " block="
                     << c.block << " zp=" << static_cast<int>(c.zp) << " threads=" << threads);
        const Weights w = MakeWeights(c, seed);
        const auto a = RandomFloats(c.m * c.k, seed + 10);
        ++seed;
        std::vector<float> expected(c.m * c.n);
        for (int64_t r = 0; r < c.m; ++r) {
          for (int64_t col = 0; col < c.n; ++col) {
            double s = c.bias ? w.bias[col] : 0.0;
            for (int64_t k = 0; k < c.k; ++k) s += double{a[r * c.k + k]} * w.dense[col * c.k + k];
            expected[r * c.n + col] = static_cast<float>(s);
          }
        }
        KernelTester t = MakeTester(c, w, a, 4, 0, /*level=*/0);
        t.Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ((*out)[0].shape(), (Shape{c.m, c.n}));
        ExpectNear(Values<float>((*out)[0]), expected, 1e-3f);
      }
    }
  }
  unsetenv("INFERD_NBITS_ISA");
}

TEST(MatMulNBitsTest, BatchedLeadingDims) {
  const Case c{6, 64, 10, 32, Zp::kPacked, false};
  const Weights w = MakeWeights(c, 77);
  const auto a = RandomFloats(c.m * c.k, 78);
  KernelTester flat = MakeTester(c, w, a);
  auto expected = flat.Run(CpuRegistry());
  ASSERT_TRUE(expected.ok()) << expected.status();
  const int64_t blocks = 2;
  KernelTester t("MatMulNBits", 1, "com.microsoft");
  t.Attr("K", c.k).Attr("N", c.n).Attr("block_size", c.block);
  t.Input<float>({2, 3, c.k}, a)
      .Input<uint8_t>({c.n, blocks, c.block / 2}, w.b, true)
      .Input<float>({c.n, blocks}, w.scales, true)
      .Input<uint8_t>({c.n, 1}, w.zp_packed, true)
      .Outputs(1);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, c.n}));
  ExpectNear(Values<float>((*out)[0]), Values<float>((*expected)[0]), 1e-5f);
}

TEST(MatMulNBitsTest, Refusals) {
  const Case c{1, 64, 4, 32, Zp::kNone, false};
  const Weights w = MakeWeights(c, 5);
  const auto a = RandomFloats(c.k, 6);
  {
    KernelTester t = MakeTester(c, w, a, /*bits=*/8);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("bits=8"), std::string::npos) << out.status();
  }
  {
    KernelTester t = MakeTester(c, w, a, 4, /*block_attr=*/24);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
  }
  {
    KernelTester t("MatMulNBits", 1, "com.microsoft");
    t.Attr("K", c.k).Attr("N", c.n).Attr("block_size", c.block);
    t.Input<float>({1, c.k}, a)
        .Input<uint8_t>({c.n, 2, 16}, w.b, true)
        .Input<float>({c.n * 2}, w.scales, true)
        .AbsentInput()
        .Input<int32_t>({c.k}, std::vector<int32_t>(c.k, 0), true)
        .Outputs(1);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("g_idx"), std::string::npos) << out.status();
  }
  {  // A's last dim is not K.
    KernelTester t("MatMulNBits", 1, "com.microsoft");
    t.Attr("K", c.k).Attr("N", c.n).Attr("block_size", c.block);
    t.Input<float>({1, 63}, std::vector<float>(63, 1.0f))
        .Input<uint8_t>({c.n, 2, 16}, w.b, true)
        .Input<float>({c.n * 2}, w.scales, true)
        .Outputs(1);
    auto out = t.Run(CpuRegistry());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("K=64"), std::string::npos) << out.status();
  }
  {  // B of the wrong shape, scales of the wrong count, missing K.
    KernelTester t("MatMulNBits", 1, "com.microsoft");
    t.Attr("K", c.k).Attr("N", c.n).Attr("block_size", c.block);
    t.Input<float>({1, c.k}, a)
        .Input<uint8_t>({c.n, 1, 32}, w.b, true)
        .Input<float>({c.n * 2}, w.scales, true)
        .Outputs(1);
    EXPECT_FALSE(t.Run(CpuRegistry()).ok());
    KernelTester s("MatMulNBits", 1, "com.microsoft");
    s.Attr("K", c.k).Attr("N", c.n).Attr("block_size", c.block);
    s.Input<float>({1, c.k}, a)
        .Input<uint8_t>({c.n, 2, 16}, w.b, true)
        .Input<float>({c.n}, std::vector<float>(c.n, 1.0f), true)
        .Outputs(1);
    EXPECT_FALSE(s.Run(CpuRegistry()).ok());
    KernelTester u("MatMulNBits", 1, "com.microsoft");
    u.Attr("N", c.n).Attr("block_size", c.block).Input<float>({1, c.k}, a).Outputs(1);
    EXPECT_FALSE(u.Run(CpuRegistry()).ok());
  }
}

// The level-4 scheme, written out: per row and block of K, scale = max|a| / 127 and
// q = round-half-even(a * 127 / max|a|); per column and block an exact int32 sum of q * (w - z)
// (w the raw 4-bit value; a float zero point is applied as z * sum(q)), times a_scale * b_scale,
// summed in double.
std::vector<float> Int8Reference(const Case& c, const Weights& w, const std::vector<float>& a) {
  const int64_t blocks = (c.k + c.block - 1) / c.block, blob = c.block / 2;
  const int64_t zp_row = (blocks + 1) / 2;
  std::vector<float> out(c.m * c.n);
  for (int64_t r = 0; r < c.m; ++r) {
    for (int64_t col = 0; col < c.n; ++col) {
      double total = c.bias ? w.bias[col] : 0.0;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t k0 = blk * c.block, len = std::min(c.block, c.k - k0);
        float amax = 0;
        for (int64_t j = 0; j < len; ++j) amax = std::max(amax, std::fabs(a[r * c.k + k0 + j]));
        const float a_scale = amax / 127.0f, inv = amax == 0 ? 0.0f : 127.0f / amax;
        int64_t dot = 0, qsum = 0;
        for (int64_t j = 0; j < len; ++j) {
          const int64_t qa = std::lrint(a[r * c.k + k0 + j] * inv);  // ties to even
          const uint8_t byte = w.b[(col * blocks + blk) * blob + j / 2];
          dot += qa * ((j & 1) ? (byte >> 4) : (byte & 0x0F));
          qsum += qa;
        }
        double z = 8.0;
        if (c.zp == Zp::kPacked) {
          const uint8_t zb = w.zp_packed[col * zp_row + blk / 2];
          z = (blk & 1) ? (zb >> 4) : (zb & 0x0F);
        } else if (c.zp == Zp::kFloat) {
          z = w.zp_float[col * blocks + blk];
        }
        const double b_scale = w.scales[col * blocks + blk];
        total += double{a_scale} * b_scale * (static_cast<double>(dot) - z * qsum);
      }
      out[r * c.n + col] = static_cast<float>(total);
    }
  }
  return out;
}

bool CpuHas(const std::string& isa) {
  if (isa == "avxvnni") return __builtin_cpu_supports("avxvnni");
  if (isa == "avx512vnni") {
    return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw");
  }
  return isa == "scalar" || __builtin_cpu_supports("avx2");
}

TEST(MatMulNBitsTest, Level4MatchesInt8Scheme) {
  const Case cases[] = {
      {1, 512, 37, 32, Zp::kNone, false},
      {1, 300, 9, 32, Zp::kPacked, true},
      {2, 257, 11, 64, Zp::kPacked, false},
      {3, 200, 6, 128, Zp::kPacked, false},
      {4, 96, 13, 32, Zp::kNone, true},
      {4, 100, 5, 16, Zp::kPacked, false},
      {1, 64, 8, 16, Zp::kNone, true},
      {2, 1024, 7, 256, Zp::kPacked, true},
      {3, 45, 10, 32, Zp::kNone, true},
      // Prompts: rows in groups of 4 (a partial last group), each group over the column groups.
      {9, 256, 21, 32, Zp::kPacked, true},
      {17, 160, 40, 32, Zp::kNone, false},
      {5, 100, 9, 16, Zp::kPacked, false},
  };
  int checked_paths = 0;
  for (const char* isa : {"scalar", "avx2", "avxvnni", "avx512vnni"}) {
    if (!CpuHas(isa)) {
      std::printf("[ skipping ] INFERD_NBITS_ISA=%s: not on this CPU\n", isa);
      continue;
    }
    ++checked_paths;
    setenv("INFERD_NBITS_ISA", isa, 1);
    uint32_t seed = 100;
    for (const Case& c : cases) {
      const Weights w = MakeWeights(c, seed);
      auto a = RandomFloats(c.m * c.k, seed + 10, -2.0f, 2.0f);
      if (c.k > 40) std::fill(a.begin() + 8, a.begin() + 40, 0.0f);  // an all-zero block
      ++seed;
      const std::vector<float> expected = Int8Reference(c, w, a);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << isa << " M=" << c.m << " K=" << c.k << " N=" << c.n << " block=" << c.block
                     << " zp=" << static_cast<int>(c.zp) << " threads=" << threads);
        KernelTester t = MakeTester(c, w, a, 4, 0, /*level=*/4);
        t.Threads(threads);
        auto out = t.Run(CpuRegistry());
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ((*out)[0].shape(), (Shape{c.m, c.n}));
        ExpectNear(Values<float>((*out)[0]), expected, 2e-4f);
      }
    }
  }
  unsetenv("INFERD_NBITS_ISA");
  EXPECT_GE(checked_paths, 1);
}

// The int8 reference is far enough from the float one that the test above tells them apart,
// and level 4 keeps the float path with B not constant (no prepacking) and with float zero
// points (as ONNX Runtime does).
TEST(MatMulNBitsTest, Level4DiffersFromFloatAndNeedsConstantB) {
  const Case c{1, 256, 16, 32, Zp::kPacked, false};
  const Weights w = MakeWeights(c, 9);
  const auto a = RandomFloats(c.m * c.k, 19, -2.0f, 2.0f);
  const std::vector<float> int8 = Int8Reference(c, w, a);
  KernelTester f = MakeTester(c, w, a, 4, 0, /*level=*/0);
  auto flt = f.Run(CpuRegistry());
  ASSERT_TRUE(flt.ok()) << flt.status();
  const std::vector<float> fv = Values<float>((*flt)[0]);
  float max_diff = 0;
  for (size_t i = 0; i < fv.size(); ++i) max_diff = std::max(max_diff, std::fabs(fv[i] - int8[i]));
  EXPECT_GT(max_diff, 1e-3f);
  KernelTester v = MakeTester(c, w, a, 4, 0, /*level=*/4, /*constant_b=*/false);
  auto var = v.Run(CpuRegistry());
  ASSERT_TRUE(var.ok()) << var.status();
  ExpectNear(Values<float>((*var)[0]), fv, 1e-6f);
  const Case cf{2, 256, 16, 32, Zp::kFloat, true};
  const Weights wf = MakeWeights(cf, 21);
  const auto af = RandomFloats(cf.m * cf.k, 22, -2.0f, 2.0f);
  KernelTester f0 = MakeTester(cf, wf, af, 4, 0, /*level=*/0);
  KernelTester f4 = MakeTester(cf, wf, af, 4, 0, /*level=*/4);
  auto r0 = f0.Run(CpuRegistry());
  auto r4 = f4.Run(CpuRegistry());
  ASSERT_TRUE(r0.ok() && r4.ok());
  ExpectNear(Values<float>((*r4)[0]), Values<float>((*r0)[0]), 1e-6f);
}

}  // namespace
}  // namespace inferd::kernels::cpu

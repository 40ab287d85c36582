// DepthToSpace (DCR, CRD; DCR before opset 11) and SpaceToDepth against the ONNX spec's
// reshape-transpose-reshape definitions written as index loops; round trips, element types,
// threads, errors naming the node.
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

template <typename T>
std::vector<T> Iota(int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(i % 251);
  return v;
}

template <typename T>
void CheckDepthToSpace(const Shape& s, int64_t b, const std::string& mode, int opset = 13,
                       int threads = 1) {
  SCOPED_TRACE(s.ToString() + " " + mode);
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3], co = c / (b * b);
  const std::vector<T> x = Iota<T>(s.NumElements());
  std::vector<T> expected;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < co; ++oc)
      for (int64_t oy = 0; oy < h * b; ++oy)
        for (int64_t ox = 0; ox < w * b; ++ox) {
          const int64_t i = oy % b, j = ox % b;
          const int64_t ic = mode == "DCR" ? (i * b + j) * co + oc : oc * b * b + i * b + j;
          expected.push_back(x[((in * c + ic) * h + oy / b) * w + ox / b]);
        }
  KernelTester t("DepthToSpace", opset);
  t.Attr("blocksize", b).template Input<T>(s, x).Threads(threads);
  if (opset >= 11) t.Attr("mode", mode);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{n, co, h * b, w * b}));
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

template <typename T>
void CheckSpaceToDepth(const Shape& s, int64_t b, int threads = 1) {
  SCOPED_TRACE(s.ToString());
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  const std::vector<T> x = Iota<T>(s.NumElements());
  std::vector<T> expected;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t oc = 0; oc < c * b * b; ++oc)
      for (int64_t oy = 0; oy < h / b; ++oy)
        for (int64_t ox = 0; ox < w / b; ++ox) {
          const int64_t i = oc / (b * c), j = oc / c % b, ic = oc % c;
          expected.push_back(x[((in * c + ic) * h + oy * b + i) * w + ox * b + j]);
        }
  KernelTester t("SpaceToDepth", 13);
  t.Attr("blocksize", b).template Input<T>(s, x).Threads(threads);
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{n, c * b * b, h / b, w / b}));
  EXPECT_EQ(Values<T>((*out)[0]), expected);
}

TEST(DepthToSpaceTest, Modes) {
  for (const char* mode : {"DCR", "CRD"}) {
    CheckDepthToSpace<float>({1, 8, 2, 3}, 2, mode);
    CheckDepthToSpace<float>({2, 18, 3, 2}, 3, mode);
    CheckDepthToSpace<int64_t>({1, 4, 1, 1}, 2, mode);
    CheckDepthToSpace<uint8_t>({2, 8, 4, 5}, 1, mode);
    CheckDepthToSpace<float>({4, 64, 30, 30}, 4, mode, 13, 2);
  }
  CheckDepthToSpace<float>({1, 8, 2, 3}, 2, "DCR", 1);
}

TEST(SpaceToDepthTest, Blocks) {
  CheckSpaceToDepth<float>({1, 2, 4, 6}, 2);
  CheckSpaceToDepth<float>({2, 3, 6, 3}, 3);
  CheckSpaceToDepth<int32_t>({1, 1, 2, 2}, 2);
  CheckSpaceToDepth<float>({4, 16, 120, 120}, 4, 2);
}

TEST(DepthSpaceTest, Errors) {
  KernelTester t("DepthToSpace", 13);
  t.Attr("blocksize", int64_t{2}).Input<float>({1, 6, 2, 2}, std::vector<float>(24));
  auto out = t.Run(CpuRegistry());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "node 'test_DepthToSpace' (DepthToSpace): channels 6 are not divisible by "
            "blocksize^2 = 4");
  KernelTester s("SpaceToDepth", 13);
  s.Attr("blocksize", int64_t{2}).Input<float>({1, 1, 3, 2}, std::vector<float>(6));
  EXPECT_FALSE(s.Run(CpuRegistry()).ok());
  KernelTester r("SpaceToDepth", 13);
  r.Attr("blocksize", int64_t{2}).Input<float>({4, 4}, std::vector<float>(16));
  EXPECT_FALSE(r.Run(CpuRegistry()).ok());
  KernelTester m("DepthToSpace", 13);
  m.Attr("blocksize", int64_t{2})
      .Attr("mode", std::string("XYZ"))
      .Input<float>({1, 4, 1, 1}, std::vector<float>(4));
  EXPECT_FALSE(m.Run(CpuRegistry()).ok());
  KernelTester b("DepthToSpace", 13);
  b.Input<float>({1, 4, 1, 1}, std::vector<float>(4));
  EXPECT_FALSE(b.Run(CpuRegistry()).ok());  // blocksize is required
}

}  // namespace
}  // namespace inferd::kernels::cpu

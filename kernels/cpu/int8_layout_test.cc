// The kernels quantized CNNs run between their convolutions once QDQ groups are fused: the
// channels-last com.inferd QLinearConv (engine/int8_channels_last.h) against the plain
// QLinearConv, and the vector loops of quant_vec.h (QuantizeLinear, DequantizeLinear,
// same-shape QLinearAdd) against their scalar definitions, tails included.
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/domain.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::Values;
using testing::CpuRegistry;

constexpr int64_t kC = 16, kM = 32, kH = 6, kW = 5;

// [1, C, H, W] <-> [1, H, W, C] bytes.
template <typename T>
std::vector<T> ToChannelsLast(const std::vector<T>& x, int64_t c, int64_t hw) {
  std::vector<T> y(x.size());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t p = 0; p < hw; ++p) y[p * c + ch] = x[ch * hw + p];
  return y;
}

// QLinearConv 3x3, pad 1, x uint8 [1, 16, 6, 5] (given in `layout` order), w int8 [32, 16, 3, 3]
// per-channel scales, bias; y uint8.
absl::StatusOr<std::vector<uint8_t>> RunConv(const std::vector<uint8_t>& x, bool channels_last,
                                             int threads) {
  std::vector<int8_t> w(kM * kC * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 37 % 41) - 20);
  std::vector<float> ws(kM);
  std::vector<int32_t> bias(kM);
  for (int64_t m = 0; m < kM; ++m) {
    ws[m] = 0.01f + 0.001f * static_cast<float>(m);
    bias[m] = static_cast<int32_t>(m * 13) - 200;
  }
  KernelTester t("QLinearConv", channels_last ? 1 : 10,
                 channels_last ? engine::kInferdDomain : engine::kOnnxDomain);
  t.Attr("kernel_shape", std::vector<int64_t>{3, 3})
      .Attr("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Threads(threads);
  if (channels_last) {
    t.Attr("channels_last_input", int64_t{1}).Attr("channels_last_output", int64_t{1});
  }
  t.Input<uint8_t>({1, kC, kH, kW}, x)
      .Input<float>({}, {0.05f}, true)
      .Input<uint8_t>({}, {7}, true)
      .Input<int8_t>({kM, kC, 3, 3}, w, true)
      .Input<float>({kM}, ws, true)
      .Input<int8_t>({kM}, std::vector<int8_t>(kM, 0), true)
      .Input<float>({}, {0.5f}, true)
      .Input<uint8_t>({}, {100}, true)
      .Input<int32_t>({kM}, bias, true);
  auto out = t.Run(CpuRegistry());
  if (!out.ok()) return out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, kM, kH, kW}));
  return Values<uint8_t>((*out)[0]);
}

TEST(Int8LayoutTest, ChannelsLastQLinearConvIsThePlainOneTransposed) {
  if (!CpuRegistry().HasOp(engine::kInferdDomain, "QLinearConv")) {
    GTEST_SKIP() << "no oneDNN int8 convolution on this CPU";
  }
  std::vector<uint8_t> x(kC * kH * kW);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 29 % 251);
  for (int threads : {1, 2}) {
    auto plain = RunConv(x, false, threads);
    ASSERT_TRUE(plain.ok()) << plain.status();
    auto last = RunConv(ToChannelsLast(x, kC, kH * kW), true, threads);
    ASSERT_TRUE(last.ok()) << last.status();
    EXPECT_EQ(*last, ToChannelsLast(*plain, kM, kH * kW)) << threads << " threads";
  }
}

TEST(Int8LayoutTest, ChannelsLastMaxPoolIsThePlainOneTransposed) {
  std::vector<uint8_t> x(kC * kH * kW);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 53 % 256);
  std::vector<uint8_t> y[2];
  for (bool last : {false, true}) {
    KernelTester t("MaxPool", 12);
    t.Attr("kernel_shape", std::vector<int64_t>{3, 3})
        .Attr("strides", std::vector<int64_t>{2, 2})
        .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    if (last) t.Attr("channels_last", int64_t{1});
    t.Input<uint8_t>({1, kC, kH, kW}, last ? ToChannelsLast(x, kC, kH * kW) : x);
    auto out = t.Run(CpuRegistry());
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), (Shape{1, kC, 3, 3}));
    y[last] = Values<uint8_t>((*out)[0]);
  }
  EXPECT_EQ(y[1], ToChannelsLast(y[0], kC, 9));
}

TEST(Int8LayoutTest, VectorQuantizeAndDequantizeMatchTheirDefinitions) {
  // 37 values (four vectors and a tail) over and past the int8 range, halves included.
  std::vector<float> x;
  for (int i = 0; i < 37; ++i) x.push_back(-40.0f + 2.25f * static_cast<float>(i));
  const float scale = 0.25f;
  KernelTester q("QuantizeLinear", 13);
  q.Input<float>({37}, x).Input<float>({}, {scale}).Input<int8_t>({}, {-3});
  auto out = q.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int8_t> want;
  for (float v : x) {
    want.push_back(
        static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, std::nearbyint(v / scale) - 3.0f))));
  }
  const std::vector<int8_t> got = Values<int8_t>((*out)[0]);
  EXPECT_EQ(got, want);

  KernelTester d("DequantizeLinear", 13);
  d.Input<int8_t>({37}, got).Input<float>({}, {scale}).Input<int8_t>({}, {-3});
  out = d.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> back = Values<float>((*out)[0]);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(back[i], (got[i] + 3) * scale) << i;
}

TEST(Int8LayoutTest, SameShapeQLinearAddMatchesItsDefinition) {
  std::vector<uint8_t> a(27), b(27);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint8_t>(i * 9);
    b[i] = static_cast<uint8_t>(255 - i * 7);
  }
  KernelTester t("QLinearAdd", 1, "com.microsoft");
  t.Input<uint8_t>({3, 9}, a)
      .Input<float>({}, {0.5f})
      .Input<uint8_t>({}, {10})
      .Input<uint8_t>({3, 9}, b)
      .Input<float>({}, {0.25f})
      .Input<uint8_t>({}, {128})
      .Input<float>({}, {0.75f})
      .Input<uint8_t>({}, {20});
  auto out = t.Run(CpuRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint8_t> want;
  for (size_t i = 0; i < a.size(); ++i) {
    const float v = ((a[i] - 10) * 0.5f + (b[i] - 128) * 0.25f) / 0.75f;
    want.push_back(
        static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, std::nearbyint(v) + 20.0f))));
  }
  EXPECT_EQ(Values<uint8_t>((*out)[0]), want);
}

}  // namespace
}  // namespace inferd::kernels::cpu

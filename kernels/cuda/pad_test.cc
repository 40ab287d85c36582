// Pad on CUDA against the CPU kernel, byte for byte, on every case of testing/pad_cases.h (each
// mode, cropping, wide reflects and wraps, axes, opset 2 attributes) in float32, int64 and uint8
// (elements of 4, 8 and 1 bytes); pads, constant_value and axes stay on the host (the harness
// binds KernelDef::host_inputs there). Skips without a GPU.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/testing/cuda_device.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"
#include "kernels/cuda/testing/pad_cases.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;
using testing::PadCase;
using testing::RunOnCpuAndCuda;

template <typename T>
void ExpectSamePad(const PadCase& c, uint32_t seed, T value) {
  std::mt19937 rng(seed);
  std::vector<T> x(c.x.NumElements());
  for (T& v : x) v = static_cast<T>(static_cast<int64_t>(rng() % 200) - 100);
  const TestTensor in = TestTensor::Of<T>(c.x, x);
  const TestTensor pads = TestTensor::Of<int64_t>({static_cast<int64_t>(c.pads.size())}, c.pads);
  const TestTensor constant = TestTensor::Of<T>({}, {value});
  const TestTensor axes = TestTensor::Of<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes);
  KernelTester t("Pad", c.opset);
  t.Attr("mode", c.mode).Input(in);
  std::vector<const TestTensor*> inputs = {&in};
  if (c.opset >= 11) {
    t.Input(pads).Input(constant);
    inputs.push_back(&pads);
    inputs.push_back(&constant);
    if (!c.axes.empty()) {
      t.Input(axes);
      inputs.push_back(&axes);
    }
  } else {
    t.Attr("pads", c.pads).Attr("value", static_cast<float>(value));
  }
  absl::StatusOr<testing::CpuAndCuda> out = RunOnCpuAndCuda(t, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->cuda[0].shape, out->cpu[0].shape);
  EXPECT_EQ(out->cuda[0].bytes, out->cpu[0].bytes);
}

TEST(CudaPadTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  uint32_t next = seed;
  for (const PadCase& c : testing::PadCases()) {
    SCOPED_TRACE(absl::StrCat(c.x.ToString(), " pads [", absl::StrJoin(c.pads, ","), "] ", c.mode,
                              " opset ", c.opset));
    ExpectSamePad<float>(c, next++, -2.5f);
    ExpectSamePad<int64_t>(c, next++, int64_t{-3});
    ExpectSamePad<uint8_t>(c, next++, uint8_t{7});
  }
}

// A large NCHW pad (a 3x3 convolution's input), so that the grid-stride loop wraps.
TEST(CudaPadTest, LargeInput) {
  SKIP_WITHOUT_CUDA_DEVICE();
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  for (const char* mode : {"constant", "reflect"}) {
    ExpectSamePad<float>({{8, 64, 128, 130}, {0, 0, 1, 1, 0, 0, 1, 1}, mode}, seed, 0.0f);
  }
}

}  // namespace
}  // namespace inferd::kernels::cuda

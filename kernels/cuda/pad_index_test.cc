// Pad's index arithmetic (MakePadIndex and PadSource, the inline function each thread of pad.cu
// runs, here on the host) against the CPU Pad kernel on the cases pad_test runs on the GPU: the
// modes, cropping and merging are checked without a GPU; pad_test adds the launch.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cuda/copy_index.h"
#include "kernels/cuda/testing/pad_cases.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using testing::PadCase;

PadFill FillOf(const std::string& mode) {
  if (mode == "edge") return PadFill::kEdge;
  if (mode == "reflect") return PadFill::kReflect;
  if (mode == "wrap") return PadFill::kWrap;
  return PadFill::kConstant;
}

// The case's pads for every dim (opset 18's axes expanded).
std::vector<int64_t> FullPads(const PadCase& c) {
  if (c.axes.empty()) return c.pads;
  const int64_t rank = static_cast<int64_t>(c.x.rank());
  std::vector<int64_t> full(2 * rank, 0);
  const size_t n = c.axes.size();
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = c.axes[i] < 0 ? c.axes[i] + rank : c.axes[i];
    full[a] = c.pads[i];
    full[rank + a] = c.pads[n + i];
  }
  return full;
}

TEST(PadIndexTest, MatchesTheCpuKernel) {
  constexpr float kValue = -7.5f;
  for (const PadCase& c : testing::PadCases()) {
    SCOPED_TRACE(absl::StrCat(c.x.ToString(), " pads [", absl::StrJoin(c.pads, ","), "] ", c.mode,
                              " opset ", c.opset));
    std::vector<float> x(c.x.NumElements());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
    KernelTester t("Pad", c.opset);
    t.Attr("mode", c.mode).Input<float>(c.x, x);
    if (c.opset >= 11) {
      t.Input<int64_t>({static_cast<int64_t>(c.pads.size())}, c.pads);
      t.Input<float>({}, {kValue});
      if (!c.axes.empty()) t.Input<int64_t>({static_cast<int64_t>(c.axes.size())}, c.axes);
    } else {
      t.Attr("pads", c.pads).Attr("value", kValue);
    }
    absl::StatusOr<std::vector<engine::Tensor>> cpu = t.Run(cpu::testing::CpuRegistry());
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    const engine::Tensor& want = (*cpu)[0];
    absl::StatusOr<PadIndex> index = MakePadIndex(c.x, FullPads(c), want.shape(), FillOf(c.mode));
    ASSERT_TRUE(index.ok()) << index.status();
    ASSERT_EQ(index->count, want.NumElements());
    EXPECT_LE(index->rank, kMaxPadRank);
    const float* w = want.data<float>();
    for (int64_t i = 0; i < index->count; ++i) {
      const int64_t src = PadSource(*index, i);
      ASSERT_LT(src, static_cast<int64_t>(x.size())) << "output " << i;
      ASSERT_EQ(src < 0 ? kValue : x[src], w[i]) << "output " << i;
    }
  }
}

// Neighbouring unpadded dims merge; what stays above kMaxPadRank is UNIMPLEMENTED (the kernel
// then refuses the node at run time).
TEST(PadIndexTest, MergesUnpaddedDims) {
  absl::StatusOr<PadIndex> index = MakePadIndex(
      Shape{2, 3, 4, 5, 6}, {0, 0, 1, 0, 0, 0, 0, 2, 0, 0}, Shape{2, 3, 7, 5, 6}, PadFill::kEdge);
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->rank, 3);
  EXPECT_EQ(index->in_dims[0], 6);
  EXPECT_EQ(index->out_dims[1], 7);
  EXPECT_EQ(index->begin[1], 1);
  EXPECT_EQ(index->in_strides[0], 120);
  EXPECT_EQ(index->in_dims[2], 30);

  const Shape nine{2, 2, 2, 2, 2, 2, 2, 2, 2};
  std::vector<int64_t> pads(18, 0);
  Shape out = nine;
  for (int d = 0; d < 9; ++d) {
    pads[d] = 1;
    out[d] = 3;
  }
  index = MakePadIndex(nine, pads, out, PadFill::kConstant);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace inferd::kernels::cuda

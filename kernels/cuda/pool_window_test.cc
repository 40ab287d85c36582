// The pooling arithmetic of pool.cu (PoolOutput, the same inline function, run here on the host)
// against the CPU kernels on the windows pool_test runs on the GPU: the ONNX semantics (pads,
// ceil_mode, dilations, count_include_pad) are checked without a GPU; pool_test adds the launch.
#include "kernels/cuda/pool_window.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/testing/kernel_tester.h"
#include "gtest/gtest.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/window.h"
#include "kernels/cuda/testing/pool_cases.h"

namespace inferd::kernels::cuda {
namespace {

using engine::testing::KernelTester;
using testing::PoolCase;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// PoolOutput over every output of the node `t` describes, with the geometry pool_kernel.cc uses.
std::vector<float> HostPool(const KernelTester& t, PoolMode mode, const engine::Shape& x,
                            const std::vector<float>& values) {
  const engine::KernelInfo info = t.Info();
  absl::StatusOr<cpu::WindowAttributes> attrs = cpu::WindowAttributes::Read(info);
  EXPECT_TRUE(attrs.ok()) << attrs.status();
  absl::StatusOr<cpu::WindowGeometry> g =
      cpu::ComputeWindow(*attrs, x.dims().subspan(2), attrs->kernel_shape, cpu::NodeLabel(info));
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  const PoolWindow w = ToPoolWindow(*g, x.dims());
  const int64_t count = w.planes * w.out[0] * w.out[1] * w.out[2];
  std::vector<float> y(count);
  for (int64_t i = 0; i < count; ++i) {
    switch (mode) {
      case PoolMode::kMax:
        y[i] = PoolOutput<PoolMode::kMax>(w, values.data(), i);
        break;
      case PoolMode::kAverageExcludePad:
        y[i] = PoolOutput<PoolMode::kAverageExcludePad>(w, values.data(), i);
        break;
      case PoolMode::kAverageIncludePad:
        y[i] = PoolOutput<PoolMode::kAverageIncludePad>(w, values.data(), i);
        break;
    }
  }
  return y;
}

TEST(PoolWindowTest, PoolOutputMatchesTheCpuKernels) {
  std::vector<PoolCase> cases = testing::PoolWindows();
  cases.push_back({"dilations 2", {1, 2, 12, 12}, [](KernelTester& t) {
                     t.Attr("kernel_shape", std::vector<int64_t>{3, 3})
                         .Attr("dilations", std::vector<int64_t>{2, 2})
                         .Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
                   }});
  uint32_t seed = 1;
  for (const PoolCase& c : cases) {
    for (PoolMode mode :
         {PoolMode::kMax, PoolMode::kAverageExcludePad, PoolMode::kAverageIncludePad}) {
      const bool max = mode == PoolMode::kMax;
      SCOPED_TRACE(absl::StrCat(c.label, max ? " MaxPool" : " AveragePool",
                                mode == PoolMode::kAverageIncludePad ? " count_include_pad" : ""));
      const std::vector<float> x = Random(c.x.NumElements(), seed++);
      KernelTester t(max ? "MaxPool" : "AveragePool", 19);
      c.attrs(t);
      if (mode == PoolMode::kAverageIncludePad) t.Attr("count_include_pad", int64_t{1});
      t.Input<float>(c.x, x);
      absl::StatusOr<std::vector<engine::Tensor>> want = t.Run(cpu::testing::CpuRegistry());
      ASSERT_TRUE(want.ok()) << want.status();
      const engine::Tensor& y = (*want)[0];
      const std::vector<float> expected(y.data<float>(), y.data<float>() + y.NumElements());
      cpu::testing::ExpectNear(HostPool(t, mode, c.x, x), expected, max ? 0.0f : 1e-5f);
    }
  }
}

}  // namespace
}  // namespace inferd::kernels::cuda

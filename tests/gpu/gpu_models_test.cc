// Models on a real GPU, through the session exactly as the server runs them (the CUDA runtime and
// kernels of this --config=cuda build): each generated model wholly on cuda:0 (the nodes without
// a CUDA kernel fall back to cpu:0) against the CPU-only run; the 32-layer transformer split by a
// budget between cuda:0 and cpu:0; no cudaMalloc after the first run; and per model the median
// latency on the CPU and on the GPU, recorded in the gtest XML (cpu_ms, gpu_ms) and printed.
// Skips without a CUDA device. Part of tests/gpu/run.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/cuda_device.h"
#include "engine/device_copies.h"
#include "engine/session.h"
#include "engine/test_data_set.h"
#include "engine/testing/runfiles.h"
#include "kernels/build_kernels.h"

namespace inferd {
namespace {

using engine::testing::Runfile;

class GpuModels : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA_DEVICE();
    ASSERT_TRUE(kernels::RegisterBuildKernels(registry_).ok());
    auto sets = engine::ReadTestDataSets(Dir());
    ASSERT_TRUE(sets.ok()) << sets.status();
    data_ = std::move((*sets)[0]);
  }

  std::string Dir() const { return Runfile("tools/models/" + GetParam()); }

  absl::StatusOr<std::unique_ptr<engine::Session>> Load(const partition::PartitionConfig& p) {
    engine::SessionOptions opts;
    opts.partition = p;
    opts.device_runtimes = kernels::BuildDeviceRuntimes();
    return engine::Session::Load(Dir() + "/model.onnx", opts, registry_);
  }

  std::vector<engine::InputTensor> Inputs(const engine::Session& s) const {
    std::vector<engine::InputTensor> inputs;
    for (size_t i = 0; i < data_.inputs.size(); ++i) {
      const engine::NamedData& d = data_.inputs[i];
      inputs.push_back({s.inputs()[i]->name, d.type, d.shape, d.bytes.data(), d.bytes.size()});
    }
    return inputs;
  }

  // Median milliseconds of `runs` runs after one warm-up.
  static double MedianMs(engine::Session& s, const std::vector<engine::InputTensor>& in, int runs) {
    std::vector<double> ms;
    EXPECT_TRUE(s.Run(in).ok());
    for (int i = 0; i < runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      EXPECT_TRUE(s.Run(in).ok());
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }

  // Worst absolute difference of every float32 output of b from a (same shapes).
  static double WorstError(const std::vector<engine::OutputTensor>& a,
                           const std::vector<engine::OutputTensor>& b) {
    double worst = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      EXPECT_EQ(a[i].shape, b[i].shape) << a[i].name;
      if (a[i].type != engine::DataType::kFloat32 || a[i].buffer.size() != b[i].buffer.size()) {
        EXPECT_EQ(a[i].buffer.size(), b[i].buffer.size()) << a[i].name;
        continue;
      }
      const auto* x = static_cast<const float*>(a[i].buffer.data());
      const auto* y = static_cast<const float*>(b[i].buffer.data());
      for (size_t k = 0; k < a[i].buffer.size() / sizeof(float); ++k) {
        worst = std::max(worst, static_cast<double>(std::fabs(x[k] - y[k])));
      }
    }
    return worst;
  }

  static uint64_t CudaMallocs(const engine::Session& s) {
    uint64_t n = 0;
    for (const engine::DeviceArenas& d : s.devices()) {
      if (d.runtime != nullptr) n += d.system->stats().allocations;
    }
    return n;
  }

  engine::KernelRegistry registry_;
  engine::TestDataSet data_;
};

TEST_P(GpuModels, WholeModelOnCuda0MatchesTheCpu) {
  auto cpu = Load({});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  partition::PartitionConfig p;
  p.devices = {{"cuda:0", std::nullopt}, {"cpu:0", std::nullopt}};
  p.name_rules = "cuda:0(/)";  // every node the GPU has a kernel for
  auto gpu = Load(p);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  int on_gpu = 0;
  for (const engine::Node& n : (*gpu)->graph().nodes) on_gpu += n.device == "cuda:0";
  EXPECT_GT(on_gpu, 0);
  const std::vector<engine::InputTensor> in = Inputs(**gpu);
  auto a = (*cpu)->Run(Inputs(**cpu));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = (*gpu)->Run(in);
  ASSERT_TRUE(b.ok()) << b.status();
  const double worst = WorstError(*a, *b);
  for (size_t i = 0; i < b->size(); ++i) {
    EXPECT_TRUE(engine::CompareData(data_.outputs[i], (*b)[i].type, (*b)[i].shape,
                                    (*b)[i].buffer.data(), (*b)[i].buffer.size(), {1e-3, 1e-3})
                    .ok())
        << (*b)[i].name;
  }
  // Device memory comes from the arenas: the runs after the first make no cudaMalloc.
  const uint64_t mallocs = CudaMallocs(**gpu);
  const double gpu_ms = MedianMs(**gpu, in, 20);
  EXPECT_EQ(CudaMallocs(**gpu), mallocs) << "cudaMalloc after the first run";
  const double cpu_ms = MedianMs(**cpu, Inputs(**cpu), 20);
  ::testing::Test::RecordProperty("worst_abs_error", absl::StrCat(worst));
  ::testing::Test::RecordProperty("comparisons", static_cast<int>(b->size()));
  ::testing::Test::RecordProperty("cpu_ms", absl::StrCat(cpu_ms));
  ::testing::Test::RecordProperty("gpu_ms", absl::StrCat(gpu_ms));
  std::printf(
      "%-16s %4d nodes on cuda:0, %d copies + %d outputs back, %llu weight bytes up; "
      "cpu %.3f ms, gpu %.3f ms, worst |cpu - gpu| %.3g\n",
      GetParam().c_str(), on_gpu, (*gpu)->boundary_copies(), (*gpu)->output_copies(),
      static_cast<unsigned long long>((*gpu)->stats().device_weight_bytes), cpu_ms, gpu_ms, worst);
}

INSTANTIATE_TEST_SUITE_P(Generated, GpuModels,
                         ::testing::Values("mlp", "cnn", "cnn_b8", "transformer", "transformer_32",
                                           "decoder_step"));

// The 32-layer transformer split by a budget: cuda:0 takes whole layers up to 300 KiB, cpu:0 the
// rest; outputs as the CPU's, and copies exactly at the cut.
TEST(GpuSplit, Transformer32SplitByBudget) {
  SKIP_WITHOUT_CUDA_DEVICE();
  engine::KernelRegistry registry;
  ASSERT_TRUE(kernels::RegisterBuildKernels(registry).ok());
  const std::string dir = Runfile("tools/models/transformer_32");
  auto sets = engine::ReadTestDataSets(dir);
  ASSERT_TRUE(sets.ok()) << sets.status();
  const engine::TestDataSet& data = (*sets)[0];
  engine::SessionOptions opts;
  opts.device_runtimes = kernels::BuildDeviceRuntimes();
  opts.partition.devices = {{"cuda:0", 300 << 10}, {"cpu:0", std::nullopt}};
  auto s = engine::Session::Load(dir + "/model.onnx", opts, registry);
  ASSERT_TRUE(s.ok()) << s.status();
  std::printf("%s\n", (*s)->partition_report().ToString().c_str());
  int on_gpu = 0;
  for (const engine::Node& n : (*s)->graph().nodes) on_gpu += n.device == "cuda:0";
  EXPECT_GT(on_gpu, 0);
  EXPECT_GT((*s)->boundary_copies(), 0);
  std::vector<engine::InputTensor> in;
  for (size_t i = 0; i < data.inputs.size(); ++i) {
    in.push_back({(*s)->inputs()[i]->name, data.inputs[i].type, data.inputs[i].shape,
                  data.inputs[i].bytes.data(), data.inputs[i].bytes.size()});
  }
  for (int run = 0; run < 3; ++run) {
    auto out = (*s)->Run(in);
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < out->size(); ++i) {
      EXPECT_TRUE(engine::CompareData(data.outputs[i], (*out)[i].type, (*out)[i].shape,
                                      (*out)[i].buffer.data(), (*out)[i].buffer.size(),
                                      {1e-3, 1e-3})
                      .ok());
    }
  }
}

}  // namespace
}  // namespace inferd

// matmul_nbits_bench: microseconds per run of com.microsoft MatMulNBits (4-bit weights, block 32,
// packed zero points) on 4096 x 4096 at M = 1 and 4 (the decode path) and M = 32 and 256 (prompts:
// the dequantize + sgemm path), at accuracy_level 0 (float32) and 4 (int8 A), at 1 and 2 intra-op
// threads, beside the time ONNX Runtime takes on the same shapes when --ort_us gives it (tools:
// kernels/cpu/matmul_nbits_bench_ort.py prints those figures). The kernel is created once and run
// repeatedly through a minimal KernelContext, so the figures are Compute alone. Not a test: prints
// a table.
//
//   bazel run -c opt //kernels/cpu:matmul_nbits_bench
//   /opt/inferd/venv/bin/python kernels/cpu/matmul_nbits_bench_ort.py
#include <cstdio>
#include <random>
#include <vector>

#include "base/flags.h"
#include "engine/kernel.h"
#include "engine/tensor.h"
#include "engine/testing/kernel_tester.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/testing/bench_support.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cpu/testing/reference.h"

namespace inferd::kernels::cpu {
namespace {

using engine::Shape;
using engine::Tensor;
using engine::testing::KernelTester;
using engine::testing::TestTensor;

double Time(int64_t m, int64_t k, int64_t n, int64_t block, int threads, int64_t level) {
  const int64_t blocks = (k + block - 1) / block;
  std::mt19937 rng(7);
  std::vector<uint8_t> b(n * blocks * block / 2), zp(n * ((blocks + 1) / 2));
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  for (auto& v : zp) v = static_cast<uint8_t>(rng());
  const std::vector<TestTensor> inputs = {
      TestTensor::Of<float>({m, k}, testing::RandomFloats(m * k, 1)),
      TestTensor::Of<uint8_t>({n, blocks, block / 2}, b),
      TestTensor::Of<float>({n * blocks}, testing::RandomFloats(n * blocks, 2, 0.01f, 0.1f)),
      TestTensor::Of<uint8_t>({static_cast<int64_t>(zp.size())}, zp)};
  KernelTester spec("MatMulNBits", 1, "com.microsoft");
  spec.Attr("K", k).Attr("N", n).Attr("block_size", block).Attr("bits", int64_t{4});
  spec.Attr("accuracy_level", level);
  spec.Threads(threads);
  for (size_t i = 0; i < inputs.size(); ++i) spec.Input(inputs[i], true, i > 0);
  auto kernel = spec.Outputs(1).Create(testing::CpuRegistry());
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.status().ToString().c_str());
    return 0;
  }
  std::vector<Tensor> views;
  std::vector<const Tensor*> ptrs;
  std::vector<Shape> shapes;
  views.reserve(inputs.size());
  for (const TestTensor& t : inputs) {
    views.push_back(Tensor::Borrowed(t.type, t.shape, t.bytes.data()));
    ptrs.push_back(&views.back());
    shapes.push_back(t.shape);
  }
  engine::ThreadPool pool(threads);
  testing::BenchContext ctx(ptrs, /*outputs=*/1, pool);
  ctx.Declare((*kernel)->DeclareWorkspaceRequirements(shapes));
  auto seconds = testing::SecondsPerCall(threads, [&] {
    ctx.NextRun();
    return (*kernel)->Compute(ctx);
  });
  if (!seconds.ok()) {
    std::fprintf(stderr, "%s\n", seconds.status().ToString().c_str());
    return 0;
  }
  return *seconds;
}

void Run() {
  std::printf("%-36s %12s %12s %14s\n", "MatMulNBits (4-bit, zp)", "inferd 1t", "inferd 2t",
              "weight GB/s 1t");
  for (int64_t level : {0, 4}) {
    for (int64_t m : {1, 4, 32, 256}) {
      for (int64_t block : {32, 128}) {
        const int64_t k = 4096, n = 4096;
        const double t1 = Time(m, k, n, block, 1, level), t2 = Time(m, k, n, block, 2, level);
        std::printf("acc=%lld M=%-3lld K=%lld N=%lld block=%-4lld %9.1f us %9.1f us %11.2f\n",
                    static_cast<long long>(level), static_cast<long long>(m),
                    static_cast<long long>(k), static_cast<long long>(n),
                    static_cast<long long>(block), t1 * 1e6, t2 * 1e6,
                    t1 > 0 ? (n * k / 2.0) / t1 / 1e9 : 0.0);
        std::fflush(stdout);
      }
    }
  }
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main(int argc, char** argv) {
  inferd::ParseCommandLine(argc, argv,
                           "usage: matmul_nbits_bench\n\nMicroseconds per run of MatMulNBits on "
                           "4096 x 4096 int4 weights at M = 1 and 32, 1 and 2 threads.");
  inferd::kernels::cpu::Run();
  return 0;
}

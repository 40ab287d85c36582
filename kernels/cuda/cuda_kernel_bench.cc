// cuda_kernel_bench: the CUDA kernels against the CPU kernels of the same node: milliseconds per
// run and throughput (GFLOP/s for MatMul, Gemm and Conv, GB/s of inputs plus output for the
// elementwise ops, pooling, softmax, norms, reductions and transposes) on a few shapes. CUDA: runs
// enqueued back to back on one stream, timed with events after a warm-up; inputs stay on the
// device (no transfers counted). CPU: the same node through a KernelContext with preallocated
// buffers, at --threads intra-op threads. Each line also says whether the CUDA runs made a
// cudaMalloc after the warm-up (they must not). Not a test: prints a table; exits 1 on an error,
// and 0 with one line when there is no GPU.
//
//   bazel run --config=cuda //kernels/cuda:cuda_kernel_bench -- --threads 16
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "base/cuda_status.h"
#include "base/flags.h"
#include "engine/cuda_stream.h"
#include "engine/testing/kernel_tester.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/testing/bench_support.h"
#include "kernels/cpu/testing/kernel_runner.h"
#include "kernels/cuda/testing/cuda_kernel_runner.h"

ABSL_FLAG(int, threads, 0, "CPU intra-op threads (0: every core)");
ABSL_FLAG(int, runs, 20, "timed CUDA runs per case");

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;
using engine::testing::KernelTester;
using engine::testing::TestTensor;

struct Case {
  std::string label;
  std::string op;
  std::vector<Shape> inputs;
  double flops = 0;  // per run; 0: report GB/s instead
  int opset = 13;
  std::vector<onnx::AttributeProto> attributes = {};
};

absl::Status RunCase(const Case& c, int threads, int runs) {
  std::vector<TestTensor> inputs;
  uint32_t seed = 1;
  for (const Shape& s : c.inputs) {
    inputs.push_back(
        TestTensor::Of<float>(s, testing::RandomFloats(s.NumElements(), -1, 1, seed++)));
  }
  std::vector<const TestTensor*> ptrs;
  KernelTester t(c.op, c.opset);
  for (const onnx::AttributeProto& a : c.attributes) t.Attr(a);
  for (const TestTensor& in : inputs) {
    t.Input(in);
    ptrs.push_back(&in);
  }

  // CPU: Compute alone, buffers kept across runs.
  t.DeviceType(engine::DeviceKind::kCpu);
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> cpu_kernel,
                          t.Create(cpu::testing::CpuRegistry()));
  std::vector<engine::Tensor> views;
  std::vector<const engine::Tensor*> view_ptrs;
  views.reserve(inputs.size());
  for (const TestTensor& in : inputs) {
    views.push_back(engine::Tensor::Borrowed(in.type, in.shape, in.bytes.data()));
    view_ptrs.push_back(&views.back());
  }
  engine::ThreadPool pool(threads);
  cpu::testing::BenchContext ctx(view_ptrs, 1, pool);
  ctx.Declare(cpu_kernel->DeclareWorkspaceRequirements(c.inputs));
  INFERD_ASSIGN_OR_RETURN(const double cpu_seconds, cpu::testing::SecondsPerCall(threads, [&] {
                            ctx.NextRun();
                            return cpu_kernel->Compute(ctx);
                          }));
  const size_t out_bytes = ctx.OutputBytes();

  // CUDA: back to back on one stream, between two events, after a warm-up.
  t.DeviceType(engine::DeviceKind::kCuda);
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<engine::OpKernel> cuda_kernel,
                          t.Create(testing::CudaRegistry()));
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<testing::CudaKernelRun> run,
                          testing::CudaKernelRun::Create(*cuda_kernel, ptrs, 1));
  for (int i = 0; i < 3; ++i) INFERD_RETURN_IF_ERROR(run->Enqueue());
  INFERD_RETURN_IF_ERROR(run->Synchronize());
  const uint64_t warm_allocations = run->device_allocations();
  INFERD_ASSIGN_OR_RETURN(engine::CudaEvent start, engine::CudaEvent::Create(0, true));
  INFERD_ASSIGN_OR_RETURN(engine::CudaEvent end, engine::CudaEvent::Create(0, true));
  INFERD_RETURN_IF_ERROR(start.Record(run->stream()));
  for (int i = 0; i < runs; ++i) INFERD_RETURN_IF_ERROR(run->Enqueue());
  INFERD_RETURN_IF_ERROR(end.Record(run->stream()));
  INFERD_RETURN_IF_ERROR(end.Synchronize());
  INFERD_ASSIGN_OR_RETURN(const float total_ms, engine::CudaEvent::ElapsedMillis(start, end));
  const double cuda_seconds = total_ms / 1e3 / runs;
  const bool steady = run->device_allocations() == warm_allocations;

  double bytes = static_cast<double>(out_bytes);
  for (const TestTensor& in : inputs) bytes += static_cast<double>(in.bytes.size());
  auto rate = [&](double seconds) {
    return c.flops > 0 ? c.flops / seconds / 1e9 : bytes / seconds / 1e9;
  };
  std::printf("%-34s %10.3f %10.3f %8.1fx %10.1f %10.1f %-7s %s\n", c.label.c_str(),
              cpu_seconds * 1e3, cuda_seconds * 1e3, cpu_seconds / cuda_seconds, rate(cpu_seconds),
              rate(cuda_seconds), c.flops > 0 ? "GFLOP/s" : "GB/s", steady ? "yes" : "NO");
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  ParseCommandLine(argc, argv,
                   "usage: cuda_kernel_bench [--threads N] [--runs N]\n\n"
                   "Times the CUDA kernels against the CPU kernels of the same nodes.");
  if (absl::Status s = CheckCudaDevice(0); !s.ok()) {
    std::printf("cuda_kernel_bench: %s\n", std::string(s.message()).c_str());
    return 0;
  }
  int threads = absl::GetFlag(FLAGS_threads);
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  const int runs = absl::GetFlag(FLAGS_runs);
  auto mm = [](int64_t m, int64_t k, int64_t n) { return 2.0 * m * k * n; };
  // 2 * N * M * output pixels * C / group * kernel pixels.
  auto conv = [](int64_t n, int64_t m, int64_t pixels, int64_t c_per_group, int64_t kernel) {
    return 2.0 * n * m * pixels * c_per_group * kernel;
  };
  using engine::testing::IntAttr;
  using engine::testing::IntsAttr;
  const std::vector<Case> cases = {
      {"MatMul [1,4096]x[4096,4096]", "MatMul", {{1, 4096}, {4096, 4096}}, mm(1, 4096, 4096)},
      {"MatMul [128,4096]x[4096,4096]", "MatMul", {{128, 4096}, {4096, 4096}}, mm(128, 4096, 4096)},
      {"MatMul [2048,2048]x[2048,2048]",
       "MatMul",
       {{2048, 2048}, {2048, 2048}},
       mm(2048, 2048, 2048)},
      {"MatMul [16,128,64]x[16,64,128]",
       "MatMul",
       {{16, 128, 64}, {16, 64, 128}},
       16 * mm(128, 64, 128)},
      {"Gemm [512,1024]x[1024,1024]+[1024]",
       "Gemm",
       {{512, 1024}, {1024, 1024}, {1024}},
       mm(512, 1024, 1024)},
      {"Add [16,1024,1024]+[1024]", "Add", {{16, 1024, 1024}, {1024}}},
      {"Mul [4096,4096]*[4096,4096]", "Mul", {{4096, 4096}, {4096, 4096}}},
      {"Conv [8,64,56,56] 3x3 -> 64",
       "Conv",
       {{8, 64, 56, 56}, {64, 64, 3, 3}, {64}},
       conv(8, 64, 56 * 56, 64, 9),
       13,
       {IntsAttr("pads", {1, 1, 1, 1})}},
      {"Conv [1,3,224,224] 7x7/2 -> 64",
       "Conv",
       {{1, 3, 224, 224}, {64, 3, 7, 7}, {64}},
       conv(1, 64, 112 * 112, 3, 49),
       13,
       {IntsAttr("pads", {3, 3, 3, 3}), IntsAttr("strides", {2, 2})}},
      {"Conv [8,256,14,14] depthwise 3x3",
       "Conv",
       {{8, 256, 14, 14}, {256, 1, 3, 3}, {256}},
       conv(8, 256, 14 * 14, 1, 9),
       13,
       {IntsAttr("pads", {1, 1, 1, 1}), IntAttr("group", 256)}},
      {"MaxPool [8,64,112,112] 3x3/2",
       "MaxPool",
       {{8, 64, 112, 112}},
       0,
       13,
       {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
        IntsAttr("pads", {1, 1, 1, 1})}},
      {"Relu [16777216]", "Relu", {{1 << 24}}},
      {"Sigmoid [16777216]", "Sigmoid", {{1 << 24}}},
      {"Tanh [16777216]", "Tanh", {{1 << 24}}},
      // Softmax, norms, reductions, data movement:
      {"Softmax [96,128,128] axis -1", "Softmax", {{96, 128, 128}}},
      {"Softmax [32,50257] axis -1", "Softmax", {{32, 50257}}},
      {"LayerNorm [4096,768] +bias", "LayerNormalization", {{4096, 768}, {768}, {768}}, 0, 17},
      {"ReduceMean [4096,768] axes -1",
       "ReduceMean",
       {{4096, 768}},
       0,
       13,
       {engine::testing::IntsAttr("axes", {-1})}},
      {"Transpose [64,512,512] perm 0,2,1",
       "Transpose",
       {{64, 512, 512}},
       0,
       13,
       {engine::testing::IntsAttr("perm", {0, 2, 1})}},
      {"Transpose [32,64,56,56] NCHW->NHWC",
       "Transpose",
       {{32, 64, 56, 56}},
       0,
       13,
       {engine::testing::IntsAttr("perm", {0, 2, 3, 1})}},
  };
  std::printf("CPU: %d threads; CUDA: device 0, %d runs per case after 3 warm-up runs\n", threads,
              runs);
  std::printf("%-34s %10s %10s %9s %10s %10s %-7s %s\n", "CASE", "CPU_MS", "CUDA_MS", "SPEEDUP",
              "CPU_RATE", "CUDA_RATE", "UNIT", "NO_MALLOC");
  for (const Case& c : cases) {
    if (absl::Status s = RunCase(c, threads, runs); !s.ok()) {
      std::printf("%s: %s\n", c.label.c_str(), s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace inferd::kernels::cuda

int main(int argc, char** argv) { return inferd::kernels::cuda::Main(argc, argv); }

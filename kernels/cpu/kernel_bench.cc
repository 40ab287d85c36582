// kernel_bench: time and GFLOP/s of the oneDNN-backed CPU kernels (MatMul, Gemm, Conv,
// ConvTranspose, pooling) at 1 and 2 intra-op threads, on the shapes of the generated models and
// of common CNN layers. Each kernel is created once (primitives built and constant weights
// prepacked at creation, as at model load) and run repeatedly through a minimal KernelContext
// with preallocated buffers, so the figures are Compute alone. Not a test: prints a table.
//
//   bazel run -c opt //kernels/cpu:kernel_bench
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/flags.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/testing/bench_support.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::Tensor;
using testing::BenchContext;
using testing::IntAttr;
using testing::IntsAttr;

struct Input {
  Shape shape;
  std::vector<float> values;
  bool constant = false;
  Tensor tensor;
};

// Seconds per Compute of a node (best of several timed batches after a warm-up).
double TimeNode(const engine::KernelRegistry& registry, const std::string& op,
                const std::vector<onnx::AttributeProto>& attrs, std::vector<Input>& inputs,
                int threads) {
  std::vector<engine::KernelIoInfo> in_info;
  std::vector<const Tensor*> tensors;
  std::vector<Shape> shapes;
  std::vector<DataType> types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input& in = inputs[i];
    in.tensor = Tensor::Borrowed(DataType::kFloat32, in.shape, in.values.data());
    engine::KernelIoInfo io;
    io.name = absl::StrCat("in", i);
    io.present = true;
    io.type = DataType::kFloat32;
    io.shape = engine::ShapeInfo::FromShape(in.shape);
    if (in.constant) io.constant = &in.tensor;
    in_info.push_back(io);
    tensors.push_back(&in.tensor);
    shapes.push_back(in.shape);
    types.push_back(DataType::kFloat32);
  }
  engine::KernelIoInfo out_io;
  out_io.name = "out";
  out_io.present = true;
  engine::KernelInfo info("bench", op, "", 13, &attrs, in_info, {out_io}, threads);
  const engine::KernelDef* def = registry.Find("", op, 13, "cpu", types, {});
  if (def == nullptr) {
    std::fprintf(stderr, "%s: no kernel\n", op.c_str());
    return 0;
  }
  auto kernel = def->create(info);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(kernel.status().message()).c_str());
    return 0;
  }
  engine::ThreadPool pool(threads);
  BenchContext ctx(tensors, /*outputs=*/1, pool);
  ctx.Declare((*kernel)->DeclareWorkspaceRequirements(shapes));
  for (int i = 0; i < 3; ++i) (void)(*kernel)->Compute(ctx);  // warm-up
  // Best of 7 batches of >= 0.1 s. With one thread the clock is the thread's CPU time (oneDNN
  // then runs on the calling thread), which other load on the machine barely disturbs; with more,
  // wall time.
  auto now = [threads] {
    if (threads == 1) {
      timespec t;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return t.tv_sec + t.tv_nsec * 1e-9;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  double best = 1e30;
  for (int batch = 0; batch < 7; ++batch) {
    int iterations = 0;
    const double start = now();
    double elapsed = 0;
    do {
      absl::Status s = (*kernel)->Compute(ctx);
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(s.message()).c_str());
        return 0;
      }
      ++iterations;
      elapsed = now() - start;
    } while (elapsed < 0.1);
    best = std::min(best, elapsed / iterations);
  }
  return best;
}

std::vector<float> Random(int64_t n) {
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// One benchmark: a node, its inputs (shape, constant at load) and its FLOPs (0: memory-bound,
// no GFLOP/s printed).
struct Case {
  std::string name, op;
  std::vector<onnx::AttributeProto> attrs;
  std::vector<std::pair<Shape, bool>> inputs;
  double flops = 0;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (int64_t n : {256, 1024}) {
    for (bool constant : {false, true}) {
      cases.push_back(
          {absl::StrCat("MatMul ", n, "x", n, "x", n, constant ? " (constant B, prepacked)" : ""),
           "MatMul",
           {},
           {{Shape{n, n}, false}, {Shape{n, n}, constant}},
           2.0 * n * n * n});
    }
  }
  cases.push_back({"MatMul [128,256]x[256,1024] (constant B)",
                   "MatMul",
                   {},
                   {{Shape{1, 128, 256}, false}, {Shape{256, 1024}, true}},
                   2.0 * 128 * 256 * 1024});
  cases.push_back({"MatMul [4,128,64]x[4,64,128] (attention)",
                   "MatMul",
                   {},
                   {{Shape{1, 4, 128, 64}, false}, {Shape{1, 4, 64, 128}, false}},
                   2.0 * 4 * 128 * 64 * 128});
  cases.push_back({"Gemm [8,2048]x[10,2048]^T + bias",
                   "Gemm",
                   {IntAttr("transB", 1)},
                   {{Shape{8, 2048}, false}, {Shape{10, 2048}, true}, {Shape{10}, true}},
                   2.0 * 8 * 2048 * 10});
  for (bool constant : {false, true}) {
    cases.push_back(
        {absl::StrCat("Conv 1x64x56x56 3x3 64->64 pad 1", constant ? " (constant W)" : ""),
         "Conv",
         {IntsAttr("pads", {1, 1, 1, 1})},
         {{Shape{1, 64, 56, 56}, false}, {Shape{64, 64, 3, 3}, constant}, {Shape{64}, constant}},
         2.0 * 64 * 56 * 56 * 64 * 9});
  }
  cases.push_back({"Conv 8x3x32x32 3x3 3->16 (cnn_b8 conv1)",
                   "Conv",
                   {IntsAttr("pads", {1, 1, 1, 1})},
                   {{Shape{8, 3, 32, 32}, false}, {Shape{16, 3, 3, 3}, true}, {Shape{16}, true}},
                   2.0 * 8 * 16 * 32 * 32 * 27});
  cases.push_back({"Conv 8x16x16x16 3x3 16->32 (cnn_b8 conv2)",
                   "Conv",
                   {IntsAttr("pads", {1, 1, 1, 1})},
                   {{Shape{8, 16, 16, 16}, false}, {Shape{32, 16, 3, 3}, true}, {Shape{32}, true}},
                   2.0 * 8 * 32 * 16 * 16 * 144});
  cases.push_back({"Conv 1x3x224x224 7x7 s2 3->64",
                   "Conv",
                   {IntsAttr("pads", {3, 3, 3, 3}), IntsAttr("strides", {2, 2})},
                   {{Shape{1, 3, 224, 224}, false}, {Shape{64, 3, 7, 7}, true}},
                   2.0 * 64 * 112 * 112 * 147});
  cases.push_back({"Conv depthwise 1x256x56x56 3x3",
                   "Conv",
                   {IntsAttr("pads", {1, 1, 1, 1}), IntAttr("group", 256)},
                   {{Shape{1, 256, 56, 56}, false}, {Shape{256, 1, 3, 3}, true}},
                   2.0 * 256 * 56 * 56 * 9});
  cases.push_back({"Conv 1x1 1x64x56x56 64->256",
                   "Conv",
                   {},
                   {{Shape{1, 64, 56, 56}, false}, {Shape{256, 64, 1, 1}, true}},
                   2.0 * 256 * 56 * 56 * 64});
  cases.push_back({"ConvTranspose 1x64x28x28 4x4 s2 p1 64->32",
                   "ConvTranspose",
                   {IntsAttr("strides", {2, 2}), IntsAttr("pads", {1, 1, 1, 1})},
                   {{Shape{1, 64, 28, 28}, false}, {Shape{64, 32, 4, 4}, true}},
                   2.0 * 64 * 28 * 28 * 32 * 16});
  cases.push_back({"MaxPool 8x16x32x32 2x2 s2",
                   "MaxPool",
                   {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2})},
                   {{Shape{8, 16, 32, 32}, false}}});
  cases.push_back({"AveragePool 1x64x56x56 3x3 s2 p1 incl. pad",
                   "AveragePool",
                   {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
                    IntsAttr("pads", {1, 1, 1, 1}), IntAttr("count_include_pad", 1)},
                   {{Shape{1, 64, 56, 56}, false}}});
  cases.push_back(
      {"GlobalAveragePool 1x2048x7x7", "GlobalAveragePool", {}, {{Shape{1, 2048, 7, 7}, false}}});
  return cases;
}

int Main() {
  engine::KernelRegistry registry;
  if (absl::Status s = RegisterCpuKernels(registry); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%-48s %8s %12s %10s\n", "kernel", "threads", "time (ms)", "GFLOP/s");
  std::printf("(1 thread: CPU time of the calling thread; 2 threads: wall time)\n");
  for (int threads : {1, 2}) {
    for (const Case& c : Cases()) {
      std::vector<Input> in;
      for (const auto& [shape, constant] : c.inputs) {
        in.push_back({shape, Random(shape.NumElements()), constant});
      }
      const double t = TimeNode(registry, c.op, c.attrs, in, threads);
      if (t <= 0) {
        std::printf("%-48s %8d %12s %10s\n", c.name.c_str(), threads, "n/a", "-");
      } else if (c.flops > 0) {
        std::printf("%-48s %8d %12.4f %10.1f\n", c.name.c_str(), threads, t * 1e3,
                    c.flops / t / 1e9);
      } else {
        std::printf("%-48s %8d %12.4f %10s\n", c.name.c_str(), threads, t * 1e3, "-");
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main(int argc, char** argv) {
  inferd::ParseCommandLine(argc, argv,
                           "usage: kernel_bench\n\nPrints time and GFLOP/s of the oneDNN-backed "
                           "CPU kernels (MatMul, Gemm, Conv, ConvTranspose, pooling) at 1 and 2 "
                           "threads.");
  return inferd::kernels::cpu::Main();
}

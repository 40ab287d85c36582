// movement_bench: throughput of the shape and data-movement kernels (Slice, Concat, Split, Pad,
// Transpose, Expand, Tile, Gather, Resize, DepthToSpace) at 1 and 2 intra-op threads, beside a
// plain memcpy of the same output bytes. Each kernel is created once and run repeatedly through
// a minimal KernelContext with preallocated outputs and temporaries, so the figures are Compute
// alone. Not a test: prints a table.
//
//   bazel run -c opt //kernels/cpu:movement_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
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
using testing::StringAttr;

struct Input {
  DataType type = DataType::kFloat32;
  Shape shape;
  std::vector<unsigned char> bytes;
};

Input Absent() { return Input{DataType::kUndefined}; }

Input Floats(const Shape& s) {
  Input in{DataType::kFloat32, s, std::vector<unsigned char>(s.NumElements() * 4)};
  for (size_t i = 0; i < in.bytes.size(); ++i) in.bytes[i] = static_cast<unsigned char>(i * 7);
  return in;
}

Input Int64s(std::vector<int64_t> v) {
  Input in{DataType::kInt64, Shape{static_cast<int64_t>(v.size())},
           std::vector<unsigned char>(v.size() * 8)};
  std::memcpy(in.bytes.data(), v.data(), in.bytes.size());
  return in;
}

// Runs `op` repeatedly; prints ms per run, GB/s of output written, and memcpy's GB/s.
void Bench(const engine::KernelRegistry& registry, const std::string& label, const std::string& op,
           std::vector<onnx::AttributeProto> attrs, std::vector<Input> inputs, int outputs,
           int threads) {
  std::vector<engine::KernelIoInfo> in_info;
  std::vector<const Tensor*> tensors;
  std::vector<DataType> types;
  std::vector<Tensor> views(inputs.size());  // sized once: pointers into it stay valid
  for (size_t i = 0; i < inputs.size(); ++i) {
    Input& in = inputs[i];
    engine::KernelIoInfo io;
    if (in.type == DataType::kUndefined) {  // an absent optional input
      in_info.push_back(io);
      tensors.push_back(nullptr);
      types.push_back(in.type);
      continue;
    }
    views[i] = Tensor::Borrowed(in.type, in.shape, in.bytes.data());
    io.name = absl::StrCat("in", i);
    io.present = true;
    io.type = in.type;
    io.shape = engine::ShapeInfo::FromShape(in.shape);
    if (i > 0) io.constant = &views[i];  // shapes, indices, pads: constants, as in real models
    in_info.push_back(io);
    tensors.push_back(&views[i]);
    types.push_back(in.type);
  }
  std::vector<engine::KernelIoInfo> out_info(outputs);
  for (int i = 0; i < outputs; ++i) {
    out_info[i].name = absl::StrCat("out", i);
    out_info[i].present = true;
  }
  engine::KernelInfo info("bench", op, "", 13, &attrs, in_info, out_info, threads);
  const engine::KernelDef* def = registry.Find("", op, 13, "cpu", types, {});
  if (def == nullptr) {
    std::fprintf(stderr, "%s: no kernel\n", op.c_str());
    return;
  }
  auto kernel = def->create(info);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(kernel.status().message()).c_str());
    return;
  }
  engine::ThreadPool pool(threads);
  BenchContext ctx(tensors, outputs, pool);
  auto run = [&] {
    ctx.NextRun();
    absl::Status s = (*kernel)->Compute(ctx);
    if (!s.ok()) std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(s.message()).c_str());
    return s.ok();
  };
  for (int i = 0; i < 3; ++i) {
    if (!run()) return;  // warm-up
  }
  auto time = [](auto&& fn) {
    double best = 1e30;
    for (int batch = 0; batch < 5; ++batch) {
      int iterations = 0;
      double elapsed = 0;
      const auto start = std::chrono::steady_clock::now();
      do {
        fn();
        ++iterations;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } while (elapsed < 0.1);
      best = std::min(best, elapsed / iterations);
    }
    return best;
  };
  const double t = time(run);
  const size_t bytes = ctx.OutputBytes();
  std::vector<unsigned char> a(bytes), b(bytes);
  const double tm = time([&] { std::memcpy(a.data(), b.data(), bytes); });
  std::printf("%-52s %7d %10.3f %9.2f %9.2f\n", label.c_str(), threads, t * 1e3, bytes / t / 1e9,
              bytes / tm / 1e9);
}

int Main() {
  engine::KernelRegistry registry;
  if (absl::Status s = RegisterCpuKernels(registry); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%-52s %7s %10s %9s %9s\n", "kernel", "threads", "ms", "GB/s", "memcpy");
  for (int threads : {1, 2}) {
    const Shape act{8, 64, 56, 56};
    Bench(registry, "Slice [8,64,56,56] -> [:, 16:48, 1:-1, 1:-1]", "Slice", {},
          {Floats(act), Int64s({16, 1, 1}), Int64s({48, -1, -1}), Int64s({1, 2, 3})}, 1, threads);
    Bench(registry, "Slice [8,64,56,56] step -1 on W", "Slice", {},
          {Floats(act), Int64s({-1}), Int64s({INT64_MIN}), Int64s({3}), Int64s({-1})}, 1, threads);
    Bench(registry, "Concat 2x [8,64,56,56] axis 1", "Concat", {IntAttr("axis", 1)},
          {Floats(act), Floats(act)}, 1, threads);
    Bench(registry, "Split [8,64,56,56] axis 1 in 2", "Split", {IntAttr("axis", 1)}, {Floats(act)},
          2, threads);
    Bench(registry, "Pad [8,64,56,56] constant 1 on H, W", "Pad", {},
          {Floats(act), Int64s({0, 0, 1, 1, 0, 0, 1, 1})}, 1, threads);
    Bench(registry, "Pad [8,64,56,56] reflect 2 on H, W", "Pad", {StringAttr("mode", "reflect")},
          {Floats(act), Int64s({0, 0, 2, 2, 0, 0, 2, 2})}, 1, threads);
    Bench(registry, "Transpose [8,64,56,56] NCHW -> NHWC", "Transpose",
          {IntsAttr("perm", {0, 2, 3, 1})}, {Floats(act)}, 1, threads);
    Bench(registry, "Transpose [8,128,12,64] (0,2,1,3)", "Transpose",
          {IntsAttr("perm", {0, 2, 1, 3})}, {Floats({8, 128, 12, 64})}, 1, threads);
    Bench(registry, "Expand [8,64,1,1] -> [8,64,56,56]", "Expand", {},
          {Floats({8, 64, 1, 1}), Int64s({8, 64, 56, 56})}, 1, threads);
    Bench(registry, "Expand [1,1,56,56] -> [8,64,56,56]", "Expand", {},
          {Floats({1, 1, 56, 56}), Int64s({8, 64, 56, 56})}, 1, threads);
    Bench(registry, "Tile [8,64,28,28] x [1,1,2,2]", "Tile", {},
          {Floats({8, 64, 28, 28}), Int64s({1, 1, 2, 2})}, 1, threads);
    Bench(registry, "Gather [30000,768] rows by 4096 indices", "Gather", {},
          {Floats({30000, 768}), Int64s(std::vector<int64_t>(4096, 17))}, 1, threads);
    Bench(registry, "Resize nearest [8,64,56,56] x2", "Resize", {StringAttr("mode", "nearest")},
          {Floats(act), Absent(), Absent(), Int64s({8, 64, 112, 112})}, 1, threads);
    Bench(registry, "Resize linear [8,64,56,56] x2", "Resize", {StringAttr("mode", "linear")},
          {Floats(act), Absent(), Absent(), Int64s({8, 64, 112, 112})}, 1, threads);
    Bench(registry, "DepthToSpace [8,256,28,28] blocksize 2", "DepthToSpace",
          {IntAttr("blocksize", 2)}, {Floats({8, 256, 28, 28})}, 1, threads);
  }
  return 0;
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main(int argc, char** argv) {
  inferd::ParseCommandLine(argc, argv,
                           "usage: movement_bench\n\nPrints the throughput of the shape and "
                           "data-movement kernels at 1 and 2 threads beside memcpy.");
  return inferd::kernels::cpu::Main();
}

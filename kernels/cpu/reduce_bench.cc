// reduce_bench: throughput of the reduction and normalization kernels (Softmax, LogSoftmax,
// Reduce*, ArgMax, TopK, CumSum, BatchNormalization, InstanceNormalization, LayerNormalization,
// Einsum) at 1 and 2 intra-op threads, as GB/s of input read (GFLOP/s for Einsum). Each kernel is
// created once and run repeatedly through a minimal KernelContext with preallocated outputs, so
// the figures are Compute alone. Not a test: prints a table.
//
//   bazel run //kernels/cpu:reduce_bench [-- SUBSTRING]  (only the cases whose label has it)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/flags.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/testing/bench_support.h"
#include "onnx/onnx_pb.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::Tensor;
using testing::BenchContext;
using testing::IntAttr;
using testing::IntsAttr;
using testing::StringAttr;

struct Case {
  std::string label, op;
  int opset;
  std::vector<onnx::AttributeProto> attrs;
  std::vector<Shape> shapes;       // float inputs (random values)
  std::vector<int64_t> int_input;  // an extra int64 [n] input (axes, K, axis) when set
  int outputs = 1;
  double flops = 0;  // > 0: report GFLOP/s instead of GB/s
};

// Seconds per Compute (the fastest of many runs after a warm-up).
double Time(const engine::KernelRegistry& registry, const Case& c, int threads) {
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(0.1f, 1.0f);
  std::vector<std::vector<float>> data;
  std::vector<Tensor> tensors;
  std::vector<engine::KernelIoInfo> in_info, out_info(c.outputs);
  for (const Shape& s : c.shapes) {
    data.emplace_back(s.NumElements());
    for (float& v : data.back()) v = dist(gen);
  }
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    tensors.push_back(Tensor::Borrowed(DataType::kFloat32, c.shapes[i], data[i].data()));
  }
  if (!c.int_input.empty()) {
    tensors.push_back(Tensor::Borrowed(
        DataType::kInt64, Shape{static_cast<int64_t>(c.int_input.size())}, c.int_input.data()));
  }
  std::vector<const Tensor*> inputs;
  std::vector<DataType> in_types, out_types(c.outputs, DataType::kFloat32);
  for (Tensor& t : tensors) {
    engine::KernelIoInfo io;
    io.name = "in" + std::to_string(in_info.size());
    io.present = true;
    io.type = t.dtype();
    io.shape = engine::ShapeInfo::FromShape(t.shape());
    in_info.push_back(io);
    in_types.push_back(t.dtype());
    inputs.push_back(&t);
  }
  for (int i = 0; i < c.outputs; ++i) {
    out_info[i].name = "out" + std::to_string(i);
    out_info[i].present = true;
  }
  engine::KernelInfo info("bench", c.op, "", c.opset, &c.attrs, in_info, out_info, threads);
  const engine::KernelDef* def = registry.Find("", c.op, c.opset, "cpu", in_types, out_types);
  if (def == nullptr) return -1;
  auto kernel = def->create(info);
  if (!kernel.ok()) return -1;
  engine::ThreadPool pool(threads);
  BenchContext ctx(inputs, c.outputs, pool);
  auto run = [&] {
    ctx.NextRun();
    return (*kernel)->Compute(ctx);
  };
  if (!run().ok()) return -1;
  // The fastest single run of at least 20 (and 0.2 s): robust on a shared, busy machine.
  double best = 1e30, total = 0;
  for (int reps = 0; reps < 20 || total < 0.2; ++reps) {
    const auto start = std::chrono::steady_clock::now();
    (void)run();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

int Main(const char* filter) {
  engine::KernelRegistry registry;
  if (!RegisterCpuKernels(registry).ok()) return 1;
  const Shape rows{4096, 768}, wide{8192, 128}, strided{16, 1000, 64};
  std::vector<Case> cases = {
      {"Softmax last [8192,128]", "Softmax", 13, {}, {wide}},
      {"Softmax last [4096,768]", "Softmax", 13, {}, {rows}},
      {"Softmax axis 1 [16,1000,64]", "Softmax", 13, {IntAttr("axis", 1)}, {strided}},
      {"LogSoftmax last [4096,768]", "LogSoftmax", 13, {}, {rows}},
      {"ReduceMean last [4096,768]", "ReduceMean", 13, {IntsAttr("axes", {-1})}, {rows}},
      {"ReduceMean axis 0 [4096,768]", "ReduceMean", 13, {IntsAttr("axes", {0})}, {rows}},
      {"ReduceSum all [4096,768]", "ReduceSum", 13, {}, {rows}},
      {"ReduceMax axis 1 [16,1000,64]", "ReduceMax", 13, {IntsAttr("axes", {1})}, {strided}},
      {"ReduceL2 axes 0,2 [16,1000,64]", "ReduceL2", 13, {IntsAttr("axes", {0, 2})}, {strided}},
      {"ReduceLogSumExp last [4096,768]", "ReduceLogSumExp", 13, {IntsAttr("axes", {1})}, {rows}},
      {"ArgMax last [4096,768]", "ArgMax", 13, {IntAttr("axis", -1)}, {rows}},
      {"ArgMax axis 0 [4096,768]", "ArgMax", 13, {IntAttr("axis", 0)}, {rows}},
      {"TopK k=5 last [4096,768]", "TopK", 11, {}, {rows}, {5}, 2},
      {"CumSum axis 1 [4096,768]", "CumSum", 14, {}, {rows}, {1}},
      {"CumSum axis 0 [4096,768]", "CumSum", 14, {}, {rows}, {0}},
      {"BatchNorm [8,64,56,56]",
       "BatchNormalization",
       15,
       {},
       {{8, 64, 56, 56}, {64}, {64}, {64}, {64}}},
      {"InstanceNorm [8,64,56,56]", "InstanceNormalization", 6, {}, {{8, 64, 56, 56}, {64}, {64}}},
      {"LayerNorm last [4096,768]", "LayerNormalization", 17, {}, {rows, {768}, {768}}},
      {"Einsum bhqd,bhkd->bhqk [1,12,128,64]",
       "Einsum",
       12,
       {StringAttr("equation", "bhqd,bhkd->bhqk")},
       {{1, 12, 128, 64}, {1, 12, 128, 64}},
       {},
       1,
       2.0 * 12 * 128 * 128 * 64},
      {"Einsum bij,jk->bik [8,128,768]x[768,768]",
       "Einsum",
       12,
       {StringAttr("equation", "bij,jk->bik")},
       {{8, 128, 768}, {768, 768}},
       {},
       1,
       2.0 * 8 * 128 * 768 * 768},
  };
  std::printf("%-42s %12s %12s\n", "kernel", "1 thread", "2 threads");
  for (const Case& c : cases) {
    if (filter != nullptr && c.label.find(filter) == std::string::npos) continue;
    double bytes = 0;
    for (const Shape& s : c.shapes) bytes += 4.0 * s.NumElements();
    std::printf("%-42s", c.label.c_str());
    for (int threads : {1, 2}) {
      const double s = Time(registry, c, threads);
      if (s < 0) {
        std::printf(" %12s", "error");
      } else if (c.flops > 0) {
        std::printf(" %7.1f GF/s", c.flops / s * 1e-9);
      } else {
        std::printf(" %7.2f GB/s", bytes / s * 1e-9);
      }
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main(int argc, char** argv) {
  const std::vector<std::string> args = inferd::ParseCommandLine(
      argc, argv,
      "usage: reduce_bench [SUBSTRING]\n\nPrints GB/s (GFLOP/s for Einsum) of the reduction and "
      "normalization kernels at 1 and 2 threads; with SUBSTRING, only the cases whose label has "
      "it.");
  return inferd::kernels::cpu::Main(args.empty() ? nullptr : args[0].c_str());
}

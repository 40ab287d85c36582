// kernel_bench: GFLOP/s of the oneDNN-backed CPU kernels at 1 and 2 intra-op threads. Each kernel
// is created once (primitives built and constant weights prepacked at creation, as at model
// load) and run repeatedly through a minimal KernelContext with preallocated buffers, so the
// figures are Compute alone. Not a test: prints a table.
//
//   bazel run -c opt //kernels/cpu:kernel_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/cpu_kernels.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::Shape;
using engine::Tensor;

// Inputs borrowed, one preallocated output, workspaces allocated once.
class BenchContext final : public engine::KernelContext {
 public:
  BenchContext(std::vector<const Tensor*> inputs, engine::ThreadPool& pool)
      : inputs_(std::move(inputs)), pool_(pool) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override { return inputs_[i]; }
  int num_outputs() const override { return 1; }
  bool output_wanted(int slot) const override { return slot == 0; }
  absl::StatusOr<Tensor*> MakeOutputTensor(int, DataType type, const Shape& shape) override {
    const size_t bytes = shape.NumElements() * engine::ElementSize(type);
    if (output_storage_.size() < bytes) output_storage_.resize(bytes);
    output_ = Tensor::Borrowed(type, shape, output_storage_.data());
    return &output_;
  }
  absl::StatusOr<Tensor*> MakeOutputAlias(int, int, const Shape&) override {
    return absl::UnimplementedError("not in this benchmark");
  }
  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType, const Shape&) override {
    return absl::UnimplementedError("not in this benchmark");
  }
  absl::StatusOr<void*> GetWorkspace(int slot_id) override {
    return workspaces_.at(slot_id).data();
  }
  engine::ThreadPool& threads() override { return pool_; }

  void Declare(const std::vector<engine::WorkspaceRequirement>& reqs) {
    for (const auto& r : reqs) workspaces_[r.slot_id].resize(r.bytes + 64);
  }

 private:
  std::vector<const Tensor*> inputs_;
  engine::ThreadPool& pool_;
  std::vector<unsigned char> output_storage_;
  Tensor output_;
  std::map<int, std::vector<unsigned char>> workspaces_;
};

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
  auto kernel = def->create(info);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(kernel.status().message()).c_str());
    return 0;
  }
  engine::ThreadPool pool(threads);
  BenchContext ctx(tensors, pool);
  ctx.Declare((*kernel)->DeclareWorkspaceRequirements(shapes));
  for (int i = 0; i < 3; ++i) (void)(*kernel)->Compute(ctx);  // warm-up
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    int iterations = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      absl::Status s = (*kernel)->Compute(ctx);
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", op.c_str(), std::string(s.message()).c_str());
        return 0;
      }
      ++iterations;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < 0.2);
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

onnx::AttributeProto Ints(const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

int Main() {
  engine::KernelRegistry registry;
  if (absl::Status s = RegisterCpuKernels(registry); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("%-48s %8s %12s %10s\n", "kernel", "threads", "time (ms)", "GFLOP/s");
  for (int threads : {1, 2}) {
    for (int64_t n : {256, 1024}) {
      for (bool constant : {false, true}) {
        std::vector<Input> in(2);
        in[0] = {Shape{n, n}, Random(n * n)};
        in[1] = {Shape{n, n}, Random(n * n), constant};
        const double t = TimeNode(registry, "MatMul", {}, in, threads);
        std::printf(
            "%-48s %8d %12.3f %10.1f\n",
            absl::StrCat("MatMul ", n, "x", n, "x", n, constant ? " (constant B, prepacked)" : "")
                .c_str(),
            threads, t * 1e3, 2.0 * n * n * n / t / 1e9);
      }
    }
    for (bool constant : {false, true}) {
      std::vector<Input> in(3);
      in[0] = {Shape{1, 64, 56, 56}, Random(64 * 56 * 56)};
      in[1] = {Shape{64, 64, 3, 3}, Random(64 * 64 * 9), constant};
      in[2] = {Shape{64}, Random(64), constant};
      const double t = TimeNode(registry, "Conv", {Ints("pads", {1, 1, 1, 1})}, in, threads);
      const double flops = 2.0 * 64 * 56 * 56 * 64 * 9;
      std::printf(
          "%-48s %8d %12.3f %10.1f\n",
          absl::StrCat("Conv 1x64x56x56, 3x3, 64->64, pad 1", constant ? " (constant W)" : "")
              .c_str(),
          threads, t * 1e3, flops / t / 1e9);
    }
  }
  return 0;
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main() { return inferd::kernels::cpu::Main(); }

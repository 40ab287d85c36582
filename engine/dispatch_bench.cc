// Dispatch overhead of a session, per node: a chain of N Add nodes on [1] float tensors (the
// kernel does one addition, so what is measured is the runtime around it: the plan step, the
// context, output allocation, value release), run many times. Prints microseconds per node for
// a static plan (every shape known at load) and a dynamic one (a symbolic dim: shapes, outputs
// and workspaces are worked out at run time), as (t(N) - t(1)) / (N - 1), so the per-run cost
// (binding inputs, collecting outputs) is not counted. A program, not a test: it asserts nothing.
//
// Usage: dispatch_bench [--nodes N] [--runs R]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/model.h"
#include "engine/session.h"
#include "engine/testing/model_builder.h"

namespace inferd::engine {
namespace {

// Y = A + B for float32 tensors of one element (the cheapest kernel there is).
class AddOne final : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    absl::StatusOr<Tensor*> out = ctx.MakeOutputTensor(0, DataType::kFloat32, a->shape());
    if (!out.ok()) return out.status();
    (*out)->mutable_data<float>()[0] = a->data<float>()[0] + b->data<float>()[0];
    return absl::OkStatus();
  }
};

// x[1] (or [n] with n symbolic) -> N Adds of the weight `one` -> y.
std::shared_ptr<const Model> ChainModel(int nodes, bool dynamic) {
  testing::ModelBuilder b(17);
  b.Input("x", DataType::kFloat32, {dynamic ? -1 : 1});
  b.Initializer("one", Shape{1}, std::vector<float>{1.0f});
  std::string prev = "x";
  for (int i = 0; i < nodes; ++i) {
    const std::string out = i + 1 == nodes ? "y" : absl::StrCat("v", i);
    b.Node("Add", {prev, "one"}, {out}, absl::StrCat("add", i));
    prev = out;
  }
  b.Output("y", DataType::kFloat32, {dynamic ? -1 : 1});
  absl::StatusOr<std::shared_ptr<const Model>> m = Model::Parse(b.Serialize(), "");
  if (!m.ok()) {
    std::fprintf(stderr, "model: %s\n", std::string(m.status().message()).c_str());
    std::exit(1);
  }
  return *m;
}

// Microseconds per run of a chain of `nodes` (the best of 5 batches of `runs`).
double MicrosPerRun(const KernelRegistry& registry, int nodes, bool dynamic, int runs) {
  absl::StatusOr<std::unique_ptr<Session>> s =
      Session::Create(ChainModel(nodes, dynamic), {}, registry);
  if (!s.ok()) {
    std::fprintf(stderr, "session: %s\n", std::string(s.status().message()).c_str());
    std::exit(1);
  }
  float x = 0.0f;
  InputTensor in{"x", DataType::kFloat32, Shape{1}, &x, sizeof(float)};
  double best = 1e30;
  for (int batch = 0; batch < 6; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < runs; ++r) {
      absl::StatusOr<std::vector<OutputTensor>> out = (*s)->Run({&in, 1});
      if (!out.ok() || *static_cast<const float*>((*out)[0].buffer.data()) != nodes) {
        std::fprintf(stderr, "run failed or wrong\n");
        std::exit(1);
      }
    }
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    if (batch > 0) best = std::min(best, took.count() / runs);  // batch 0 warms up
  }
  return best;
}

}  // namespace
}  // namespace inferd::engine

int main(int argc, char** argv) {
  using namespace inferd::engine;  // NOLINT: a benchmark's main
  int nodes = 200, runs = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--nodes") == 0) nodes = std::max(2, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  KernelRegistry registry;
  KernelDef def;
  def.op_type = "Add";
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<AddOne>();
  };
  if (!registry.Register(std::move(def)).ok()) return 1;
  std::printf("dispatch overhead: chain of %d Add nodes on [1] float, %d runs per batch\n", nodes,
              runs);
  for (bool dynamic : {false, true}) {
    const double one = MicrosPerRun(registry, 1, dynamic, runs);
    const double many = MicrosPerRun(registry, nodes, dynamic, runs);
    std::printf(
        "  %-7s plan: %8.2f us per run of 1 node, %9.2f us per run of %d: %.3f us per node\n",
        dynamic ? "dynamic" : "static", one, many, nodes, (many - one) / (nodes - 1));
  }
  return 0;
}

// rnn_bench: microseconds per run of LSTM, GRU and RNN on their two paths (oneDNN's primitives
// with constant weights; own code with constant weights, and with the weights as run-time
// inputs) at 1 and 2 intra-op
// threads, on the shapes of real models: a streaming voice-activity step (T=1, batch 1, as Silero
// VAD runs its LSTM), a speech encoder layer, a batched sequence model. Each kernel is created
// once (primitives built and weights prepacked at creation) and run repeatedly through a minimal
// KernelContext, so the figures are Compute alone. Not a test: prints a table.
//
//   bazel run -c opt //kernels/cpu:rnn_bench
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

struct Shape4 {
  const char* name;
  int64_t t, n, i, c;
  const char* direction;
};

// Seconds per Compute (testing::SecondsPerCall: thread CPU time with one thread, wall time with
// two).
// path: 0 oneDNN (constant weights); 1 own code with constant weights (a clip of 1e30, which
// changes no value, keeps it off oneDNN); 2 own code with the weights as run-time inputs.
double Time(const std::string& op, const Shape4& s, int path, int threads) {
  const bool constant = path < 2;
  const int64_t d = std::string(s.direction) == "bidirectional" ? 2 : 1;
  const int64_t g = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  const std::vector<TestTensor> inputs = {
      TestTensor::Of<float>({s.t, s.n, s.i}, testing::RandomFloats(s.t * s.n * s.i, 1)),
      TestTensor::Of<float>({d, g * s.c, s.i},
                            testing::RandomFloats(d * g * s.c * s.i, 2, -.1f, .1f)),
      TestTensor::Of<float>({d, g * s.c, s.c},
                            testing::RandomFloats(d * g * s.c * s.c, 3, -.1f, .1f)),
      TestTensor::Of<float>({d, 2 * g * s.c}, testing::RandomFloats(d * 2 * g * s.c, 4))};
  KernelTester spec(op, 14);
  spec.Attr("hidden_size", s.c).Attr("direction", std::string(s.direction)).Threads(threads);
  if (op == "GRU") spec.Attr("linear_before_reset", int64_t{1});
  if (path == 1) spec.Attr("clip", 1e30f);
  for (size_t i = 0; i < inputs.size(); ++i) spec.Input(inputs[i], true, constant && i > 0);
  absl::StatusOr<std::unique_ptr<engine::OpKernel>> kernel =
      spec.Outputs(1).Create(testing::CpuRegistry());
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), kernel.status().ToString().c_str());
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
  absl::StatusOr<double> seconds =
      testing::SecondsPerCall(threads, [&] { return (*kernel)->Compute(ctx); });
  if (!seconds.ok()) {
    std::fprintf(stderr, "%s: %s\n", op.c_str(), seconds.status().ToString().c_str());
    return 0;
  }
  return *seconds;
}

void Run() {
  const Shape4 shapes[] = {
      {"VAD step T1 N1 I128 C128", 1, 1, 128, 128, "forward"},
      {"speech T100 N1 I80 C256 bidi", 100, 1, 80, 256, "bidirectional"},
      {"batched T50 N16 I128 C256", 50, 16, 128, 256, "forward"},
  };
  std::printf("%-5s %-30s %13s %13s %13s %13s %13s %13s\n", "op", "shape", "oneDNN 1t", "own 1t",
              "own(in) 1t", "oneDNN 2t", "own 2t", "own(in) 2t");
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const Shape4& s : shapes) {
      std::printf("%-5s %-30s", op, s.name);
      for (int threads : {1, 2}) {
        for (int path : {0, 1, 2}) {
          std::printf(" %10.1f us", Time(op, s, path, threads) * 1e6);
          std::fflush(stdout);
        }
      }
      std::printf("\n");
    }
  }
  std::printf(
      "own: own code, constant weights (W^T, R^T copied at creation); own(in): own code, weights "
      "as run-time inputs (sgemm on ONNX's layout). GRU with linear_before_reset=1 (lbr_gru).\n");
}

}  // namespace
}  // namespace inferd::kernels::cpu

int main(int argc, char** argv) {
  inferd::ParseCommandLine(argc, argv,
                           "usage: rnn_bench\n\nMicroseconds per run of LSTM, GRU and RNN on "
                           "oneDNN's path and on own code, at 1 and 2 threads.");
  inferd::kernels::cpu::Run();
  return 0;
}

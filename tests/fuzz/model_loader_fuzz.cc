// libFuzzer target over model loading, end to end up to the kernels: random and mutated ONNX
// bytes must give a session or a clear error, never a crash, a hang or a sanitizer report. A
// model that parses also goes through what Session::Load does with it: fusions, partitioning
// across two budgeted devices (dynamic models costed at max_input_shapes, which reloads the
// file), the execution plan and memory planner, and kernel creation with the real CPU kernels
// (oneDNN primitives included): where issue 12's [2^34, 64] SIGFPE lived.
//
// The loader, planner, partitioner and session sources are compiled with clang and instrumented;
// the kernels and oneDNN are linked from Bazel's gcc-built archives (tests/fuzz/BUILD.bazel).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "engine/model.h"
#include "engine/session.h"
#include "kernels/cpu/cpu_kernels.h"

namespace {

using inferd::engine::Model;
using inferd::engine::SessionOptions;

const inferd::engine::KernelRegistry& Registry() {
  static const inferd::engine::KernelRegistry* registry = [] {
    auto* r = new inferd::engine::KernelRegistry();
    if (!inferd::kernels::cpu::RegisterCpuKernels(*r).ok()) std::abort();
    return r;
  }();
  return *registry;
}

void CheckError(const absl::Status& status) {
  if (!status.ok() && status.message().empty()) __builtin_trap();
}

// Session options exercising the budget paths: two host devices with budgets, max shapes for
// every dynamic input (unknown dims 4), fusions and pre-allocation chosen by the input's hash.
SessionOptions OptionsFor(const Model& model, size_t hash) {
  SessionOptions options;
  options.partition.devices.push_back(inferd::partition::DeviceSpec{"cpu:1", uint64_t{1} << 20});
  options.partition.devices.push_back(inferd::partition::DeviceSpec{"cpu:0", uint64_t{1} << 30});
  options.enable_fusions = (hash & 1) == 0;
  options.pre_allocate = (hash & 2) != 0;
  for (int v : model.graph().inputs) {
    const inferd::engine::Value& in = model.graph().values[v];
    if (!in.shape.rank_known || in.shape.IsStatic()) continue;
    std::vector<int64_t> dims;
    for (const inferd::engine::DimInfo& d : in.shape.dims) dims.push_back(d.known() ? d.value : 4);
    options.max_input_shapes[in.name] = dims;
  }
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::shared_ptr<const Model>> model = Model::Parse(bytes, /*model_dir=*/"");
  CheckError(model.status());
  if (!model.ok()) return 0;
  // Session::Load from a file, as the server loads (max_input_shapes reloads the file).
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr ? tmp : "/tmp") + "/model_loader_fuzz_" +
           std::to_string(::getpid()) + ".onnx";
  }();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  const SessionOptions options = OptionsFor(**model, std::hash<std::string>()(bytes));
  CheckError(inferd::engine::Session::Load(path, options, Registry()).status());
  return 0;
}

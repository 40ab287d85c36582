#include "tests/engine/seed_scenarios.h"

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "engine/copy.h"
#include "engine/session.h"
#include "kernels/cpu/cpu_kernels.h"
#include "memory/process_stats.h"

namespace inferd::tests {
namespace {

using engine::DataType;

// Runs before measuring (docs/arenas.md#steady-state-what-must-not-happen-and-how-it-is-tested;
// the kernels' steady path makes no heap allocation, so nothing but the arenas needs warming).
// Three, not one: on some machines (AMD EPYC, 2 cores) an intra-op pool thread first joins the
// work in a later run, and its first touch of its own stack is a minor fault that has nothing to
// do with the arenas (one warm-up gave 1-2 faults there; three give none).
constexpr int kWarmup = 3;

uint64_t Checksum(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// Float inputs for every graph input of `s`, with `dims` replacing dynamic dims.
struct Inputs {
  std::vector<std::vector<float>> data;
  std::vector<engine::InputTensor> tensors;
};

Inputs MakeInputs(const engine::Session& s, int64_t dynamic_dim) {
  Inputs in;
  std::mt19937 rng(3);
  for (const engine::Value* v : s.inputs()) {
    engine::Shape shape;
    for (const engine::DimInfo& d : v->shape.dims)
      shape.push_back(d.known() ? d.value : dynamic_dim);
    std::vector<float> values(static_cast<size_t>(shape.NumElements()));
    for (float& f : values) f = std::uniform_real_distribution<float>(-1, 1)(rng);
    in.data.push_back(std::move(values));
    in.tensors.push_back({v->name, DataType::kFloat32, shape, nullptr, 0});
  }
  for (size_t i = 0; i < in.tensors.size(); ++i) {
    in.tensors[i].data = in.data[i].data();
    in.tensors[i].bytes = in.data[i].size() * sizeof(float);
  }
  return in;
}

struct Counters {
  memory::ArenaStats exec, io;
  long faults;
  uint64_t copied;
  std::chrono::steady_clock::time_point t;
};

// The fault count and the clock are read first, before the stats (which allocate strings).
Counters Snapshot(const engine::Session& s) {
  Counters c;
  c.faults = memory::MinorFaults();
  c.t = std::chrono::steady_clock::now();
  c.copied = engine::PayloadBytesCopied();
  c.exec = s.devices()[0].execution->Stats();
  c.io = s.devices()[0].io->Stats();
  return c;
}

void Fill(ScenarioResult& r, const engine::Session& s, const Counters& a, const Counters& b) {
  r.exec_system_allocations = b.exec.system_allocations - a.exec.system_allocations;
  r.exec_system_frees = b.exec.system_frees - a.exec.system_frees;
  r.io_system_allocations = b.io.system_allocations - a.io.system_allocations;
  r.io_system_frees = b.io.system_frees - a.io.system_frees;
  r.minor_faults = b.faults - a.faults;
  r.payload_bytes_copied = b.copied - a.copied;
  r.exec_peak_live = b.exec.peak_live_bytes;
  r.io_peak_live = b.io.peak_live_bytes;
  r.exec_retained = b.exec.retained_bytes;
  r.io_retained = b.io.retained_bytes;
  if (s.plan().is_static()) {
    r.planned_peak = s.plan().devices()[0].block_bytes;
    r.naive_sum = s.plan().devices()[0].naive_bytes;
  }
  r.ms_per_run = std::chrono::duration<double, std::milli>(b.t - a.t).count() / std::max(1, r.runs);
}

absl::StatusOr<std::unique_ptr<engine::Session>> Open(const engine::KernelRegistry& registry,
                                                      const std::string& path) {
  absl::StatusOr<std::unique_ptr<engine::Session>> s =
      engine::Session::Load(path, engine::SessionOptions{}, registry);
  if (s.ok()) Snapshot(**s);  // the measuring code's own first-touch faults happen here
  return s;
}

// Scenarios 1 and 3: the same inputs run after run, each run's outputs released before the next.
absl::StatusOr<ScenarioResult> RunReleasingOutputs(const engine::KernelRegistry& registry,
                                                   const std::string& path, const char* name,
                                                   const char* model, int runs) {
  INFERD_ASSIGN_OR_RETURN(auto s, Open(registry, path));
  Inputs in = MakeInputs(*s, 1);
  for (int k = 0; k < kWarmup; ++k) INFERD_RETURN_IF_ERROR(s->Run(in.tensors).status());
  ScenarioResult r{name, model, runs};
  const Counters a = Snapshot(*s);
  for (int k = 0; k < runs; ++k) INFERD_RETURN_IF_ERROR(s->Run(in.tensors).status());
  Fill(r, *s, a, Snapshot(*s));
  return r;
}

// Scenario 2: every earlier output kept alive; each must stay unchanged.
absl::StatusOr<ScenarioResult> RunKeepingOutputs(const engine::KernelRegistry& registry,
                                                 const std::string& path, int runs) {
  INFERD_ASSIGN_OR_RETURN(auto s, Open(registry, path));
  Inputs in = MakeInputs(*s, 1);
  for (int k = 0; k < kWarmup; ++k) INFERD_RETURN_IF_ERROR(s->Run(in.tensors).status());
  ScenarioResult r{"every earlier output kept alive", "mlp", runs};
  std::vector<std::vector<engine::OutputTensor>> kept;
  std::vector<uint64_t> sums;
  const Counters a = Snapshot(*s);
  for (int k = 0; k < runs; ++k) {
    in.data[0][0] = static_cast<float>(k);  // each run's outputs differ
    INFERD_ASSIGN_OR_RETURN(std::vector<engine::OutputTensor> out, s->Run(in.tensors));
    sums.push_back(Checksum(out[0].buffer.data(), out[0].buffer.size()));
    kept.push_back(std::move(out));
  }
  Fill(r, *s, a, Snapshot(*s));
  for (size_t k = 0; k < kept.size(); ++k) {
    if (Checksum(kept[k][0].buffer.data(), kept[k][0].buffer.size()) != sums[k]) {
      r.kept_outputs_unchanged = false;
    }
  }
  return r;
}

// Scenario 4: two batch sizes in turn on a dynamic model.
absl::StatusOr<ScenarioResult> RunAlternatingShapes(const engine::KernelRegistry& registry,
                                                    const std::string& path, int runs) {
  INFERD_ASSIGN_OR_RETURN(auto s, Open(registry, path));
  Inputs small = MakeInputs(*s, 4), large = MakeInputs(*s, 64);
  for (int k = 0; k < kWarmup; ++k) {
    INFERD_RETURN_IF_ERROR(s->Run(small.tensors).status());
    INFERD_RETURN_IF_ERROR(s->Run(large.tensors).status());
  }
  ScenarioResult r{"alternating shapes (batch 4 / 64)", "mlp_dynamic", runs};
  const Counters a = Snapshot(*s);
  for (int k = 0; k < runs; ++k) {
    INFERD_RETURN_IF_ERROR(s->Run(k % 2 ? large.tensors : small.tensors).status());
  }
  Fill(r, *s, a, Snapshot(*s));
  return r;
}

// Scenario 5: one huge run, a trim (resident memory must drop), then small runs again.
absl::StatusOr<ScenarioResult> RunTrimAfterLargeRun(const engine::KernelRegistry& registry,
                                                    const std::string& path, int runs) {
  INFERD_ASSIGN_OR_RETURN(auto s, Open(registry, path));
  Inputs small = MakeInputs(*s, 4), huge = MakeInputs(*s, 65536);
  for (int k = 0; k < kWarmup; ++k) INFERD_RETURN_IF_ERROR(s->Run(small.tensors).status());
  INFERD_RETURN_IF_ERROR(s->Run(huge.tensors).status());
  ScenarioResult r{"trim after a one-off large run", "mlp_dynamic", runs};
  r.rss_before_trim = memory::ResidentBytes();
  r.trimmed_bytes = s->devices()[0].execution->Trim() + s->devices()[0].io->Trim();
  r.rss_after_trim = memory::ResidentBytes();
  for (int k = 0; k < kWarmup; ++k) {  // warm again at the small size
    INFERD_RETURN_IF_ERROR(s->Run(small.tensors).status());
  }
  const Counters a = Snapshot(*s);
  for (int k = 0; k < runs; ++k) INFERD_RETURN_IF_ERROR(s->Run(small.tensors).status());
  Fill(r, *s, a, Snapshot(*s));
  return r;
}

}  // namespace

absl::StatusOr<std::vector<ScenarioResult>> RunSeedScenarios(const std::string& models_dir,
                                                             int runs) {
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  engine::KernelRegistry registry;
  INFERD_RETURN_IF_ERROR(kernels::cpu::RegisterCpuKernels(registry));
  const std::string mlp = models_dir + "/mlp/model.onnx";
  const std::string mlp_dynamic = models_dir + "/mlp_dynamic/model.onnx";
  const std::string wide = models_dir + "/wide_bottleneck/model.onnx";
  std::vector<ScenarioResult> results;
  // 1. Outputs destroyed before the next run.
  INFERD_ASSIGN_OR_RETURN(
      ScenarioResult released,
      RunReleasingOutputs(registry, mlp, "outputs released before the next run", "mlp", runs));
  results.push_back(released);
  // 2. Every earlier output kept alive.
  INFERD_ASSIGN_OR_RETURN(ScenarioResult kept, RunKeepingOutputs(registry, mlp, runs));
  results.push_back(kept);
  // 3. Large intermediates, small output.
  INFERD_ASSIGN_OR_RETURN(ScenarioResult wide_result,
                          RunReleasingOutputs(registry, wide, "large intermediates, small output",
                                              "wide_bottleneck", runs));
  results.push_back(wide_result);
  // 4. Alternating shapes.
  INFERD_ASSIGN_OR_RETURN(ScenarioResult alternating,
                          RunAlternatingShapes(registry, mlp_dynamic, runs));
  results.push_back(alternating);
  // 5. Trim after a one-off large run.
  INFERD_ASSIGN_OR_RETURN(ScenarioResult trim, RunTrimAfterLargeRun(registry, mlp_dynamic, runs));
  results.push_back(trim);
  return results;
}

std::string FormatResults(const std::vector<ScenarioResult>& results) {
  std::string out = absl::StrFormat("%-38s %-16s %5s %12s %10s %8s %9s %12s %12s %9s\n", "scenario",
                                    "model", "runs", "exec alloc/free", "io alloc/free", "minflt",
                                    "copied B", "exec peak B", "io peak B", "ms/run");
  for (const ScenarioResult& r : results) {
    absl::StrAppend(
        &out,
        absl::StrFormat("%-38s %-16s %5d %7d/%-7d %5d/%-4d %8d %9d %12d %12d %9.3f\n", r.name,
                        r.model, r.runs, r.exec_system_allocations, r.exec_system_frees,
                        r.io_system_allocations, r.io_system_frees, r.minor_faults,
                        r.payload_bytes_copied, r.exec_peak_live, r.io_peak_live, r.ms_per_run));
    if (r.planned_peak > 0) {
      absl::StrAppend(&out,
                      absl::StrFormat("    static plan: planned peak %d B vs naive sum %d B "
                                      "(%.1f%%)\n",
                                      r.planned_peak, r.naive_sum,
                                      100.0 * r.planned_peak / std::max<uint64_t>(1, r.naive_sum)));
    }
    if (!r.kept_outputs_unchanged) absl::StrAppend(&out, "    KEPT OUTPUTS CHANGED\n");
    if (r.trimmed_bytes > 0) {
      absl::StrAppend(&out,
                      absl::StrFormat("    trim released %d B; resident %.1f MiB -> %.1f MiB\n",
                                      r.trimmed_bytes, r.rss_before_trim / 1048576.0,
                                      r.rss_after_trim / 1048576.0));
    }
  }
  return out;
}

}  // namespace inferd::tests

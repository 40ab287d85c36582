#include "tools/inferctl/run_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/flags.h"
#include "base/npy.h"
#include "base/percentile.h"
#include "base/status_macros.h"
#include "engine/copy.h"
#include "engine/session.h"
#include "kernels/build_kernels.h"
#include "memory/process_stats.h"
#include "partition/partitioner.h"
#include "partition/plan_report.h"
#include "tools/inferctl/inferctl_flags.h"
#include "tools/inferctl/npy_tensor.h"
#include "tools/inferctl/plan_command.h"

namespace inferd::tools {
namespace {

using engine::DataType;

constexpr char kUsage[] =
    "usage: inferctl run MODEL [--input NAME=FILE.npy]... [--random] [--runs N] [--warmup N]\n"
    "                          [--threads T] [--pre-allocate] [--fixed-shape NAME=1x128]...\n"
    "                          [--no-fusions] [--convert-half-weights] [--profile]\n"
    "                          [--output-dir DIR]\n"
    "                          [--devices DEV[=BYTES],...] [--rules RULES]\n"
    "                          [--annotation-rules RULES] [--fallback DEV]\n"
    "Inputs not given as .npy are random (floats in [-1, 1), integers in [0, 8)); dynamic dims\n"
    "without --fixed-shape are 1. With --devices or rules, the model runs partitioned (cpu:N\n"
    "devices are host memory domains) and the partition report is printed; every run prints\n"
    "per device what the partition accounted against what the arenas held at their peak.\n";

struct Args {
  std::string model;
  std::map<std::string, std::string> input_files;
  std::map<std::string, std::vector<int64_t>> fixed_shapes;
  int runs = 10, warmup = 1, threads = 1;
  bool pre_allocate = false, fusions = true, profile = false, convert_half_weights = false;
  std::string output_dir;
  partition::PartitionConfig partition;  // --devices, --rules, --annotation-rules, --fallback
  bool partitioned = false;              // one of those was given
};

// The flags of `inferctl run` (inferctl_flags.h).
const CommandLineSpec& RunSpec() {
  static const CommandLineSpec* spec =
      new CommandLineSpec{kUsage,
                          {"input", "random", "runs", "warmup", "threads", "pre-allocate",
                           "fixed-shape", "no-fusions", "convert-half-weights", "profile",
                           "output-dir", "devices", "rules", "annotation-rules", "fallback"}};
  return *spec;
}

// NAME=VALUE -> {NAME, VALUE}; INVALID_ARGUMENT "--flag takes <form>".
absl::StatusOr<std::pair<std::string, std::string>> NameValue(const std::string& text,
                                                              absl::string_view flag,
                                                              absl::string_view form) {
  std::vector<std::string> kv = absl::StrSplit(text, absl::MaxSplits('=', 1));
  if (kv.size() != 2) return absl::InvalidArgumentError(absl::StrCat(flag, " takes ", form));
  return std::make_pair(kv[0], kv[1]);
}

absl::Status CheckCount(absl::string_view flag, int n) {
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat(flag, ": '", n, "' is not a count"));
  return absl::OkStatus();
}

// The arguments after `run`, read through the flags (ParseArgs has parsed them).
absl::StatusOr<Args> ReadArgs(const ParsedArgs& parsed) {
  Args a;
  for (const std::string& in : absl::GetFlag(FLAGS_input).values) {
    INFERD_ASSIGN_OR_RETURN(auto kv, NameValue(in, "--input", "NAME=FILE.npy"));
    a.input_files[kv.first] = kv.second;
  }
  INFERD_ASSIGN_OR_RETURN(
      a.fixed_shapes, ParseNamedShapes(absl::GetFlag(FLAGS_fixed_shape).values, "--fixed-shape"));
  // --random is the default for inputs without a file.
  a.runs = absl::GetFlag(FLAGS_runs);
  a.warmup = absl::GetFlag(FLAGS_warmup);
  a.threads = absl::GetFlag(FLAGS_threads);
  INFERD_RETURN_IF_ERROR(CheckCount("--runs", a.runs));
  INFERD_RETURN_IF_ERROR(CheckCount("--warmup", a.warmup));
  INFERD_RETURN_IF_ERROR(CheckCount("--threads", a.threads));
  a.pre_allocate = absl::GetFlag(FLAGS_pre_allocate);
  a.profile = absl::GetFlag(FLAGS_profile);
  a.fusions = !absl::GetFlag(FLAGS_no_fusions);
  a.convert_half_weights = absl::GetFlag(FLAGS_convert_half_weights);
  a.output_dir = absl::GetFlag(FLAGS_output_dir);
  if (parsed.given.count("devices")) {
    INFERD_ASSIGN_OR_RETURN(a.partition.devices, ParseDeviceList(absl::GetFlag(FLAGS_devices)));
  }
  a.partition.name_rules = absl::GetFlag(FLAGS_rules);
  a.partition.annotation_rules = absl::GetFlag(FLAGS_annotation_rules);
  a.partition.fallback_device = absl::GetFlag(FLAGS_fallback);
  for (const char* flag : {"devices", "rules", "annotation-rules", "fallback"}) {
    a.partitioned |= parsed.given.count(flag) > 0;
  }
  if (parsed.positional.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown argument '", parsed.positional[1], "'"));
  }
  if (parsed.positional.empty()) return absl::InvalidArgumentError("no MODEL given");
  a.model = parsed.positional[0];
  if (a.runs < 1) return absl::InvalidArgumentError("--runs must be at least 1");
  return a;
}

struct OwnedInput {
  engine::InputTensor tensor;
  std::vector<unsigned char> bytes;
};

absl::StatusOr<std::vector<OwnedInput>> MakeInputs(const engine::Session& s, const Args& a) {
  std::vector<OwnedInput> inputs;
  std::mt19937 rng(42);
  for (const engine::Value* v : s.inputs()) {
    OwnedInput in;
    in.tensor.name = v->name;
    in.tensor.type = v->type;
    auto file = a.input_files.find(v->name);
    if (file != a.input_files.end()) {
      absl::StatusOr<NpyArray> npy = ReadNpy(file->second);
      if (!npy.ok()) return npy.status();
      absl::StatusOr<DataType> t = DataTypeOfNpy(npy->dtype);
      if (!t.ok()) return t.status();
      in.tensor.type = *t;
      in.tensor.shape = engine::Shape(npy->shape);
      in.bytes = std::move(npy->data);
    } else {
      for (const engine::DimInfo& d : v->shape.dims)
        in.tensor.shape.push_back(d.known() ? d.value : 1);
      const size_t n = static_cast<size_t>(in.tensor.shape.NumElements());
      in.bytes.resize(n * engine::ElementSize(v->type));
      for (size_t i = 0; i < n; ++i) {
        switch (v->type) {
          case DataType::kFloat32:
            reinterpret_cast<float*>(in.bytes.data())[i] =
                std::uniform_real_distribution<float>(-1, 1)(rng);
            break;
          case DataType::kInt64:
            reinterpret_cast<int64_t*>(in.bytes.data())[i] = rng() % 8;
            break;
          case DataType::kInt32:
            reinterpret_cast<int32_t*>(in.bytes.data())[i] = rng() % 8;
            break;
          case DataType::kFloat64:
            reinterpret_cast<double*>(in.bytes.data())[i] =
                std::uniform_real_distribution<double>(-1, 1)(rng);
            break;
          case DataType::kFloat16: {  // sign, exponent 1..14, mantissa: magnitudes in [2^-14, 1)
            const uint32_t r = rng();
            reinterpret_cast<uint16_t*>(in.bytes.data())[i] = static_cast<uint16_t>(
                ((r & 1u) << 15) | ((1u + (r >> 1) % 14u) << 10) | ((r >> 8) & 0x3ffu));
            break;
          }
          case DataType::kBFloat16: {  // the upper half of a float32 in [-1, 1)
            const float f = std::uniform_real_distribution<float>(-1, 1)(rng);
            uint32_t bits;
            std::memcpy(&bits, &f, sizeof(bits));
            reinterpret_cast<uint16_t*>(in.bytes.data())[i] = static_cast<uint16_t>(bits >> 16);
            break;
          }
          case DataType::kInt8:
          case DataType::kUint8:
            in.bytes[i] = static_cast<uint8_t>(rng() % 8);
            break;
          case DataType::kBool:
            in.bytes[i] = rng() % 2;
            break;
          default:
            return absl::InvalidArgumentError(
                absl::StrCat("input '", v->name, "' of type ", engine::DataTypeName(v->type),
                             " cannot be made random; give it with --input"));
        }
      }
    }
    inputs.push_back(std::move(in));
  }
  for (OwnedInput& in : inputs) {
    in.tensor.data = in.bytes.data();
    in.tensor.bytes = in.bytes.size();
  }
  return inputs;
}

// Time per step (mean over the runs), slowest first, then by operator.
void PrintProfile(const engine::Session& s, const std::vector<double>& micros, size_t runs) {
  std::vector<std::pair<double, size_t>> steps;
  std::map<std::string, double> by_op;
  double total = 0;
  for (size_t k = 0; k < micros.size(); ++k) {
    const double us = micros[k] / std::max<size_t>(1, runs);
    steps.emplace_back(us, k);
    by_op[s.graph().nodes[s.plan().steps()[k].node].op_type] += us;
    total += us;
  }
  std::sort(steps.rbegin(), steps.rend());
  std::printf("profile: %.1f us per run in kernels (mean over %zu runs)\n", total, runs);
  std::vector<std::pair<double, std::string>> ops;
  for (const auto& [op, us] : by_op) ops.emplace_back(us, op);
  std::sort(ops.rbegin(), ops.rend());
  for (const auto& [us, op] : ops) {
    std::printf("  %-24s %9.1f us %5.1f%%\n", op.c_str(), us, 100 * us / std::max(total, 1e-9));
  }
  for (size_t i = 0; i < steps.size() && i < 15; ++i) {
    const engine::Node& n = s.graph().nodes[s.plan().steps()[steps[i].second].node];
    std::printf("  %9.1f us  %-18s %s\n", steps[i].first, n.op_type.c_str(), n.name.c_str());
  }
}

// System allocations and frees of every arena of the session.
struct SystemCounts {
  uint64_t allocs = 0, frees = 0;
};

SystemCounts CountSystemCalls(const engine::Session& s) {
  SystemCounts c;
  for (const auto& d : s.devices()) {
    for (const memory::Arena* a : {static_cast<const memory::Arena*>(d.execution.get()),
                                   static_cast<const memory::Arena*>(d.io.get())}) {
      c.allocs += a->Stats().system_allocations;
      c.frees += a->Stats().system_frees;
    }
  }
  return c;
}

// Per device: what the partition accounted (what budgets were checked against) against what
// the device held: its weights plus its arenas' peaks over the runs.
void PrintAccountedVsMeasured(const engine::Session& s) {
  std::printf("memory per device: accounted at partitioning vs measured (weights + arena peaks)\n");
  for (const engine::DeviceArenas& d : s.devices()) {
    const partition::DeviceReport* r = s.partition_report().FindDevice(d.device);
    if (r == nullptr) continue;
    const uint64_t execution = d.execution->Stats().peak_live_bytes;
    const uint64_t io = d.io->Stats().peak_live_bytes;
    const uint64_t measured = r->accounted.weights + execution + io;
    const uint64_t accounted = r->accounted.total();
    std::printf(
        "  %s: accounted %llu bytes (%s), measured %llu bytes (%s: weights %llu + execution "
        "peak %llu + io peak %llu), accounted/measured %.3f\n",
        d.device.c_str(), static_cast<unsigned long long>(accounted),
        partition::FormatBytes(accounted).c_str(), static_cast<unsigned long long>(measured),
        partition::FormatBytes(measured).c_str(),
        static_cast<unsigned long long>(r->accounted.weights),
        static_cast<unsigned long long>(execution), static_cast<unsigned long long>(io),
        measured == 0 ? 0.0 : static_cast<double>(accounted) / static_cast<double>(measured));
  }
}

// Latency percentiles of the measured runs (`ms`, one per run), what each run cost the system
// after warm-up, the arenas, the kernels' own memory.
void PrintFigures(const engine::Session& s, const std::vector<double>& ms, int threads,
                  const SystemCounts& sys0, const SystemCounts& sys1, long faults,
                  uint64_t copied) {
  const double runs = static_cast<double>(ms.size());
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf("latency over %zu runs (%d threads): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n",
              ms.size(), threads, Percentile(sorted, 50), Percentile(sorted, 90),
              Percentile(sorted, 99));
  std::printf(
      "per run after warm-up: %.2f system allocations, %.2f system frees, %.2f minor page "
      "faults, %.0f payload bytes copied\n",
      (sys1.allocs - sys0.allocs) / runs, (sys1.frees - sys0.frees) / runs, faults / runs,
      copied / runs);
  for (const auto& d : s.devices()) {
    std::printf("%s\n%s\n", d.execution->Stats().ToString().c_str(),
                d.io->Stats().ToString().c_str());
  }
  std::printf("kernels hold %llu bytes outside the arenas (prepacked weights)\n",
              static_cast<unsigned long long>(s.stats().kernel_persistent_bytes));
  PrintAccountedVsMeasured(s);
}

// One line per output; with an output directory, DIR/<output>.npy too. Returns the exit code.
int PrintOutputs(const std::vector<engine::OutputTensor>& outputs, const std::string& output_dir) {
  for (const engine::OutputTensor& out : outputs) {
    std::printf("output %s: %s %s\n", out.name.c_str(), engine::DataTypeName(out.type),
                out.shape.ToString().c_str());
    if (output_dir.empty()) continue;
    NpyArray npy;
    npy.dtype = NpyDtype(out.type);
    npy.shape.assign(out.shape.dims().begin(), out.shape.dims().end());
    const auto* p = static_cast<const unsigned char*>(out.buffer.data());
    npy.data.assign(p, p + out.buffer.size());
    std::string file = out.name;
    std::replace(file.begin(), file.end(), '/', '_');
    const std::string path = absl::StrCat(output_dir, "/", file, ".npy");
    if (absl::Status st = WriteNpy(path, npy); !st.ok()) {
      std::fprintf(stderr, "inferctl run: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::printf("  written to %s\n", path.c_str());
  }
  return 0;
}

}  // namespace

int RunCommand(const std::vector<std::string>& raw_args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(raw_args, RunSpec());
  if (parsed.ok() && parsed->help) {
    std::fputs(FlagsHelp(RunSpec()).c_str(), stdout);
    return 0;
  }
  absl::StatusOr<Args> args = parsed.ok() ? ReadArgs(*parsed) : parsed.status();
  if (!args.ok()) {
    std::fprintf(stderr, "inferctl run: %s\n%s", std::string(args.status().message()).c_str(),
                 kUsage);
    return 2;
  }
  engine::KernelRegistry registry;
  if (absl::Status st = kernels::RegisterBuildKernels(registry); !st.ok()) {
    std::fprintf(stderr, "inferctl: %s\n", st.ToString().c_str());
    return 1;
  }
  engine::SessionOptions opts;
  opts.device_runtimes = kernels::BuildDeviceRuntimes();
  opts.intra_op_threads = std::max(1, args->threads);
  opts.pre_allocate = args->pre_allocate;
  opts.fixed_input_shapes = args->fixed_shapes;
  opts.enable_fusions = args->fusions;
  opts.keep_half_weights = !args->convert_half_weights;
  opts.partition = args->partition;
  absl::StatusOr<std::unique_ptr<engine::Session>> session =
      engine::Session::Load(args->model, opts, registry);
  if (!session.ok()) {
    std::fprintf(stderr, "inferctl run: cannot load '%s': %s\n", args->model.c_str(),
                 std::string(session.status().message()).c_str());
    return 1;
  }
  engine::Session& s = **session;
  absl::StatusOr<std::vector<OwnedInput>> inputs = MakeInputs(s, *args);
  if (!inputs.ok()) {
    std::fprintf(stderr, "inferctl run: %s\n", std::string(inputs.status().message()).c_str());
    return 1;
  }
  std::vector<engine::InputTensor> feed;
  for (const OwnedInput& in : *inputs) feed.push_back(in.tensor);

  std::printf("model %s: %zu nodes (%d fused, %d values blocked), %s\n", args->model.c_str(),
              s.graph().nodes.size(), s.fused_nodes(), s.blocked_values(),
              s.plan().Summary().c_str());
  if (args->partitioned) std::fputs(s.partition_report().ToString().c_str(), stdout);
  if (s.half_precision().any_half()) {
    std::printf("half precision: %s\n", s.half_precision().Summary().c_str());
  }
  absl::StatusOr<std::vector<engine::OutputTensor>> outputs;
  for (int i = 0; i < args->warmup; ++i) {
    outputs = s.Run(feed);
    if (!outputs.ok()) break;
    outputs->clear();
  }
  const SystemCounts sys0 = CountSystemCalls(s);
  const long faults0 = memory::MinorFaults();
  const uint64_t copied0 = engine::PayloadBytesCopied();
  std::vector<double> ms;
  ms.reserve(args->runs);  // no allocation (and page faults) of ours inside the measured runs
  std::vector<double> step_micros;
  engine::RunOptions run_options;
  if (args->profile) run_options.step_micros = &step_micros;
  for (int i = 0; i < args->runs && (outputs.ok() || i == 0); ++i) {
    if (outputs.ok()) outputs->clear();  // each run's outputs go back before the next
    const auto t0 = std::chrono::steady_clock::now();
    outputs = s.Run(feed, {}, run_options);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!outputs.ok()) {
    std::fprintf(stderr, "inferctl run: %s\n", std::string(outputs.status().message()).c_str());
    return 1;
  }
  const long faults = memory::MinorFaults() - faults0;
  PrintFigures(s, ms, opts.intra_op_threads, sys0, CountSystemCalls(s), faults,
               engine::PayloadBytesCopied() - copied0);
  if (args->profile) PrintProfile(s, step_micros, ms.size());
  return PrintOutputs(*outputs, args->output_dir);
}

}  // namespace inferd::tools

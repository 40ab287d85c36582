#include "tools/inferctl/plan_command.h"

#include <cstdio>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/model.h"
#include "engine/registry_workspace_estimator.h"
#include "engine/rewrites.h"
#include "kernels/cpu/cpu_kernels.h"
#include "partition/partitioner.h"
#include "server/config.h"

namespace inferd::tools {
namespace {

constexpr char kUsage[] =
    "usage: inferctl plan MODEL [--devices DEV[=BYTES],...] [--rules RULES]\n"
    "                           [--annotation-rules RULES] [--input-shape NAME=1x128]...\n"
    "                           [--fallback DEV] [--fallback-on-missing-device] [--no-fusions]\n"
    "                           [--nodes]\n"
    "Prints the partition plan: per device nodes, weights, activations, workspace, budget and\n"
    "headroom; boundary copies; per layer devices and bytes. Runs nothing; needs no device.\n"
    "  --devices   devices and budgets, e.g. cuda:0=6GiB,cpu (default: cpu)\n"
    "  --rules     name rules, e.g. \"cuda:0(layers.[0-15]/); cpu(layers.[16-31]/)\"\n"
    "  --input-shape  the largest shape of a dynamic input (repeatable)\n"
    "  --nodes     also print one line per node\n";

absl::StatusOr<std::vector<int64_t>> ParseShape(absl::string_view text) {
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(text, 'x')) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(d, &dim) || dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape: bad dim '", d, "' in '", text, "' (expected 1x128)"));
    }
    dims.push_back(dim);
  }
  return dims;
}

}  // namespace

absl::StatusOr<std::vector<partition::DeviceSpec>> ParseDeviceList(absl::string_view text) {
  std::vector<partition::DeviceSpec> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    absl::StatusOr<std::string> name =
        partition::NormalizeDeviceName(absl::StripAsciiWhitespace(kv.first));
    if (!name.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--devices: ", name.status().message()));
    }
    partition::DeviceSpec spec;
    spec.name = *name;
    if (item.find('=') != absl::string_view::npos) {
      absl::StatusOr<uint64_t> bytes = server::ParseByteSize(absl::StripAsciiWhitespace(kv.second));
      if (!bytes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--devices: budget of ", spec.name, ": ", bytes.status().message()));
      }
      spec.budget_bytes = *bytes;
    }
    out.push_back(std::move(spec));
  }
  return out;
}

absl::StatusOr<PlanArgs> ParsePlanArgs(const std::vector<std::string>& args) {
  PlanArgs a;
  bool devices_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> absl::StatusOr<std::string> {
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(arg + " needs a value");
      return args[++i];
    };
    absl::StatusOr<std::string> v;
    if (arg == "--devices") {
      if (!(v = value()).ok()) return v.status();
      absl::StatusOr<std::vector<partition::DeviceSpec>> devices = ParseDeviceList(*v);
      if (!devices.ok()) return devices.status();
      a.devices = *std::move(devices);
      devices_given = true;
    } else if (arg == "--rules") {
      if (!(v = value()).ok()) return v.status();
      a.rules = *v;
    } else if (arg == "--annotation-rules") {
      if (!(v = value()).ok()) return v.status();
      a.annotation_rules = *v;
    } else if (arg == "--fallback") {
      if (!(v = value()).ok()) return v.status();
      a.fallback = *v;
    } else if (arg == "--fallback-on-missing-device") {
      a.fallback_on_missing_device = true;
    } else if (arg == "--input-shape") {
      if (!(v = value()).ok()) return v.status();
      std::vector<std::string> kv = absl::StrSplit(*v, absl::MaxSplits('=', 1));
      if (kv.size() != 2 || kv[0].empty()) {
        return absl::InvalidArgumentError("--input-shape takes NAME=1x128");
      }
      absl::StatusOr<std::vector<int64_t>> dims = ParseShape(kv[1]);
      if (!dims.ok()) return dims.status();
      a.input_shapes[kv[0]] = *std::move(dims);
    } else if (arg == "--no-fusions") {
      a.fusions = false;
    } else if (arg == "--nodes") {
      a.show_nodes = true;
    } else if (!arg.empty() && arg[0] != '-' && a.model.empty()) {
      a.model = arg;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", arg, "'"));
    }
  }
  if (a.model.empty()) return absl::InvalidArgumentError("no MODEL given");
  if (!devices_given) a.devices = {partition::DeviceSpec{"cpu:0", std::nullopt, true}};
  return a;
}

absl::StatusOr<std::string> MakePlan(const PlanArgs& args) {
  engine::ModelLoadOptions load;
  load.fixed_input_shapes = args.input_shapes;
  absl::StatusOr<std::shared_ptr<const engine::Model>> model =
      engine::Model::Load(args.model, load);
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat("cannot load '", args.model, "': ", model.status().message()));
  }
  engine::KernelRegistry registry;
  if (absl::Status st = kernels::cpu::RegisterCpuKernels(registry); !st.ok()) return st;
  engine::Graph graph = (*model)->graph();
  int fused = 0;
  if (args.fusions) {
    absl::StatusOr<int> n = engine::ApplyFusions(graph, registry);
    if (!n.ok()) return n.status();
    fused = *n;
  }
  partition::PartitionConfig config;
  config.devices = args.devices;
  config.name_rules = args.rules;
  config.annotation_rules = args.annotation_rules;
  config.fallback_device = args.fallback;
  config.fallback_on_missing_device = args.fallback_on_missing_device;
  const engine::RegistryWorkspaceEstimator estimator(registry);
  absl::StatusOr<partition::PartitionResult> result =
      partition::Partition(graph, estimator, config);
  if (!result.ok()) return result.status();
  std::string out = absl::StrCat("model: ", args.model, " (", graph.nodes.size(), " nodes",
                                 args.fusions ? absl::StrCat(" after ", fused, " fusions") : "",
                                 "; workspace: CPU kernels' estimates on cpu:N, 1.5x heuristic "
                                 "elsewhere)\n",
                                 result->report.ToString());
  if (args.show_nodes) absl::StrAppend(&out, "nodes:\n", result->report.NodesToString());
  return out;
}

int PlanCommand(const std::vector<std::string>& raw_args) {
  absl::StatusOr<PlanArgs> args = ParsePlanArgs(raw_args);
  if (!args.ok()) {
    std::fprintf(stderr, "inferctl plan: %s\n%s", std::string(args.status().message()).c_str(),
                 kUsage);
    return 2;
  }
  absl::StatusOr<std::string> plan = MakePlan(*args);
  if (!plan.ok()) {
    std::fprintf(stderr, "inferctl plan: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  std::fputs(plan->c_str(), stdout);
  return 0;
}

}  // namespace inferd::tools

#include "tools/inferctl/plan_command.h"

#include <cstdio>
#include <memory>
#include <set>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/byte_size.h"
#include "base/device_name.h"
#include "base/flags.h"
#include "base/status_macros.h"
#include "engine/constant_folding.h"
#include "engine/lowerings.h"
#include "engine/model.h"
#include "engine/registry_workspace_estimator.h"
#include "engine/rewrites.h"
#include "kernels/build_kernels.h"
#include "partition/device.h"
#include "partition/partitioner.h"
#include "tools/inferctl/inferctl_flags.h"

namespace inferd::tools {
namespace {

constexpr char kUsage[] =
    "usage: inferctl plan MODEL [--devices DEV[=BYTES],...] [--rules RULES]\n"
    "                           [--annotation-rules RULES] [--input-shape NAME=1x128]...\n"
    "                           [--fallback DEV] [--fallback-on-missing-device] [--no-fusions]\n"
    "                           [--nodes]\n"
    "Prints the partition plan: per device nodes, weights, activations, workspace, budget and\n"
    "headroom; boundary copies; per layer devices and bytes. Runs nothing; needs no device.\n";

// The flags of `inferctl plan` (inferctl_flags.h).
const CommandLineSpec& PlanSpec() {
  static const CommandLineSpec* spec =
      new CommandLineSpec{kUsage,
                          {"devices", "rules", "annotation-rules", "input-shape", "fallback",
                           "fallback-on-missing-device", "no-fusions", "nodes"}};
  return *spec;
}

// The load's estimator, except for device kinds this build has no kernel for at all (cuda in a
// CPU-only build): plan as if every node ran there, since the plan is what a build with those
// kernels would do. Where the build has the kind's kernels, nodes without one go to the fallback,
// as at load.
class PlanEstimator final : public engine::RegistryWorkspaceEstimator {
 public:
  explicit PlanEstimator(const engine::KernelRegistry& registry)
      : RegistryWorkspaceEstimator(registry) {
    for (const engine::KernelDef* d : registry.Defs()) kinds_.insert(d->device_type);
  }
  bool HasKernel(const engine::Graph& graph, int node, absl::string_view device) const override {
    if (kinds_.count(engine::DeviceKind(partition::DeviceType(device))) == 0) return true;
    return RegistryWorkspaceEstimator::HasKernel(graph, node, device);
  }

 private:
  std::set<engine::DeviceKind> kinds_;
};

}  // namespace

absl::StatusOr<std::vector<partition::DeviceSpec>> ParseDeviceList(absl::string_view text) {
  std::vector<partition::DeviceSpec> out;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    absl::StatusOr<std::string> name = NormalizeDeviceName(absl::StripAsciiWhitespace(kv.first));
    if (!name.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--devices: ", name.status().message()));
    }
    partition::DeviceSpec spec;
    spec.name = *name;
    if (item.find('=') != absl::string_view::npos) {
      absl::StatusOr<uint64_t> bytes = ParseByteSize(absl::StripAsciiWhitespace(kv.second));
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
  INFERD_ASSIGN_OR_RETURN(ParsedArgs parsed, ParseArgs(args, PlanSpec()));
  if (parsed.help) return absl::InvalidArgumentError("--help: see PlanCommand");
  PlanArgs a;
  if (parsed.given.count("devices")) {
    INFERD_ASSIGN_OR_RETURN(a.devices, ParseDeviceList(absl::GetFlag(FLAGS_devices)));
  } else {
    a.devices = {partition::DeviceSpec{"cpu:0", std::nullopt, true}};
  }
  a.rules = absl::GetFlag(FLAGS_rules);
  a.annotation_rules = absl::GetFlag(FLAGS_annotation_rules);
  a.fallback = absl::GetFlag(FLAGS_fallback);
  a.fallback_on_missing_device = absl::GetFlag(FLAGS_fallback_on_missing_device);
  INFERD_ASSIGN_OR_RETURN(
      a.input_shapes, ParseNamedShapes(absl::GetFlag(FLAGS_input_shape).values, "--input-shape"));
  a.fusions = !absl::GetFlag(FLAGS_no_fusions);
  a.show_nodes = absl::GetFlag(FLAGS_nodes);
  if (parsed.positional.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown argument '", parsed.positional[1], "'"));
  }
  if (parsed.positional.empty()) return absl::InvalidArgumentError("no MODEL given");
  a.model = parsed.positional[0];
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
  if (absl::Status st = kernels::RegisterBuildKernels(registry); !st.ok()) return st;
  engine::Graph graph = (*model)->graph();
  int fused = 0;
  engine::DerivedWeights derived;  // lowered and folded weights, as long as `graph`
  // As the session does: the lowerings and constant folding always, the fusions unless turned
  // off.
  if (absl::Status st = engine::ApplyLowerings(graph, registry, derived).status(); !st.ok()) {
    return st;
  }
  absl::StatusOr<int> folded = engine::FoldConstants(graph, registry, derived);
  if (!folded.ok()) return folded.status();
  if (args.fusions) {
    absl::StatusOr<int> n = engine::ApplyFusions(graph, registry, derived);
    if (!n.ok()) return n.status();
    fused = *n;
  }
  partition::PartitionConfig config;
  config.devices = args.devices;
  config.name_rules = args.rules;
  config.annotation_rules = args.annotation_rules;
  config.fallback_device = args.fallback;
  config.fallback_on_missing_device = args.fallback_on_missing_device;
  const PlanEstimator estimator(registry);
  absl::StatusOr<partition::PartitionResult> result =
      partition::Partition(graph, estimator, config);
  if (!result.ok()) return result.status();
  std::string after = *folded > 0 ? absl::StrCat(*folded, " folded at load") : "";
  if (args.fusions) absl::StrAppend(&after, after.empty() ? "" : " and ", fused, " fusions");
  std::string out = absl::StrCat("model: ", args.model, " (", graph.nodes.size(), " nodes",
                                 after.empty() ? "" : absl::StrCat(" after ", after),
                                 "; workspace: CPU kernels' estimates on cpu:N, 1.5x heuristic "
                                 "elsewhere)\n",
                                 result->report.ToString());
  if (args.show_nodes) absl::StrAppend(&out, "nodes:\n", result->report.NodesToString());
  return out;
}

int PlanCommand(const std::vector<std::string>& raw_args) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(raw_args, PlanSpec());
  if (parsed.ok() && parsed->help) {
    std::fputs(FlagsHelp(PlanSpec()).c_str(), stdout);
    return 0;
  }
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

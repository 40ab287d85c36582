// `inferctl plan`: prints a model's partition plan (PlanReport) without running it and without
// any of the devices present, so that an operator can size budgets on a laptop:
//
//   inferctl plan MODEL --devices cuda:0=6GiB,cpu [--rules "..."] [--annotation-rules "..."]
//                 [--input-shape NAME=1x128]... [--fallback DEV] [--fallback-on-missing-device]
//                 [--no-fusions] [--nodes]
//
// It loads the model as the server does (engine::Model::Load: weights stay in the file or its
// protobuf, mapped, never copied to a device), with --input-shape fixing dynamic inputs (give
// the largest shapes the model will serve), applies the fusions of the CPU kernel registry
// (engine::ApplyFusions; fused nodes keep their names' layer part, so rules still match), and
// runs partition::Partition. Every device on --devices counts as present.
//
// Workspace on devices without kernels here (cuda:N: this tool registers the CPU kernels only)
// is the 1.5x heuristic, never the CPU kernels' estimates: a oneDNN scratchpad says nothing about
// cuBLAS or cuDNN workspace, and the heuristic is the conservative choice. cpu:N devices use the
// CPU kernels' exact estimates where they have them.
//
// Exit codes: 0 plan printed; 1 the model cannot be loaded or does not fit (the refusal, with the
// numbers, on stderr); 2 bad arguments.
#ifndef INFERD_TOOLS_INFERCTL_PLAN_COMMAND_H_
#define INFERD_TOOLS_INFERCTL_PLAN_COMMAND_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "partition/device.h"

namespace inferd::tools {

struct PlanArgs {
  std::string model;
  std::vector<partition::DeviceSpec> devices;  // from --devices, in order
  std::string rules;                           // --rules (name rules)
  std::string annotation_rules;
  std::string fallback = "cpu:0";
  bool fallback_on_missing_device = false;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  bool fusions = true;
  bool show_nodes = false;
};

// argv after "plan" (flags as inferctl_flags.h; --help is PlanCommand's). INVALID_ARGUMENT with
// what is wrong.
absl::StatusOr<PlanArgs> ParsePlanArgs(const std::vector<std::string>& args);

// "cuda:0=6GiB,cpu" -> {cuda:0, 6 GiB}, {cpu:0, no budget}.
absl::StatusOr<std::vector<partition::DeviceSpec>> ParseDeviceList(absl::string_view text);

// Loads, fuses and partitions; returns the text to print. The partitioner's refusal (the model
// does not fit) and load errors come back as the status.
absl::StatusOr<std::string> MakePlan(const PlanArgs& args);

// Returns the process exit code.
int PlanCommand(const std::vector<std::string>& args);

}  // namespace inferd::tools

#endif  // INFERD_TOOLS_INFERCTL_PLAN_COMMAND_H_

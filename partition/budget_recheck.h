// RecheckBudgets: the budget re-check once the kernels are made. The partition counted each
// node's workspace from its kernel's estimate (or the 1.5x heuristic) before any kernel existed;
// a made kernel declares its exact workspace (OpKernel::DeclareWorkspaceRequirements). A device
// needs, after the re-check, what the engine measured for it (DeviceReport::measured_bytes: its
// weights and the arena peaks of its static plan) when the session set it, else its accounted
// total with the counted workspace of every node replaced by the declared one; the re-check
// warns where that exceeds the device's budget, naming the nodes whose workspace grew.
// It only warns: the engine adds the warnings to the partition report (Session::Create).
//
// A declared node is matched to the report's node of the same name, else to the node its name
// derives from (engine::OriginalNodeName: "<original>/MatMulAddFusion"), each report node at
// most once; a node the partition never saw (a boundary copy) counts from 0.
// Plain data and a pure function; thread-compatible.
//
// Example:
//   std::vector<DeclaredWorkspace> declared = {{"conv1", "cpu:1", 4096}, ...};
//   RecheckResult r = RecheckBudgets(report, declared);
//   for (const std::string& w : r.warnings) report.warnings.push_back(w);
#ifndef INFERD_PARTITION_BUDGET_RECHECK_H_
#define INFERD_PARTITION_BUDGET_RECHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "partition/plan_report.h"

namespace inferd::partition {

// The workspace a made kernel declares for one node of the graph as it runs.
struct DeclaredWorkspace {
  std::string node;    // node name
  std::string device;  // "cpu:0"
  uint64_t bytes = 0;  // sum of its declared workspaces
};

struct DeviceRecheck {
  std::string device;
  std::optional<uint64_t> budget_bytes;
  uint64_t before = 0;  // accounted at partitioning
  uint64_t after = 0;   // with the declared workspaces in place of the counted ones
};

struct RecheckResult {
  std::vector<DeviceRecheck> devices;  // in report order
  std::vector<std::string> warnings;   // one per device over its budget
};

RecheckResult RecheckBudgets(const PlanReport& report,
                             absl::Span<const DeclaredWorkspace> declared);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_BUDGET_RECHECK_H_

// PlanReport: what a partition decided and what it costs, per device, per layer and per node,
// as data (the engine returns it; the admin RPC serves it) and as text an operator can read
// (ToString, logged at load and printed by `inferctl plan`).
//
// Per device: nodes; *accounted* bytes, which budgets are checked against: weights +
// activations (the liveness-planned block of intermediates, incoming copies and estimated
// workspaces at its arena size class, plus the graph outputs made there: PlanDeviceActivations,
// with every node's device known) + workspace (the 1.5x heuristic of nodes whose kernel has no
// estimate); the block's planned peak and, for comparison, the plain sum of the node outputs;
// the *measured* bytes once the engine has made the kernels and its plan (weights + the arena
// peaks of one run, set by the session); budget and headroom.
// Per layer (LayerDetector): devices and accounted bytes. Boundary copies. Warnings.
//
// The budget re-check once kernels are made is partition/budget_recheck.h.
// Plain data and pure functions; thread-compatible.
//
// Example:
//   absl::StatusOr<PartitionResult> r = Partition(graph, estimator, config);
//   std::puts(r->report.ToString().c_str());
#ifndef INFERD_PARTITION_PLAN_REPORT_H_
#define INFERD_PARTITION_PLAN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/graph.h"
#include "partition/boundary_copies.h"
#include "partition/device.h"
#include "partition/layering_index.h"
#include "partition/resource_accountant.h"
#include "partition/rule_parser.h"

namespace inferd::partition {

struct DeviceReport {
  std::string device;
  bool fallback = false;
  std::optional<uint64_t> budget_bytes;
  int nodes = 0;
  ResourceCost accounted;                  // what the budget is checked against
  uint64_t activation_peak_bytes = 0;      // the block's planned peak (before its size class)
  bool activation_peak_planned = true;     // false: some shape unknown, counted as 0
  uint64_t activation_sum_bytes = 0;       // sum of the node outputs, unplanned (for comparison)
  uint64_t estimated_workspace_bytes = 0;  // kernel estimates, planned inside the block
  // Weights + the engine's arena peaks for one run (its static plan, kernels made): set by the
  // session after load; nullopt before, or when shapes are dynamic.
  std::optional<uint64_t> measured_bytes;
  int workspace_estimated_nodes = 0;  // workspace from the kernel's estimate
  int workspace_heuristic_nodes = 0;  // workspace from the 1.5x heuristic
  int copies_in = 0;                  // boundary copies made on this device
  uint64_t copy_in_bytes = 0;

  // budget - accounted total (negative when over); nullopt without a budget.
  std::optional<int64_t> headroom_bytes() const;
};

struct LayerReport {
  std::string layer;  // "layers.5"; empty for the nodes outside any layer
  std::vector<std::pair<std::string, int>> devices;  // (device, nodes), in first-seen order
  int nodes = 0;
  uint64_t bytes = 0;  // accounted
};

struct NodeReport {
  std::string name;
  std::string op_type;
  std::string device;
  std::string layer;                 // empty: outside any layer
  std::optional<PatternMatch> rule;  // the rule that claimed it, if any
  NodeCost cost;                     // as accounted on `device`
  std::vector<std::string> outputs;  // value names
};

struct PlanReport {
  std::string mode;  // "name rules (2 rules, 32 patterns)", "budget only", ...
  std::string fallback_device;
  std::vector<DeviceReport> devices;  // in config order, the fallback included
  std::vector<LayerReport> layers;    // in graph order
  std::vector<NodeReport> nodes;      // by node index
  std::vector<BoundaryCopy> copies;
  std::vector<std::string> notes;     // how the split was made
  std::vector<std::string> warnings;  // what an operator should look at

  const DeviceReport* FindDevice(absl::string_view device) const;
  // The device table, copies, layers, notes and warnings.
  std::string ToString() const;
  // One line per node: index, device, layer, cost by category, name.
  std::string NodesToString() const;
};

// What BuildPlanReport needs (the partitioner fills it).
struct PlanInputs {
  const engine::Graph* graph = nullptr;
  std::vector<DeviceSpec> devices;  // normalised names, report order; the fallback among them
  std::string fallback_device;
  std::string mode;
  std::vector<std::string> node_device;                // by node index
  std::vector<NodeCost> node_costs;                    // by node index
  std::vector<std::optional<PatternMatch>> node_rule;  // by node index, or empty
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  LayerDetector layers;
};

PlanReport BuildPlanReport(const PlanInputs& in);

// "512 B", "200.0 KiB", "6.00 GiB".
std::string FormatBytes(uint64_t bytes);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_PLAN_REPORT_H_

// Partition: decides, once at model load, which device runs each node of a graph, within each
// device's memory budget, and reports what that costs (PlanReport).
//
// Modes (see partition/rule_parser.h for the rule grammar):
//   - rules (name or annotation, not both): each node goes to the device of the rule that claims
//     it; nodes of no rule go to the fallback device. A device with a budget takes the nodes of
//     its rules in rule order (within a rule, by pattern, then graph order) until the next node
//     would exceed the budget; from then on that device takes nothing more and the remaining
//     nodes go to the fallback (a warning says where the cut fell).
//   - budget only (no rules; some device other than the fallback has a budget): the devices with
//     budgets are filled most capable first (cuda:N, then cpu:N > 0), each with the next run of
//     the graph, a whole layer at a time where node names show layers (LayerDetector; a node
//     outside any layer is a unit of its own), so the split lands on a layer boundary; the rest
//     goes to the fallback.
//   - neither: every node on the fallback device.
// Costs come from ResourceAccountant (weights counted once per device + the liveness-planned
// activations, as the engine will lay them out + the heuristic workspace of nodes whose kernel
// has no estimate).
// The fallback device must hold what is left within its budget; otherwise Partition refuses the
// model (RESOURCE_EXHAUSTED) with needed vs available bytes by category.
//
// Devices: `devices` lists the configured ones with their budgets and whether they exist on this
// machine. The fallback (default cpu:0) must exist; cpu:0 is implied when not listed. A rule that
// names a device which is not listed or not present fails the load, unless
// fallback_on_missing_device (then a warning, and its nodes go to the fallback).
//
// Workspace estimates come from `estimator` (the engine's: engine::RegistryWorkspaceEstimator).
// Pure function of its inputs; thread-safe for distinct graphs (the estimator is only read).
//
// Example:
//   PartitionConfig config;
//   config.devices = {{"cpu:1", 200 << 10}, {"cpu:0", std::nullopt}};
//   config.name_rules = "cpu:1(layers.[0-15]/); cpu:0(layers.[16-31]/)";
//   absl::StatusOr<PartitionResult> r = Partition(graph, estimator, config);
//   if (!r.ok()) return r.status();           // readable: which device, how many bytes short
//   INFERD_RETURN_IF_ERROR(ApplyPartition(*r, graph));   // sets Node::device
#ifndef INFERD_PARTITION_PARTITIONER_H_
#define INFERD_PARTITION_PARTITIONER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/graph.h"
#include "engine/workspace_estimate.h"
#include "partition/device.h"
#include "partition/layering_index.h"
#include "partition/plan_report.h"
#include "partition/resource_accountant.h"

namespace inferd::partition {

struct PartitionConfig {
  std::vector<DeviceSpec> devices;  // in config order; names as written or normalised
  std::string name_rules;           // at most one of name_rules and annotation_rules
  std::string annotation_rules;
  std::string fallback_device = "cpu:0";
  bool fallback_on_missing_device = false;
  // Name components that mark layers (budget-only units and per-layer report lines).
  std::vector<std::string> layer_prefixes = DefaultLayerPrefixes();
  // Annotation mode: the subgraph parent of each node (-1: none); empty: no nesting.
  std::vector<int> subgraph_parent;
};

struct PartitionResult {
  std::vector<std::string> node_device;  // by node index: "cpu:0", "cuda:0", ...
  std::vector<NodeCost> node_costs;      // by node index, as accounted on that device
  PlanReport report;                     // report.copies: the boundary copies to insert
};

absl::StatusOr<PartitionResult> Partition(const engine::Graph& graph,
                                          const engine::WorkspaceEstimator& estimator,
                                          const PartitionConfig& config);

// Sets Node::device of every node of `graph` from `result`, matching nodes by name, so that the
// partition of one load of a model (say, with max_input_shapes fixed, for the budget) applies to
// another load of it (with dynamic shapes, to run). Where the two differ by a fusion (fusions
// depend on known shapes), a node takes the device of: the node named like it; else the node its
// name derives from ("<original>/MatMulAddFusion" -> "<original>"); else the node that made one
// of its outputs; else the fused node named after it ("<name>/..."). INVALID_ARGUMENT naming the
// first node none of these finds.
absl::Status ApplyPartition(const PartitionResult& result, engine::Graph& graph);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_PARTITIONER_H_

// ResourceAccountant: what the nodes given to one device will hold there, for memory budgets.
// A device is charged
//   weights:     bytes of the initializers its nodes read, each once per device (an initializer
//                shared by several devices counts on every one, since each holds its own copy);
//   activations: what its arenas will hold for one run, planned as the engine plans it
//                (PlanDeviceActivations, partition/activation_plan.h): the liveness-planned block
//                of intermediates, incoming copies and estimated workspaces at its arena size
//                class, plus the graph outputs it makes; not the sum of every output;
//   workspace:   for nodes whose kernel has no estimate only, the heuristic half of their base
//                (weights + outputs), on top of the block (ComputeNodeCostForBudget). A kernel
//                with an estimate (engine::WorkspaceEstimator; 0 for kernels that need none) has
//                its workspace planned inside the block instead.
// Static shapes are needed (for dynamic models the caller loads the graph with the maximum input
// shapes fixed); an unknown size counts 0 and is reported.
// Nodes on offer are *pending* until the caller commits them (accepted) or discards them
// (rejected): a rejected node's weights and buffers are never counted. Nodes not yet given to any
// device are assumed to read what they read until their own step, so the charge of a partial
// assignment is never below the charge of the final one.
//
// One accountant per device; it reads the graph and the estimator, which must outlive it. The
// plan is redone when a figure is asked for after an offer (O(nodes + planned buffers^2)); a
// device without a budget is only planned when asked. Not thread-safe (one partitioning pass).
//
// Example:
//   ResourceAccountant acct(graph, estimator, "cuda:0", /*budget=*/6ull << 30);
//   NodeCost c = acct.AddPending(node_index);
//   if (acct.PendingFits()) acct.CommitPending(); else acct.DiscardPending();
#ifndef INFERD_PARTITION_RESOURCE_ACCOUNTANT_H_
#define INFERD_PARTITION_RESOURCE_ACCOUNTANT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/checked_math.h"
#include "engine/graph.h"
#include "engine/workspace_estimate.h"
#include "partition/activation_plan.h"

namespace inferd::partition {

// Sums saturate at 2^64 - 1 (base/checked_math.h): a cost from hostile sizes exceeds every
// budget instead of wrapping to a small one.
struct ResourceCost {
  uint64_t weights = 0;
  uint64_t activations = 0;
  uint64_t workspace = 0;

  uint64_t base() const { return SaturatingAdd(weights, activations); }
  uint64_t total() const { return SaturatingAdd(base(), workspace); }
  ResourceCost& operator+=(const ResourceCost& o) {
    weights = SaturatingAdd(weights, o.weights);
    activations = SaturatingAdd(activations, o.activations);
    workspace = SaturatingAdd(workspace, o.workspace);
    return *this;
  }
};

// The cost of a node from its base cost (its new weights + its output bytes) and, where the
// kernel has one, its workspace estimate: with an estimate, base + estimate; without, the
// heuristic ceil(1.5 x base), the extra half counted as workspace. Per node, for reports; a
// device's charge plans the outputs and estimated workspaces (ResourceAccountant).
ResourceCost ComputeNodeCostForBudget(const ResourceCost& base,
                                      std::optional<uint64_t> workspace_estimate);

struct NodeCost {
  ResourceCost cost;  // weights: newly counted on its device; activations: its output bytes
  bool workspace_estimated = false;  // from the kernel's estimate (else the 1.5x heuristic)
  bool shapes_unknown = false;       // an output's shape is unknown: its bytes counted as 0
};

// Bytes of a value whose shape is static, else nullopt (unknown dims, string elements, or a
// size that does not fit in 64 bits).
std::optional<uint64_t> StaticValueBytes(const engine::Value& value);

class ResourceAccountant {
 public:
  ResourceAccountant(const engine::Graph& graph, const engine::WorkspaceEstimator& estimator,
                     std::string device, std::optional<uint64_t> budget_bytes);
  ResourceAccountant(const ResourceAccountant&) = delete;
  ResourceAccountant& operator=(const ResourceAccountant&) = delete;
  ResourceAccountant(ResourceAccountant&&) = default;

  const std::string& device() const { return device_; }
  std::optional<uint64_t> budget_bytes() const { return budget_; }

  // The cost of node `node` (an index into graph.nodes) offered as the next node on this
  // device; the initializers it is the first to read become pending.
  NodeCost AddPending(int node);
  // True when the charge with the pending nodes stays within the budget (always without one).
  bool PendingFits();
  void CommitPending();
  void DiscardPending();

  // Offers `units` (runs of node indices: single nodes, or whole layers) in order and commits the
  // leading ones that fit: units[0, k) where the charge with k units fits the budget and with
  // k + 1 would not (all of them without a budget). Nothing may be pending. Planned O(log units)
  // times (galloping, then bisection) rather than once per unit, so a device with a budget that
  // takes thousands of nodes one by one stays fast; the charge grows with the units in practice,
  // and where it did not, the k found still fits with the next unit not fitting. Returns k;
  // `costs` receives the NodeCost of each node of the taken units, in order.
  size_t CommitFittingRun(absl::Span<const std::vector<int>> units, std::vector<NodeCost>* costs);

  // The device's charge for its committed nodes, and what the pending ones would add to it
  // (per category, never negative: a pending producer can make a counted copy unnecessary).
  const ResourceCost& committed();
  ResourceCost pending();
  // The activation plan of the committed nodes.
  const ActivationCharge& committed_activations();

  // Assignment to this device has stopped (its budget was reached); later offers go elsewhere.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

 private:
  // Constant after construction.
  // The charge of the committed nodes, with the pending ones when `with_pending`.
  ResourceCost Charge(bool with_pending, ActivationCharge* plan);

  const engine::Graph* graph_;
  const engine::WorkspaceEstimator* estimator_;
  std::string device_;
  std::optional<uint64_t> budget_;
  bool host_device_;

  // Weights and heuristic workspace add up node by node; activations are planned.
  ResourceCost committed_sums_, pending_sums_;
  std::unordered_set<int> committed_weights_, pending_weights_;  // value indices
  std::vector<int> node_device_;  // 0: committed or pending here; kUnassigned: not here
  std::vector<int> pending_nodes_;
  std::vector<std::optional<uint64_t>> workspace_;  // by node: the estimate, when offered here
  // Cached charges; *_valid_ false after an offer, commit or discard changes them.
  ResourceCost committed_, proposed_;
  ActivationCharge committed_plan_, proposed_plan_;
  bool committed_valid_ = true, proposed_valid_ = true;
  bool stopped_ = false;
};

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_RESOURCE_ACCOUNTANT_H_

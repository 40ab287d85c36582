// ResourceAccountant: what nodes cost on one device, for memory budgets. The cost of a node is
//   activations: its output bytes, from static shapes (for dynamic models the caller loads the
//                graph with the maximum input shapes fixed; an unknown shape counts 0 and is
//                reported);
//   weights:     bytes of the initializers it reads that are not yet counted on this device (an
//                initializer shared by several nodes counts once per device, on every device
//                that uses it, since each device holds its own copy);
//   workspace:   the kernel's estimate for this device (engine::WorkspaceEstimator; the engine's
//                asks the kernel registered for the device's type) where there is one, else the
//                heuristic: the whole cost is 1.5x the base (ComputeNodeCostForBudget).
// Weights of a node on offer are *pending* until the caller commits them (the node was
// accepted) or discards them (rejected), so a rejected node's weights are never counted.
//
// One accountant per device; it reads the graph and the estimator, which must outlive it. Not
// thread-safe (used by one partitioning pass).
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

#include "absl/strings/string_view.h"
#include "base/checked_math.h"
#include "engine/graph.h"
#include "engine/workspace_estimate.h"

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

// The budget cost of a node from its base cost (weights + activations) and, where the kernel has
// one, its workspace estimate: with an estimate, base + estimate; without, the heuristic
// ceil(1.5 x base), the extra half counted as workspace.
ResourceCost ComputeNodeCostForBudget(const ResourceCost& base,
                                      std::optional<uint64_t> workspace_estimate);

struct NodeCost {
  ResourceCost cost;
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
  // True when committed + pending stays within the budget (always without a budget).
  bool PendingFits() const;
  void CommitPending();
  void DiscardPending();

  const ResourceCost& committed() const { return committed_; }
  const ResourceCost& pending() const { return pending_; }

  // Assignment to this device has stopped (its budget was reached); later offers go elsewhere.
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }

 private:
  // Constant after construction.
  const engine::Graph* graph_;
  const engine::WorkspaceEstimator* estimator_;
  std::string device_;
  std::optional<uint64_t> budget_;

  ResourceCost committed_, pending_;
  std::unordered_set<int> committed_weights_, pending_weights_;  // value indices
  bool stopped_ = false;
};

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_RESOURCE_ACCOUNTANT_H_

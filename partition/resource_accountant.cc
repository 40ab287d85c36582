#include "partition/resource_accountant.h"

#include <utility>
#include <vector>

#include "engine/data_type.h"
#include "engine/shape.h"
#include "partition/device.h"

namespace inferd::partition {

ResourceCost ComputeNodeCostForBudget(const ResourceCost& base,
                                      std::optional<uint64_t> workspace_estimate) {
  ResourceCost cost = base;
  // ceil(1.5 x base) = base + ceil(base / 2) (written so that base + 1 cannot wrap)
  const uint64_t b = base.base();
  cost.workspace = workspace_estimate ? *workspace_estimate : b / 2 + b % 2;
  return cost;
}

std::optional<uint64_t> StaticValueBytes(const engine::Value& value) {
  const size_t element = engine::ElementSize(value.type);
  if (element == 0 || !value.shape.IsStatic()) return std::nullopt;
  std::vector<int64_t> dims;
  dims.reserve(value.shape.dims.size());
  for (const engine::DimInfo& d : value.shape.dims) dims.push_back(d.value);
  std::optional<int64_t> n = engine::CheckedNumElements(dims, element);
  if (!n) return std::nullopt;
  return static_cast<uint64_t>(*n) * element;
}

ResourceAccountant::ResourceAccountant(const engine::Graph& graph,
                                       const engine::WorkspaceEstimator& estimator,
                                       std::string device, std::optional<uint64_t> budget_bytes)
    : graph_(&graph),
      estimator_(&estimator),
      device_(std::move(device)),
      budget_(budget_bytes),
      host_device_(IsHostDevice(device_)),
      node_device_(graph.nodes.size(), kUnassigned),
      workspace_(graph.nodes.size()) {}

NodeCost ResourceAccountant::AddPending(int node_index) {
  const engine::Node& node = graph_->nodes[node_index];
  NodeCost out;
  ResourceCost base;
  for (int v : node.outputs) {
    if (v < 0) continue;
    std::optional<uint64_t> bytes = StaticValueBytes(graph_->values[v]);
    if (bytes) {
      base.activations = SaturatingAdd(base.activations, *bytes);
    } else {
      out.shapes_unknown = true;
    }
  }
  auto read_weight = [&](int v) {
    if (v < 0 || graph_->values[v].initializer == nullptr) return;
    if (committed_weights_.count(v) || !pending_weights_.insert(v).second) return;
    base.weights = SaturatingAdd<uint64_t>(base.weights, graph_->values[v].initializer->bytes());
  };
  for (int v : node.inputs) read_weight(v);
  for (int v : node.implicit_inputs) read_weight(v);
  const std::optional<uint64_t> workspace =
      estimator_->EstimateWorkspace(*graph_, node_index, device_);
  out.workspace_estimated = workspace.has_value();
  out.cost = ComputeNodeCostForBudget(base, workspace);
  workspace_[node_index] = workspace;
  node_device_[node_index] = 0;
  pending_nodes_.push_back(node_index);
  pending_sums_.weights = SaturatingAdd(pending_sums_.weights, out.cost.weights);
  if (!workspace) {
    pending_sums_.workspace = SaturatingAdd(pending_sums_.workspace, out.cost.workspace);
  }
  proposed_valid_ = false;
  return out;
}

ResourceCost ResourceAccountant::Charge(bool with_pending, ActivationCharge* plan) {
  ResourceCost c = committed_sums_;
  if (with_pending) {
    c.weights = SaturatingAdd(c.weights, pending_sums_.weights);
    c.workspace = SaturatingAdd(c.workspace, pending_sums_.workspace);
  }
  // The plan reads node_device_, which holds the pending nodes: take them out for the
  // committed-only plan.
  if (!with_pending) {
    for (int n : pending_nodes_) node_device_[n] = kUnassigned;
  }
  *plan = PlanDeviceActivations(*graph_, 0, host_device_, node_device_, workspace_);
  if (!with_pending) {
    for (int n : pending_nodes_) node_device_[n] = 0;
  }
  c.activations = plan->total();
  return c;
}

const ResourceCost& ResourceAccountant::committed() {
  if (!committed_valid_) {
    committed_ = Charge(/*with_pending=*/false, &committed_plan_);
    committed_valid_ = true;
  }
  return committed_;
}

const ActivationCharge& ResourceAccountant::committed_activations() {
  committed();
  return committed_plan_;
}

ResourceCost ResourceAccountant::pending() {
  if (!proposed_valid_) {
    proposed_ = Charge(/*with_pending=*/true, &proposed_plan_);
    proposed_valid_ = true;
  }
  const ResourceCost& now = committed();
  auto over = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
  return ResourceCost{over(proposed_.weights, now.weights),
                      over(proposed_.activations, now.activations),
                      over(proposed_.workspace, now.workspace)};
}

bool ResourceAccountant::PendingFits() {
  if (!budget_) return true;
  if (!proposed_valid_) pending();
  return proposed_.total() <= *budget_;
}

void ResourceAccountant::CommitPending() {
  committed_sums_.weights = SaturatingAdd(committed_sums_.weights, pending_sums_.weights);
  committed_sums_.workspace = SaturatingAdd(committed_sums_.workspace, pending_sums_.workspace);
  committed_weights_.insert(pending_weights_.begin(), pending_weights_.end());
  // The proposal, when it was planned, is the new committed charge; else plan when asked.
  committed_valid_ = proposed_valid_;
  if (proposed_valid_) {
    committed_ = proposed_;
    committed_plan_ = proposed_plan_;
  }
  pending_nodes_.clear();
  pending_sums_ = ResourceCost();
  pending_weights_.clear();
  proposed_valid_ = false;
}

void ResourceAccountant::DiscardPending() {
  for (int n : pending_nodes_) {
    node_device_[n] = kUnassigned;
    workspace_[n] = std::nullopt;
  }
  pending_nodes_.clear();
  pending_sums_ = ResourceCost();
  pending_weights_.clear();
  proposed_valid_ = false;
}

size_t ResourceAccountant::CommitFittingRun(absl::Span<const std::vector<int>> units,
                                            std::vector<NodeCost>* costs) {
  // pass 1: every node's cost in offer order (a weight counts at its first reader); the sums of
  // weights and heuristic workspace after each unit.
  std::vector<uint64_t> weights(units.size() + 1, committed_sums_.weights);
  std::vector<uint64_t> heuristic(units.size() + 1, committed_sums_.workspace);
  std::vector<NodeCost> all;
  for (size_t u = 0; u < units.size(); ++u) {
    for (int node : units[u]) all.push_back(AddPending(node));
    weights[u + 1] = SaturatingAdd(committed_sums_.weights, pending_sums_.weights);
    heuristic[u + 1] = SaturatingAdd(committed_sums_.workspace, pending_sums_.workspace);
  }
  const std::vector<int> offered = pending_nodes_;
  const std::vector<std::optional<uint64_t>> estimates = [&] {
    std::vector<std::optional<uint64_t>> e;
    for (int n : offered) e.push_back(workspace_[n]);
    return e;
  }();
  DiscardPending();
  // pass 2: the number of units to take.
  size_t taken = units.size();
  if (budget_) {
    std::vector<size_t> first_node(units.size() + 1, 0);  // index into `offered`
    for (size_t u = 0; u < units.size(); ++u) first_node[u + 1] = first_node[u] + units[u].size();
    auto fits = [&](size_t k) {
      if (k == 0) return true;
      for (size_t j = 0; j < offered.size(); ++j) {
        node_device_[offered[j]] = j < first_node[k] ? 0 : kUnassigned;
        workspace_[offered[j]] = estimates[j];
      }
      const ActivationCharge plan =
          PlanDeviceActivations(*graph_, 0, host_device_, node_device_, workspace_);
      const uint64_t total = SaturatingAdd(SaturatingAdd(weights[k], heuristic[k]), plan.total());
      return total <= *budget_;
    };
    size_t lo = 0, hi = units.size() + 1;  // fits(lo); hi: fails, or one past the end
    for (size_t probe = 1; probe <= units.size(); probe *= 2) {
      if (!fits(probe)) {
        hi = probe;
        break;
      }
      lo = probe;
    }
    if (hi > units.size() && lo < units.size()) {
      if (fits(units.size())) {
        lo = units.size();
      } else {
        hi = units.size();
      }
    }
    while (hi - lo > 1 && hi <= units.size()) {
      const size_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    taken = lo;
    for (int n : offered) {
      node_device_[n] = kUnassigned;
      workspace_[n] = std::nullopt;
    }
  }
  // pass 3: commit the taken units as offers would have.
  size_t n = 0;
  for (size_t u = 0; u < taken; ++u) {
    for (int node : units[u]) {
      AddPending(node);
      costs->push_back(all[n++]);
    }
  }
  CommitPending();
  return taken;
}

}  // namespace inferd::partition

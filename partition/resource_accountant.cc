#include "partition/resource_accountant.h"

#include <utility>
#include <vector>

#include "engine/data_type.h"
#include "engine/shape.h"

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
    : graph_(&graph), estimator_(&estimator), device_(std::move(device)), budget_(budget_bytes) {}

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
  pending_ += out.cost;
  return out;
}

bool ResourceAccountant::PendingFits() const {
  return !budget_ || SaturatingAdd(committed_.total(), pending_.total()) <= *budget_;
}

void ResourceAccountant::CommitPending() {
  committed_ += pending_;
  committed_weights_.insert(pending_weights_.begin(), pending_weights_.end());
  DiscardPending();
}

void ResourceAccountant::DiscardPending() {
  pending_ = ResourceCost();
  pending_weights_.clear();
}

}  // namespace inferd::partition

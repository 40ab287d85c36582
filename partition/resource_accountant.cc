#include "partition/resource_accountant.h"

#include <utility>
#include <vector>

#include "engine/data_type.h"
#include "engine/kernel.h"
#include "engine/shape.h"
#include "partition/device.h"

namespace inferd::partition {
namespace {

engine::KernelIoInfo IoInfo(const engine::Graph& graph, int value, bool with_constant) {
  engine::KernelIoInfo io;
  if (value < 0) return io;
  const engine::Value& v = graph.values[value];
  io.name = v.name;
  io.present = true;
  io.type = v.type;
  io.shape = v.shape;
  if (with_constant) io.constant = v.initializer;
  return io;
}

}  // namespace

ResourceCost ComputeNodeCostForBudget(const ResourceCost& base,
                                      std::optional<uint64_t> workspace_estimate) {
  ResourceCost cost = base;
  // ceil(1.5 x base) = base + ceil(base / 2)
  cost.workspace = workspace_estimate ? *workspace_estimate : (base.base() + 1) / 2;
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

std::optional<uint64_t> EstimateNodeWorkspace(const engine::Graph& graph, const engine::Node& node,
                                              const engine::KernelRegistry& registry,
                                              absl::string_view device_type) {
  std::vector<engine::DataType> in_types, out_types;
  std::vector<engine::KernelIoInfo> ins, outs;
  for (int v : node.inputs) {
    ins.push_back(IoInfo(graph, v, /*with_constant=*/true));
    in_types.push_back(ins.back().type);
  }
  for (int v : node.outputs) {
    outs.push_back(IoInfo(graph, v, /*with_constant=*/false));
    out_types.push_back(outs.back().type);
  }
  const engine::KernelDef* def =
      registry.Find(node.domain, node.op_type, node.opset, device_type, in_types, out_types);
  if (def == nullptr || !def->estimate_workspace) return std::nullopt;
  engine::KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                          std::move(ins), std::move(outs));
  absl::StatusOr<size_t> bytes = def->estimate_workspace(info);
  if (!bytes.ok()) return std::nullopt;
  return static_cast<uint64_t>(*bytes);
}

ResourceAccountant::ResourceAccountant(const engine::Graph& graph,
                                       const engine::KernelRegistry& registry, std::string device,
                                       std::optional<uint64_t> budget_bytes)
    : graph_(&graph),
      registry_(&registry),
      device_(std::move(device)),
      device_type_(DeviceType(device_)),
      budget_(budget_bytes) {}

NodeCost ResourceAccountant::AddPending(int node_index) {
  const engine::Node& node = graph_->nodes[node_index];
  NodeCost out;
  ResourceCost base;
  for (int v : node.outputs) {
    if (v < 0) continue;
    std::optional<uint64_t> bytes = StaticValueBytes(graph_->values[v]);
    if (bytes) {
      base.activations += *bytes;
    } else {
      out.shapes_unknown = true;
    }
  }
  auto read_weight = [&](int v) {
    if (v < 0 || graph_->values[v].initializer == nullptr) return;
    if (committed_weights_.count(v) || !pending_weights_.insert(v).second) return;
    base.weights += graph_->values[v].initializer->bytes();
  };
  for (int v : node.inputs) read_weight(v);
  for (int v : node.implicit_inputs) read_weight(v);
  const std::optional<uint64_t> workspace =
      EstimateNodeWorkspace(*graph_, node, *registry_, device_type_);
  out.workspace_estimated = workspace.has_value();
  out.cost = ComputeNodeCostForBudget(base, workspace);
  pending_ += out.cost;
  return out;
}

bool ResourceAccountant::PendingFits() const {
  return !budget_ || committed_.total() + pending_.total() <= *budget_;
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

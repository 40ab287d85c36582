#include "engine/registry_workspace_estimator.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/kernel.h"
#include "engine/kernel_io.h"
#include "partition/device.h"

namespace inferd::engine {
namespace {

// A node's inputs and outputs as its kernel sees them at load.
struct NodeIo {
  std::vector<DataType> in_types, out_types;
  std::vector<KernelIoInfo> ins, outs;
};

NodeIo IoOf(const Graph& graph, const Node& node) {
  NodeIo io;
  for (int v : node.inputs) {
    io.ins.push_back(KernelIoOf(graph, v));
    io.in_types.push_back(io.ins.back().type);
  }
  for (int v : node.outputs) {
    io.outs.push_back(KernelIoOf(graph, v));  // node outputs are never weights
    io.out_types.push_back(io.outs.back().type);
  }
  return io;
}

}  // namespace

std::optional<uint64_t> RegistryWorkspaceEstimator::EstimateWorkspace(
    const Graph& graph, int node_index, absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  NodeIo io = IoOf(graph, node);
  const KernelDef* def = registry_->Find(node.domain, node.op_type, node.opset,
                                         partition::DeviceType(device), io.in_types, io.out_types);
  if (def == nullptr || !def->estimate_workspace) return std::nullopt;
  KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                  std::move(io.ins), std::move(io.outs));
  absl::StatusOr<size_t> bytes = def->estimate_workspace(info);
  if (!bytes.ok()) return std::nullopt;
  return static_cast<uint64_t>(*bytes);
}

bool RegistryWorkspaceEstimator::HasKernel(const Graph& graph, int node_index,
                                           absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  const NodeIo io = IoOf(graph, node);
  return registry_->Find(node.domain, node.op_type, node.opset, partition::DeviceType(device),
                         io.in_types, io.out_types) != nullptr;
}

absl::Status RegistryWorkspaceEstimator::TryCreate(const Graph& graph, int node_index,
                                                   absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  NodeIo io = IoOf(graph, node);
  const KernelDef* def = registry_->Find(node.domain, node.op_type, node.opset,
                                         partition::DeviceType(device), io.in_types, io.out_types);
  if (def == nullptr) return absl::NotFoundError("no kernel definition");
  KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                  std::move(io.ins), std::move(io.outs));
  return def->create(info).status();
}

}  // namespace inferd::engine

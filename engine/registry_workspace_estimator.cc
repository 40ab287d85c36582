#include "engine/registry_workspace_estimator.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/kernel.h"
#include "engine/kernel_io.h"
#include "partition/device.h"

namespace inferd::engine {
std::optional<uint64_t> RegistryWorkspaceEstimator::EstimateWorkspace(
    const Graph& graph, int node_index, absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  NodeIo io = NodeIoOf(graph, node);
  const KernelDef* def = FindNodeKernel({registry_}, node, io, partition::DeviceType(device));
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
  return FindNodeKernel({registry_}, node, NodeIoOf(graph, node), partition::DeviceType(device)) !=
         nullptr;
}

absl::Status RegistryWorkspaceEstimator::TryCreate(const Graph& graph, int node_index,
                                                   absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  NodeIo io = NodeIoOf(graph, node);
  const KernelDef* def = FindNodeKernel({registry_}, node, io, partition::DeviceType(device));
  if (def == nullptr) return absl::NotFoundError("no kernel definition");
  KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                  std::move(io.ins), std::move(io.outs));
  return def->create(info).status();
}

}  // namespace inferd::engine

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
  std::vector<DataType> in_types, out_types;
  std::vector<KernelIoInfo> ins, outs;
  for (int v : node.inputs) {
    ins.push_back(KernelIoOf(graph, v));
    in_types.push_back(ins.back().type);
  }
  for (int v : node.outputs) {
    outs.push_back(KernelIoOf(graph, v));  // node outputs are never weights
    out_types.push_back(outs.back().type);
  }
  const std::string device_type = partition::DeviceType(device);
  const KernelDef* def =
      registry_->Find(node.domain, node.op_type, node.opset, device_type, in_types, out_types);
  if (def == nullptr || !def->estimate_workspace) return std::nullopt;
  KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                  std::move(ins), std::move(outs));
  absl::StatusOr<size_t> bytes = def->estimate_workspace(info);
  if (!bytes.ok()) return std::nullopt;
  return static_cast<uint64_t>(*bytes);
}

}  // namespace inferd::engine

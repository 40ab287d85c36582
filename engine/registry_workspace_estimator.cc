#include "engine/registry_workspace_estimator.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/kernel.h"
#include "partition/device.h"

namespace inferd::engine {
namespace {

KernelIoInfo IoInfo(const Graph& graph, int value, bool with_constant) {
  KernelIoInfo io;
  if (value < 0) return io;
  const Value& v = graph.values[value];
  io.name = v.name;
  io.present = true;
  io.type = v.type;
  io.kind = v.kind;
  io.shape = v.shape;
  if (with_constant) io.constant = v.initializer;
  return io;
}

}  // namespace

std::optional<uint64_t> RegistryWorkspaceEstimator::EstimateWorkspace(
    const Graph& graph, int node_index, absl::string_view device) const {
  const Node& node = graph.nodes[node_index];
  std::vector<DataType> in_types, out_types;
  std::vector<KernelIoInfo> ins, outs;
  for (int v : node.inputs) {
    ins.push_back(IoInfo(graph, v, /*with_constant=*/true));
    in_types.push_back(ins.back().type);
  }
  for (int v : node.outputs) {
    outs.push_back(IoInfo(graph, v, /*with_constant=*/false));
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

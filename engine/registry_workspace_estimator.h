// RegistryWorkspaceEstimator: the engine's WorkspaceEstimator. For a node it finds the kernel
// registered for the node's (domain, op, opset, element types) on the device's type ("cpu",
// "cuda") and calls its KernelDef::estimate_workspace, without instantiating it. Reads the
// registry, which must outlive it; thread-safe once the registry is filled.
//
// Example:
//   RegistryWorkspaceEstimator estimator(registry);
//   absl::StatusOr<partition::PartitionResult> r = partition::Partition(graph, estimator, config);
#ifndef INFERD_ENGINE_REGISTRY_WORKSPACE_ESTIMATOR_H_
#define INFERD_ENGINE_REGISTRY_WORKSPACE_ESTIMATOR_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"
#include "engine/workspace_estimate.h"

namespace inferd::engine {

class RegistryWorkspaceEstimator : public WorkspaceEstimator {
 public:
  explicit RegistryWorkspaceEstimator(const KernelRegistry& registry) : registry_(&registry) {}

  std::optional<uint64_t> EstimateWorkspace(const Graph& graph, int node,
                                            absl::string_view device) const override;
  bool HasKernel(const Graph& graph, int node, absl::string_view device) const override;
  // Makes (and drops) the node's kernel for `device`: the factory's refusal (a node the
  // definition covers but the kernel does not support), NOT_FOUND without a definition.
  absl::Status TryCreate(const Graph& graph, int node, absl::string_view device) const;

 private:
  const KernelRegistry* registry_;  // not owned
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_REGISTRY_WORKSPACE_ESTIMATOR_H_

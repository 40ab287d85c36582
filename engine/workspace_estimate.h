// WorkspaceEstimator: what the partitioner asks of the kernels, without making them: the
// workspace bytes a node would need on a device, from its attributes and static shapes. The
// engine implements it over its kernel registry (engine/registry_workspace_estimator.h); the
// partitioner sees only this interface. Implementations are read-only after construction and
// must be thread-safe for concurrent calls.
//
// Example:
//   RegistryWorkspaceEstimator estimator(registry);
//   std::optional<uint64_t> bytes = estimator.EstimateWorkspace(graph, node_index, "cuda:0");
//   if (!bytes) ...;  // no estimate: the caller falls back to a heuristic
#ifndef INFERD_ENGINE_WORKSPACE_ESTIMATE_H_
#define INFERD_ENGINE_WORKSPACE_ESTIMATE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "engine/graph.h"

namespace inferd::engine {

class WorkspaceEstimator {
 public:
  virtual ~WorkspaceEstimator() = default;

  // Workspace bytes of `graph.nodes[node]` run on `device` ("cpu:0", "cuda:1"), or nullopt: no
  // kernel for it there, no estimate for that kernel, or the estimate failed (shapes unknown).
  virtual std::optional<uint64_t> EstimateWorkspace(const Graph& graph, int node,
                                                    absl::string_view device) const = 0;
  // Whether `graph.nodes[node]` has a kernel on `device`'s kind. The partitioner leaves a node
  // to the fallback device where the device it would take it has none. (Default: every node
  // runs everywhere.)
  virtual bool HasKernel(const Graph& graph, int node, absl::string_view device) const {
    return true;
  }
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_WORKSPACE_ESTIMATE_H_

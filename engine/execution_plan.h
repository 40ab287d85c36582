// ExecutionPlan: how a session runs its graph. Built once at load from the (rewritten,
// partitioned) graph:
//   - the steps in topological order, each with its kernel and device;
//   - for every value an allocation role: declared graph output -> IO (IOArena), intermediate ->
//     execution (ExecutionArena, or an offset in the static block), graph input / weight -> none
//     (borrowed, never copied, never freed);
//   - aliases: view ops (Reshape, ...) whose output shares its input's buffer; a group of values
//     sharing one buffer has one owner (its root);
//   - the last use of every buffer, where the run returns it;
//   - when every shape is known at load, the static plan: offsets of all intermediates and
//     declared workspaces in one block per device (memory::GreedyMemoryPlanner), next to the
//     naive sum.
// Immutable after Build; shared by all runs (thread-safe to read). Kernels are const.
#ifndef INFERD_ENGINE_EXECUTION_PLAN_H_
#define INFERD_ENGINE_EXECUTION_PLAN_H_

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/graph.h"
#include "engine/kernel.h"
#include "engine/kernel_io.h"
#include "engine/kernel_registry.h"
#include "memory/memory_planner.h"

namespace inferd::engine {

enum class AllocationRole : uint8_t { kBorrowed, kExecution, kIO };
const char* AllocationRoleName(AllocationRole role);

inline constexpr int kNeverReleased = INT_MAX;

class ExecutionPlan;

struct ValuePlan {
  AllocationRole role = AllocationRole::kBorrowed;
  int root = -1;  // the value whose buffer this value uses (itself for owners and borrowed)
  int device = 0;
  int producer_step = -1;
  int last_use = -1;                // on roots: last step that reads any value of the group
  bool holds_graph_output = false;  // on roots: the group contains a declared graph output
  // Static plan (roots with role kExecution): bytes and offset in the device's block.
  bool planned = false;
  size_t bytes = 0;
  size_t offset = 0;
};

struct PlanStep {
  int node = -1;
  int device = 0;
  const KernelDef* def = nullptr;
  std::unique_ptr<OpKernel> kernel;
  // Values (roots and their alias members) whose buffers are returned after this step.
  std::vector<int> release;
  // (output slot, input index) pairs the plan lets the kernel alias.
  std::vector<std::pair<int, int>> aliases;
  // Static plan: declared workspaces and their offsets in the device's block.
  std::vector<WorkspaceRequirement> workspaces;
  std::vector<size_t> workspace_offsets;
  // Plans of the node's subgraphs (If branches), by attribute name.
  std::map<std::string, std::unique_ptr<ExecutionPlan>> subplans;
};

struct DevicePlan {
  std::string name;            // "cpu:0"
  size_t block_bytes = 0;      // static plan: planned peak of intermediates + workspaces
  size_t naive_bytes = 0;      // static plan: sum of every intermediate and workspace
  size_t workspace_bytes = 0;  // static plan: sum of declared workspaces
  size_t output_bytes = 0;     // static plan: bytes of graph outputs made on this device
  // Static plan: what the subgraphs of this device's nodes (If branches) take per run beyond
  // `block_bytes`: every branch's own block (nested subgraphs included) and the outputs the
  // branches make in the execution arena and hand to their node.
  size_t subgraph_bytes = 0;
  int nodes = 0;
};

class ExecutionPlan {
 public:
  // `devices`: device names; node.device (empty = devices[0]) must be one of them.
  // `output_roles`: for a subgraph, the roles of the parent node's outputs its outputs become
  // (empty: declared outputs are IO, as for a session's graph).
  static absl::StatusOr<std::unique_ptr<ExecutionPlan>> Build(
      const Graph& graph, const KernelRegistry& registry, const std::vector<std::string>& devices,
      int intra_op_threads, const std::vector<AllocationRole>& output_roles = {});

  const Graph& graph() const { return *graph_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  const std::vector<ValuePlan>& values() const { return values_; }
  const std::vector<DevicePlan>& devices() const { return devices_; }
  // True when every intermediate and workspace size is known at load (the static plan exists).
  bool is_static() const { return is_static_; }
  // Why the plan is not static ("value 'x' has shape [batch,3]"), for messages.
  const std::string& dynamic_reason() const { return dynamic_reason_; }
  // True when, beyond is_static(), every subgraph plan is static and every output a subgraph
  // hands to its node has a size known at load: all a run takes can be allocated at load.
  bool fully_static() const { return is_static_ && subgraph_reason_.empty(); }
  // Why not, for messages ("subgraph 'then_branch' of node 'if': value 'y' has shape [n]").
  const std::string& not_fully_static_reason() const {
    return is_static_ ? subgraph_reason_ : dynamic_reason_;
  }
  // Human-readable summary: steps, planned peak vs naive sum per device.
  std::string Summary() const;

 private:
  absl::Status ResolveKernels(const KernelRegistry& registry, int threads);
  void AssignRolesAndAliases(const std::vector<AllocationRole>& output_roles);
  absl::Status BuildSubplans(const KernelRegistry& registry, int threads);
  void ComputeLiveness();
  void PlanStatic();
  // PlanStatic's passes. False (dynamic_reason_ set) when some size is unknown at load.
  bool SizeStaticBuffers(std::vector<std::vector<Shape>>& input_shapes);
  // (value, planner id) of each intermediate placed in its device's block.
  std::vector<std::pair<int, int>> AddValueBuffers(
      std::vector<memory::GreedyMemoryPlanner>& planners);
  // Planner ids of each step's declared workspaces.
  std::vector<std::vector<int>> AddWorkspaceBuffers(
      const std::vector<std::vector<Shape>>& input_shapes,
      std::vector<memory::GreedyMemoryPlanner>& planners);
  void AddSubgraphBlocks();

  const Graph* graph_ = nullptr;
  std::vector<PlanStep> steps_;
  std::vector<ValuePlan> values_;
  std::vector<DevicePlan> devices_;
  bool is_static_ = false;
  std::string dynamic_reason_;
  std::string subgraph_reason_;  // static plan whose subgraphs are not fully static: why
};

// Bytes of a value whose shape is known at load, or -1.
int64_t StaticBytes(const Value& v);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_EXECUTION_PLAN_H_

// PlanDeviceActivations: what one device's arenas will hold for one run of the nodes it is
// given, as the engine's static execution plan lays it out (engine/execution_plan.h), so that a
// budget counts what will be resident rather than the sum of every output:
//   - the block: one execution-arena buffer holding every intermediate made on the device, every
//     incoming boundary copy and every estimated kernel workspace, laid out by
//     memory::GreedyMemoryPlanner over their lifetimes, charged at the size class the arena
//     allocates it with (memory/size_classes.h);
//   - graph outputs made on the device: one IOArena buffer each, at its size class.
// Steps: node i is step 2i+1 and the boundary copies made for reader r are step 2r (the engine
// inserts a copy just before its first reader, engine/device_copies.h). A value lives from its
// producer to its last reader on the device; a reader on another device keeps it until the
// copy before that device's first reader; an *unassigned* reader (the partition is still being
// made) keeps it until that reader itself, which is never earlier, so a partial assignment is
// charged at least what the final one will be. A value the device reads but does not make is an
// incoming copy, live from its first to its last reader there; graph inputs are borrowed on host
// devices (cpu:N) and uploaded elsewhere; weights are never copies (they are charged as weights).
//
// Not modelled (each charges more than the engine holds, never less): view ops that alias their
// input's buffer (Reshape, Squeeze, ...), which the engine folds into one buffer.
// Pure function; thread-compatible.
//
// Example:
//   std::vector<int> node_device(graph.nodes.size(), kUnassigned);  // device indices
//   std::vector<std::optional<uint64_t>> workspace(graph.nodes.size());
//   node_device[0] = 0;
//   ActivationCharge c = PlanDeviceActivations(graph, 0, /*host_device=*/true, node_device,
//                                              workspace);
//   uint64_t resident = weights + c.total();
#ifndef INFERD_PARTITION_ACTIVATION_PLAN_H_
#define INFERD_PARTITION_ACTIVATION_PLAN_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "engine/graph.h"

namespace inferd::partition {

inline constexpr int kUnassigned = -1;

struct ActivationCharge {
  uint64_t block_peak = 0;       // planned peak of the block's buffers
  uint64_t block_bytes = 0;      // the block at its arena size class (what is allocated)
  uint64_t output_bytes = 0;     // graph outputs made here, each at its IOArena size class
  uint64_t output_sum = 0;       // sum of the device's node outputs, unplanned (for reports)
  uint64_t copy_in_bytes = 0;    // incoming copies (inside the block)
  uint64_t workspace_bytes = 0;  // estimated workspaces (inside the block)
  bool shapes_unknown = false;   // some size unknown: counted as 0

  // What budgets are charged for activations: the block plus the outputs.
  uint64_t total() const;
};

// Bytes an arena holds for a request of `bytes` (its size class capacity; 0 for 0).
uint64_t ArenaCapacity(uint64_t bytes);

// `node_device[i]`: the device index of node i, or kUnassigned. `device`: the device to plan.
// `node_workspace[i]`: the workspace estimate of node i on that device (nullopt: none known, the
// caller charges a heuristic on top). `host_device`: graph inputs are read in place there.
ActivationCharge PlanDeviceActivations(const engine::Graph& graph, int device, bool host_device,
                                       absl::Span<const int> node_device,
                                       absl::Span<const std::optional<uint64_t>> node_workspace);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_ACTIVATION_PLAN_H_

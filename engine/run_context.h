// The runtime of one plan (a session's graph, or a subgraph of one of its nodes):
//   RunSlot: the state of one run: every value's tensor, each device's static block, per-step
//     workspace caches and the slots of subgraphs. Reused run after run, so a steady-state run
//     allocates no metadata.
//   ExecutePlan: runs the steps in order; each kernel gets a KernelContext that allocates output
//     slot N in the arena its planned role says (IOArena for declared outputs, the static block
//     or the ExecutionArena for intermediates), serves temporaries and workspaces from the
//     execution side, and returns buffers at their last use. A node with subgraphs (If) runs
//     them through the same machinery: the subgraph's outputs are made in the arena of the
//     node's outputs and handed over without a copy.
// Internal to engine/ (Session is the public face). One RunSlot is used by one run at a time.
#ifndef INFERD_ENGINE_RUN_CONTEXT_H_
#define INFERD_ENGINE_RUN_CONTEXT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/device_runtime.h"
#include "engine/execution_plan.h"
#include "engine/tensor.h"
#include "engine/thread_pool.h"
#include "memory/execution_arena.h"
#include "memory/io_arena.h"

namespace inferd::engine {

// The two arenas of one device.
struct DeviceArenas {
  std::string device;
  std::shared_ptr<memory::SystemAllocator> system;
  std::unique_ptr<memory::ExecutionArena> execution;
  std::unique_ptr<memory::IOArena> io;
  // A device the host cannot read (cuda:N): its runtime and ordinal; nullptr for host devices.
  const DeviceRuntime* runtime = nullptr;
  int ordinal = 0;
};

struct RunOptions {
  // Checked between steps; a run that is cancelled stops with CANCELLED.
  std::function<bool()> cancelled;
  // When set, receives the wall time of every step of the session's plan, in microseconds,
  // added to the entry of its step index (sized by the run). For profiling (inferctl --profile).
  std::vector<double>* step_micros = nullptr;
};

// What every run of a session shares.
struct RunEnv {
  ThreadPool* threads = nullptr;
  std::atomic<uint64_t>* plan_misses = nullptr;  // outputs larger than planned
  const RunOptions* options = nullptr;
  const ExecutionPlan* profiled_plan = nullptr;  // whose steps RunOptions::step_micros times
};

struct RunSlot {
  // `devices`: the arenas of each of the plan's devices, in the plan's device order.
  RunSlot(const ExecutionPlan& plan, std::vector<DeviceArenas*> devices);

  const ExecutionPlan& plan;
  const std::vector<DeviceArenas*> devices;
  std::vector<Tensor> values;                    // weights bound once; the rest per run
  std::vector<memory::AllocationHandle> blocks;  // per device (static plan)
  bool blocks_pre_allocated = false;
  // Dynamic shapes: per step, the input shapes of the last run and the workspaces they needed.
  std::vector<std::vector<Shape>> last_shapes;
  std::vector<std::vector<WorkspaceRequirement>> last_workspaces;
  std::vector<memory::AllocationHandle> workspaces;  // of the step being run
  std::vector<Tensor> scratch_outputs;               // outputs the graph does not use
  // Subgraph slots, by (step, attribute), made on first use.
  std::map<std::pair<int, std::string>, std::unique_ptr<RunSlot>> children;
  // Per device: this slot's stream on a device the host cannot read (the session makes them;
  // nullptr on host devices; empty for a host-only plan).
  std::vector<std::unique_ptr<DeviceStream>> streams;
  // Per device with a stream: buffers the run gave back before its end (intermediates at their
  // last use, workspaces, temporaries). The host runs ahead of the stream, so the device may
  // still read them: another run's stream must not get them yet. Later allocations of this run
  // on that device reuse them (stream order makes that safe); after the run's final
  // synchronization they go back to the shared arena (Clear).
  std::vector<std::vector<memory::AllocationHandle>> held;
  std::vector<memory::AllocationHandle> step_temporaries;  // device temporaries of the step

  // Waits for every stream of the slot: the first error, or OK. Before Clear after a run that
  // used a device.
  absl::Status SynchronizeStreams();
  // Drops everything of the last run (weights stay bound, pre-allocated blocks stay).
  void Clear();
};

// pre_allocate: allocates the slot's static blocks and, recursively, makes the slot of every
// subgraph (If branch) with its block, all kept across runs. For each output a subgraph hands to
// its node in the execution arena, appends one buffer of its size to `warm`: the caller releases
// them into the free lists, where the runs find them. Needs slot.plan.fully_static().
absl::Status PreAllocateSlot(RunSlot& slot, std::vector<memory::AllocationHandle>* warm);

// Runs `slot.plan` with the inputs already bound in `slot.values`; allocates the static blocks
// the slot lacks. On error the slot still holds what was made: call slot.Clear().
absl::Status ExecutePlan(const RunEnv& env, RunSlot& slot);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_RUN_CONTEXT_H_

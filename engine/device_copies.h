// Cross-device copies. After partitioning, a value made on one device and read on another gets a
// com.inferd::DeviceCopy node on the reading device, so each device's kernels read only buffers
// of their own device's arenas. Which copies exist is the partitioner's decision
// (partition::FindBoundaryCopies: one per value and reading device; graph inputs and weights are
// host memory that host devices read in place); this file makes them nodes, named
// "<value>/copy_to_<device>", each just before its first reader (where the partitioner's plan
// of the device's activations puts it), and provides the host-to-host copy kernel.
#ifndef INFERD_ENGINE_DEVICE_COPIES_H_
#define INFERD_ENGINE_DEVICE_COPIES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

inline constexpr char kDeviceCopyOp[] = "DeviceCopy";

// Inserts the boundary copies of `graph` (whose nodes all have a device); returns how many.
absl::StatusOr<int> InsertDeviceCopies(Graph& graph);

// The kernels the engine itself provides: DeviceCopy for host devices, and If, Loop and Scan
// (control flow runs the engine's own subgraph plans; Loop and Scan are in control_flow.h).
const KernelRegistry& EngineKernels();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DEVICE_COPIES_H_

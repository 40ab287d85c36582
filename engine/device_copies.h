// Cross-device copies. After partitioning, each kernel must read buffers of the memory it runs
// on; this file makes the graph say so, in three kinds of node and value:
//   - A value made on one device and read on another gets a com.inferd::DeviceCopy node on the
//     reading device, named "<value>/copy_to_<device>", just before its first reader (where the
//     partitioner's plan of the device's activations puts it); one per (value, reading device)
//     (partition::FindBoundaryCopies). A graph input read on a device the host cannot read
//     (cuda:N) is uploaded by such a node in every run.
//   - A graph output made on such a device is made there as an intermediate, renamed
//     "<output>/on_<device>", and copied back by a DeviceCopy on the host device into a value
//     with the output's name: outputs always end in host memory (the host IOArena), where they
//     are leased to the caller as any other.
//   - A weight read on such a device becomes a second weight "<weight>/on_<device>" with
//     Value::resident_device set, which the session uploads once at load; its readers there read
//     that one.
// Inputs a device kernel reads on the host (KernelDef::host_inputs: a Reshape's shape) are read
// from host memory: weights as they are, values made on a device through a copy to the host.
// Shape and Size read only their input's shape, which the host always has: they read the value
// where it is, with no copy (a decoder's many Shape nodes on activations cost no transfer).
// The DeviceCopy kernel (EngineKernels, for "cpu" and "cuda") copies through the run's device
// streams (engine/device_runtime.h): host to host with memcpy, to a device in the reading
// stream's order, from a device by the source stream followed by its synchronization.
#ifndef INFERD_ENGINE_DEVICE_COPIES_H_
#define INFERD_ENGINE_DEVICE_COPIES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

inline constexpr char kDeviceCopyOp[] = "DeviceCopy";

// A weight to upload at load: graph.values[host_value] (an initializer) into device memory of
// `device`, bound as the initializer of graph.values[device_value].
struct WeightUpload {
  int host_value = -1;
  int device_value = -1;
  std::string device;
};

struct DeviceCopies {
  int copies = 0;         // DeviceCopy nodes at partition boundaries (uploads of inputs included)
  int output_copies = 0;  // graph outputs copied back to the host
  std::vector<WeightUpload> uploads;
};

// Inserts the copies of `graph`, whose nodes all have a device. `host_device` ("cpu:0", the
// fallback) receives the graph outputs made elsewhere and the values device kernels read on the
// host; `registry` gives each device kernel's host inputs. The device values of `uploads` carry
// the host weight as their initializer until the caller binds the uploaded copy. Copies between
// two devices the host cannot read (cuda:0 -> cuda:1) are refused (UNIMPLEMENTED).
absl::StatusOr<DeviceCopies> InsertDeviceCopies(Graph& graph, const KernelRegistry& registry,
                                                const std::string& host_device);

// The kernels the engine itself provides: DeviceCopy (cpu and cuda), and If, Loop and Scan
// (control flow runs the engine's own subgraph plans; Loop and Scan are in control_flow.h).
const KernelRegistry& EngineKernels();

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DEVICE_COPIES_H_

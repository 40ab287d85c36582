// SessionOptions: how one model's session is built and run. Plain value type.
#ifndef INFERD_ENGINE_SESSION_OPTIONS_H_
#define INFERD_ENGINE_SESSION_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "memory/system_allocator.h"
#include "partition/partitioner.h"

namespace inferd::engine {

class Graph;
class DeviceRuntime;

struct SessionOptions {
  // Intra-op threads (the caller's thread counts as one).
  int intra_op_threads = 1;
  // Runs that may execute at the same time; each has its own run state (and, with a static
  // plan, its own block).
  int max_concurrent_runs = 1;
  // What a run does when every run slot is busy: wait for one, or fail at once with
  // FAILED_PRECONDITION.
  bool fail_fast_when_busy = false;
  // Allocate each run slot's static-plan block (intermediates and workspaces) at load, and warm
  // the IOArena with one set of output buffers, so that a model that loads cannot run out of
  // memory in Run. Needs every shape known at load (a static model or fixed_input_shapes).
  bool pre_allocate = false;
  // Concrete shapes for dynamic graph inputs (see ModelLoadOptions).
  std::map<std::string, std::vector<int64_t>> fixed_input_shapes;
  // Devices with budgets, and name or annotation rules (partition/partitioner.h). No devices
  // listed: everything on cpu:0. A cuda:N device is present when `device_runtimes` has a runtime
  // for "cuda" that finds it; listed without a budget, its budget is its free memory at load.
  partition::PartitionConfig partition;
  // For the budget of dynamic models: the largest shapes of their dynamic inputs.
  std::map<std::string, std::vector<int64_t>> max_input_shapes;
  // Graph rewrites (MatMul+Add, Conv+Relu fusions).
  bool enable_fusions = true;
  // Run float16 / bfloat16 compute that has no half-precision kernel in float32: the precision
  // widening pass (engine/precision_widening.h, docs/half-precision.md). Off: such nodes are
  // refused at load for want of a kernel.
  bool widen_half_precision = true;
  // With the pass: MatMul's and Gemm's 2-D half weights stay half, read by the half-weight product
  // kernel, instead of getting a float32 copy (docs/half-precision.md "Half weights"). Off: they
  // are converted (more memory; faster on large batches).
  bool keep_half_weights = true;
  // A rewrite of the session's graph applied first, before the fusions and partitioning (and to
  // the max-shape view the budget is costed on): genai's KV-cache rewrite. An error fails Create.
  std::function<absl::Status(Graph&)> graph_rewrite;
  // Retention caps per device and arena kind ("execution" / "io"), applied at creation.
  std::map<std::string, std::map<std::string, uint64_t>> retention_caps;
  // The runtimes of the device kinds the host cannot read (engine/device_runtime.h), at most one
  // per kind: engine/build_devices.h gives this build's (CUDA with --config=cuda). Empty: host
  // devices only.
  std::vector<std::shared_ptr<const DeviceRuntime>> device_runtimes;
  // Makes the backing allocator of a device ("cpu:0", "cpu:1", ...). Default: CpuSystemAllocator
  // for cpu:N, the runtime's for other kinds. Tests inject fakes here.
  std::function<std::shared_ptr<memory::SystemAllocator>(const std::string& device)>
      allocator_factory;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_SESSION_OPTIONS_H_

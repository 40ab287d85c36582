// Session: runs one loaded model. Built once (rewrites, kernels, execution plan, arenas per
// device, run slots) and then used by many threads: Run is thread-safe and up to
// max_concurrent_runs runs execute at once, each in its own run slot.
//
// Memory: inputs are borrowed views of the caller's bytes (never copied, never freed); inputs
// that are misaligned for their element type are staged in the IOArena. Intermediates and
// workspaces come from the ExecutionArena (or their offsets in the static plan's block) and go
// back at their last use. Outputs are AllocationHandles in the IOArena: they stay valid after
// later runs, after runs with other shapes, and after the session is destroyed, and can be
// exported as IOLeases.
//
// Example:
//   KernelRegistry registry;
//   RegisterCpuKernels(registry);
//   auto session = Session::Load("mlp/model.onnx", SessionOptions{}, registry);
//   InputTensor x{"x", DataType::kFloat32, Shape{4, 64}, data, 4 * 64 * sizeof(float)};
//   absl::StatusOr<std::vector<OutputTensor>> out = (*session)->Run({x});
#ifndef INFERD_ENGINE_SESSION_H_
#define INFERD_ENGINE_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/device_copies.h"
#include "engine/device_runtime.h"
#include "engine/execution_plan.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"
#include "engine/model.h"
#include "engine/precision_widening.h"
#include "engine/run_context.h"
#include "engine/session_options.h"
#include "engine/thread_pool.h"
#include "memory/execution_arena.h"
#include "memory/io_arena.h"
#include "partition/plan_report.h"

namespace inferd::engine {

// A graph input. Tensors fill name, type, shape, data and bytes. A string tensor's `data` points
// at shape.NumElements() std::strings and `bytes` is that count times sizeof(std::string)
// (docs/strings.md). A sequence or optional graph
// input (docs/sequences.md; the conformance runner feeds them, the server refuses such models)
// sets `kind`, `type` to its element type, and `items`: the sequence's tensors, or the optional's
// one value (a tensor, or a sequence with items of its own), none when it is empty.
struct InputTensor {
  std::string name;
  DataType type = DataType::kUndefined;
  Shape shape;
  const void* data = nullptr;  // borrowed for the duration of Run
  size_t bytes = 0;
  ValueKind kind = ValueKind::kTensor;
  std::vector<InputTensor> items;  // sequences and optionals only (names unused)
};

// A graph output; a sequence or optional output has `kind`, `type` (element type) and `items` as
// in InputTensor, each item owning its IOArena buffer, and no buffer of its own.
struct OutputTensor {
  std::string name;
  DataType type = DataType::kUndefined;
  Shape shape;
  memory::AllocationHandle buffer;  // in the IOArena of the device that made it
  // A string tensor's elements (heap, docs/strings.md); no buffer.
  std::shared_ptr<const std::vector<std::string>> strings;
  ValueKind kind = ValueKind::kTensor;
  std::vector<OutputTensor> items;  // sequences and optionals only
};

struct SessionStats {
  uint64_t runs = 0;
  uint64_t failed_runs = 0;
  uint64_t input_bytes_borrowed = 0;
  uint64_t input_bytes_staged = 0;
  uint64_t static_plan_misses = 0;  // outputs larger than planned, taken from the arena instead
  uint64_t kernel_persistent_bytes = 0;  // held by kernels outside the arenas (prepacked weights)
  uint64_t device_weight_bytes = 0;  // weights uploaded to devices the host cannot read, at load
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& options,
                                                         const KernelRegistry& registry);
  // Model::Load with options.fixed_input_shapes, then Create.
  static absl::StatusOr<std::unique_ptr<Session>> Load(const std::string& path,
                                                       const SessionOptions& options,
                                                       const KernelRegistry& registry);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the model. `output_names` selects outputs (empty: all, in graph order).
  absl::StatusOr<std::vector<OutputTensor>> Run(absl::Span<const InputTensor> inputs,
                                                absl::Span<const std::string> output_names = {},
                                                const RunOptions& run_options = {});

  const Model& model() const { return *model_; }
  const Graph& graph() const { return graph_; }  // after rewrites and device assignment
  const ExecutionPlan& plan() const { return *plan_; }
  const SessionOptions& options() const { return options_; }
  // Graph inputs the caller feeds and declared outputs, with what is known of their shapes.
  std::vector<const Value*> inputs() const;
  std::vector<const Value*> outputs() const;
  // Arenas per device, in plan order. The list is fixed at Create (run slots hold pointers into
  // it); the arenas themselves are thread-safe: stats, caps and trims go through d.execution and
  // d.io while runs go on.
  absl::Span<const DeviceArenas> devices() const { return devices_; }
  // The IOArena where inputs are staged (misaligned ones here; converted ones by the server):
  // the fallback (host) device's. Thread-safe.
  memory::IOArena& staging_arena() const { return *devices_[staging_device_].io; }
  SessionStats stats() const;
  int fused_nodes() const { return fused_nodes_; }
  // Values kept channel-blocked between CPU convolutions (engine/blocked_layouts.h).
  int blocked_values() const { return blocked_values_; }
  // What the precision widening pass did: nodes widened to float32, casts inserted, half
  // weights converted and the bytes their float32 copies hold.
  const WideningReport& half_precision() const { return half_precision_; }
  // How the graph was split over devices and what each device holds (logged at load; served by
  // the admin API).
  const partition::PlanReport& partition_report() const { return partition_report_; }
  int boundary_copies() const { return boundary_copies_; }
  // Graph outputs made on a device the host cannot read, copied back to the host in each run.
  int output_copies() const { return output_copies_; }

 private:
  Session() = default;
  absl::Status Init(const KernelRegistry& registry);
  absl::Status PartitionGraph(const KernelRegistry& registry, std::vector<std::string>* devices);
  // The partition config with each device's presence and default budget; notes for the report.
  absl::StatusOr<partition::PartitionConfig> ResolveDevices(std::vector<std::string>* notes) const;
  // The max_input_shapes view of a dynamic model (nullptr: static, or no max shapes).
  struct MaxShapeView;
  absl::StatusOr<std::unique_ptr<MaxShapeView>> MakeMaxShapeView(const KernelRegistry& registry,
                                                                 bool fuse) const;
  // Before the fusions, where a device the host cannot read is configured: partitions the
  // unfused graph and remembers the nodes that go to such devices (device_nodes_).
  absl::Status PlaceDeviceNodes(const KernelRegistry& registry);
  // ApplyFusions over every node but device_nodes_.
  absl::StatusOr<int> FuseOnHost(Graph& g, const KernelRegistry& registry,
                                 DerivedWeights& derived) const;
  // Warns (in the partition report) where a device's exact needs, with its kernels made,
  // exceed its budget: the post-rewrite re-check of the partition (its Level 2,
  // docs/partitioner.md).
  void RecheckBudgets();
  absl::Status CheckBudgets() const;
  // The runtime of `device`'s kind, or nullptr (host devices, kinds without one).
  const DeviceRuntime* RuntimeOf(const std::string& device) const;
  // The system allocator of each device (the fallback's IOArena one apart), then the weights
  // of `uploads` copied into device memory and bound to their device values.
  absl::Status MakeAllocators(const std::vector<std::string>& devices);
  absl::Status UploadWeights(const std::vector<WeightUpload>& uploads);
  absl::Status MakeArenas(const std::vector<std::string>& devices);
  absl::Status MakeRunSlots();
  absl::Status PreAllocate();
  RunSlot* AcquireSlot(absl::Status* status);
  void ReleaseSlot(RunSlot* slot);
  absl::Status BindInputs(absl::Span<const InputTensor> inputs, RunSlot& slot);
  // The value bound for `in`, checked against `val` (its declared shape only when `whole`: an
  // item of a sequence has none).
  absl::StatusOr<Tensor> InputValue(const InputTensor& in, const Value& val, bool whole);
  absl::StatusOr<std::vector<OutputTensor>> CollectOutputs(RunSlot& slot,
                                                           absl::Span<const int> outputs);

  // A weight uploaded to a device: freed with the session, after the plan's kernels.
  struct DeviceWeight {
    DeviceWeight(std::shared_ptr<memory::SystemAllocator> s, void* p, size_t n)
        : system(std::move(s)), ptr(p), bytes(n) {}
    ~DeviceWeight() {
      if (ptr != nullptr) system->Free(ptr, bytes);
    }
    DeviceWeight(const DeviceWeight&) = delete;
    DeviceWeight& operator=(const DeviceWeight&) = delete;
    std::shared_ptr<memory::SystemAllocator> system;
    void* ptr;
    size_t bytes;
    Tensor view;  // the device value's initializer
  };

  // Constant after Create.
  std::shared_ptr<const Model> model_;
  SessionOptions options_;
  // Uploaded weights (graph_'s device values point at their views): outlive plan_ and slots_.
  std::deque<DeviceWeight> device_weights_;
  uint64_t device_weight_bytes_ = 0;
  // Per device name: its system allocator; and the fallback (host) device's IOArena allocator
  // when the session uses a device the host cannot read (page-locked memory).
  std::map<std::string, std::shared_ptr<memory::SystemAllocator>> systems_;
  std::shared_ptr<memory::SystemAllocator> host_io_system_;
  Graph graph_;
  // Weights made at load (widened half weights, folded Conv+BatchNorm weights); kernels may keep
  // pointers to them, so it outlives plan_.
  DerivedWeights derived_weights_;
  WideningReport half_precision_;
  std::unique_ptr<ExecutionPlan> plan_;
  std::vector<DeviceArenas> devices_;
  std::unique_ptr<ThreadPool> threads_;
  std::vector<std::unique_ptr<RunSlot>> slots_;
  int fused_nodes_ = 0;
  int blocked_values_ = 0;
  int boundary_copies_ = 0;
  int output_copies_ = 0;
  std::vector<WeightUpload> uploads_;  // from PartitionGraph, for UploadWeights
  // Nodes bound for devices the host cannot read, by name, with their domain: left unfused.
  std::map<std::string, std::string> device_nodes_;
  size_t staging_device_ = 0;  // where misaligned inputs are staged
  partition::PlanReport partition_report_;

  std::mutex slots_mu_;
  // Protected by slots_mu_.
  std::condition_variable slot_free_;
  std::vector<RunSlot*> free_slots_;

  std::atomic<uint64_t> runs_{0}, failed_runs_{0}, borrowed_{0}, staged_{0}, plan_misses_{0};
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_SESSION_H_

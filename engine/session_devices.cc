// Session's placement half: which devices a model's nodes run on and what that takes. The
// devices of the configuration resolved (present or absent, default budgets), the partition
// (budgeted at the largest input shapes of a dynamic model), the fusions kept off nodes bound for
// a device the host cannot read, the boundary copies, the device allocators and the weights
// uploaded once at load (docs/cuda.md "How a model runs on a GPU", docs/partitioner.md).
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/device_name.h"
#include "base/status_macros.h"
#include "engine/constant_folding.h"
#include "engine/device_copies.h"
#include "engine/lowerings.h"
#include "engine/precision_widening.h"
#include "engine/registry_workspace_estimator.h"
#include "engine/rewrites.h"
#include "engine/session.h"
#include "memory/system_allocator.h"
#include "partition/partitioner.h"

namespace inferd::engine {

namespace {

// The partitioner's view of the kernels: the registry's, and the engine's own (DeviceCopy,
// control flow) for HasKernel. On a device the host cannot read, a node has a kernel only when
// its kernel's factory accepts it: a definition covers an op, but a CUDA kernel may refuse some
// of its nodes (MaxPool with Indices), which then run on the fallback rather than fail the load.
class SessionEstimator final : public RegistryWorkspaceEstimator {
 public:
  explicit SessionEstimator(const KernelRegistry& registry)
      : RegistryWorkspaceEstimator(registry), engine_(EngineKernels()) {}
  bool HasKernel(const Graph& graph, int node, absl::string_view device) const override {
    if (engine_.HasKernel(graph, node, device)) return true;
    if (!RegistryWorkspaceEstimator::HasKernel(graph, node, device)) return false;
    if (partition::IsHostDevice(device)) return true;
    // Asked several times per node as units are offered: made once per (graph, node, kind).
    const auto key = std::make_tuple(&graph, node, partition::DeviceType(device));
    auto it = accepted_.find(key);
    if (it == accepted_.end()) {
      const absl::Status made = TryCreate(graph, node, device);
      it = accepted_.emplace(key, made.code() != absl::StatusCode::kUnimplemented).first;
    }
    return it->second;
  }

 private:
  const RegistryWorkspaceEstimator engine_;
  // Partition runs on one thread; the estimator lives for one load.
  mutable std::map<std::tuple<const Graph*, int, std::string>, bool> accepted_;
};

}  // namespace

const DeviceRuntime* Session::RuntimeOf(const std::string& device) const {
  if (partition::IsHostDevice(device)) return nullptr;
  const DeviceKind kind(partition::DeviceType(device));
  for (const std::shared_ptr<const DeviceRuntime>& r : options_.device_runtimes) {
    if (r != nullptr && r->kind() == kind) return r.get();
  }
  return nullptr;
}

absl::Status Session::MakeAllocators(const std::vector<std::string>& devices) {
  for (const std::string& name : devices) {
    const DeviceRuntime* runtime = RuntimeOf(name);
    std::shared_ptr<memory::SystemAllocator> system;
    if (options_.allocator_factory) {
      system = options_.allocator_factory(name);
    } else if (runtime != nullptr) {
      INFERD_ASSIGN_OR_RETURN(
          system, runtime->MakeAllocator(name, DeviceIndex(name, partition::DeviceType(name))));
    } else {
      system = std::make_shared<memory::CpuSystemAllocator>(name);
    }
    if (system == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no allocator for device '", name, "'"));
    }
    systems_[name] = std::move(system);
    // Outputs made on the device come back into the host IOArena: page-locked memory.
    if (runtime != nullptr && host_io_system_ == nullptr && !options_.allocator_factory) {
      INFERD_ASSIGN_OR_RETURN(host_io_system_,
                              runtime->MakeHostIoAllocator(partition_report_.fallback_device));
    }
  }
  return absl::OkStatus();
}

absl::Status Session::UploadWeights(const std::vector<WeightUpload>& uploads) {
  for (const WeightUpload& u : uploads) {
    const Tensor& host = *graph_.values[u.host_value].initializer;
    const DeviceRuntime* runtime = RuntimeOf(u.device);
    if (runtime == nullptr) {
      return absl::InternalError(absl::StrCat("no runtime for device '", u.device, "'"));
    }
    memory::SystemAllocator& system = *systems_.at(u.device);
    const size_t bytes = host.bytes();
    void* ptr = nullptr;
    if (bytes > 0) {
      absl::StatusOr<void*> p = system.Allocate(bytes);
      if (!p.ok()) {
        return absl::ResourceExhaustedError(
            absl::StrCat("uploading weight '", graph_.values[u.host_value].name, "' (", bytes,
                         " bytes) to ", u.device, ": ", p.status().message()));
      }
      ptr = *p;
    }
    DeviceWeight& w = device_weights_.emplace_back(systems_.at(u.device), ptr, bytes);
    if (bytes > 0) {
      INFERD_RETURN_IF_ERROR(runtime->Upload(DeviceIndex(u.device, partition::DeviceType(u.device)),
                                             ptr, host.raw_data(), bytes));
    }
    w.view = Tensor::Borrowed(host.dtype(), host.shape(), ptr);
    graph_.values[u.device_value].initializer = &w.view;
    device_weight_bytes_ += bytes;
  }
  return absl::OkStatus();
}

absl::StatusOr<partition::PartitionConfig> Session::ResolveDevices(
    std::vector<std::string>* notes) const {
  partition::PartitionConfig config = options_.partition;
  for (partition::DeviceSpec& d : config.devices) {
    INFERD_ASSIGN_OR_RETURN(d.name, NormalizeDeviceName(d.name));
    if (partition::IsHostDevice(d.name)) {
      d.present = true;
      continue;
    }
    // Another kind: present when this process has its runtime and the runtime finds it.
    const DeviceRuntime* runtime = RuntimeOf(d.name);
    const int ordinal = DeviceIndex(d.name, partition::DeviceType(d.name));
    const absl::Status found =
        runtime == nullptr
            ? absl::FailedPreconditionError(absl::StrCat(
                  "this build has no ", partition::DeviceType(d.name),
                  " support (build with --config=", partition::DeviceType(d.name), ")"))
            : runtime->CheckPresent(ordinal);
    d.present = found.ok();
    if (!found.ok()) {
      notes->push_back(absl::StrCat(d.name, " is absent: ", found.message()));
      continue;
    }
    if (!d.budget_bytes) {  // listed without a budget: what is free on it now
      INFERD_ASSIGN_OR_RETURN(DeviceMemoryInfo memory, runtime->MemoryInfo(ordinal));
      d.budget_bytes = memory.free_bytes;
      notes->push_back(absl::StrCat(d.name, " has no budget configured: its free memory at ",
                                    "load, ", partition::FormatBytes(memory.free_bytes)));
    }
  }
  return config;
}

// A second view of a dynamic model with max_input_shapes fixed, through the same passes as the
// session's graph, for the budget (weights are mapped, not copied, so it costs little). The
// graph's weights are views into `model`'s store and `derived`: all three live together.
struct Session::MaxShapeView {
  std::shared_ptr<const Model> model;
  Graph graph;
  DerivedWeights derived;
};

absl::StatusOr<std::unique_ptr<Session::MaxShapeView>> Session::MakeMaxShapeView(
    const KernelRegistry& registry, bool fuse) const {
  bool all_static = true;
  for (const Node& n : graph_.nodes) {
    for (int v : n.outputs) all_static = all_static && (v < 0 || graph_.values[v].shape.IsStatic());
  }
  if (all_static || options_.max_input_shapes.empty()) return nullptr;
  ModelLoadOptions load;
  load.fixed_input_shapes = options_.fixed_input_shapes;
  for (const auto& [name, dims] : options_.max_input_shapes) load.fixed_input_shapes[name] = dims;
  absl::StatusOr<std::shared_ptr<const Model>> loaded = Model::Load(model_->path(), load);
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat("max_input_shapes: ", loaded.status().message()));
  }
  auto view = std::make_unique<MaxShapeView>();
  view->model = *std::move(loaded);
  view->graph = view->model->graph();
  Graph& g = view->graph;
  if (options_.graph_rewrite) INFERD_RETURN_IF_ERROR(options_.graph_rewrite(g));
  if (options_.widen_half_precision) {
    INFERD_RETURN_IF_ERROR(
        WidenHalfPrecision(g, registry, view->derived, options_.keep_half_weights).status());
  }
  INFERD_RETURN_IF_ERROR(ApplyLowerings(g, registry, view->derived).status());
  INFERD_RETURN_IF_ERROR(FoldConstants(g, registry, view->derived).status());
  if (fuse) INFERD_RETURN_IF_ERROR(FuseOnHost(g, registry, view->derived).status());
  return view;
}

absl::Status Session::PlaceDeviceNodes(const KernelRegistry& registry) {
  std::vector<std::string> notes;
  INFERD_ASSIGN_OR_RETURN(const partition::PartitionConfig config, ResolveDevices(&notes));
  bool device = false;
  for (const partition::DeviceSpec& d : config.devices) {
    device = device || (d.present && !partition::IsHostDevice(d.name));
  }
  if (!device) return absl::OkStatus();
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<MaxShapeView> max_view,
                          MakeMaxShapeView(registry, /*fuse=*/false));
  const Graph& costed = max_view != nullptr ? max_view->graph : graph_;
  const SessionEstimator estimator(registry);
  absl::StatusOr<partition::PartitionResult> placed =
      partition::Partition(costed, estimator, config);
  if (!placed.ok()) return absl::OkStatus();  // the partition after the fusions says why
  for (size_t i = 0; i < costed.nodes.size(); ++i) {
    if (!partition::IsHostDevice(placed->node_device[i])) {
      device_nodes_.emplace(costed.nodes[i].name, costed.nodes[i].domain);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Session::FuseOnHost(Graph& g, const KernelRegistry& registry,
                                        DerivedWeights& derived) const {
  // Nodes bound for a device leave the fusions' patterns for the time being: every pattern
  // matches a domain ("", com.microsoft, com.inferd), never this one.
  static constexpr char kOnDevice[] = "inferd.on_device";
  for (Node& n : g.nodes) {
    if (device_nodes_.count(n.name) > 0) n.domain = kOnDevice;
  }
  absl::StatusOr<int> fused = ApplyFusions(g, registry, derived);
  for (Node& n : g.nodes) {
    if (n.domain == kOnDevice) n.domain = device_nodes_.at(n.name);
  }
  return fused;
}

absl::Status Session::PartitionGraph(const KernelRegistry& registry,
                                     std::vector<std::string>* devices) {
  std::vector<std::string> device_notes;
  INFERD_ASSIGN_OR_RETURN(const partition::PartitionConfig config, ResolveDevices(&device_notes));
  // Dynamic models are budgeted at their largest shapes.
  INFERD_ASSIGN_OR_RETURN(std::unique_ptr<MaxShapeView> max_view,
                          MakeMaxShapeView(registry, options_.enable_fusions));
  const Graph* costed = max_view != nullptr ? &max_view->graph : &graph_;
  if (!device_nodes_.empty()) {
    device_notes.push_back(absl::StrCat(
        "fusions left the ", device_nodes_.size(),
        " nodes placed on devices the host cannot read unfused (the fused ops have CPU kernels "
        "only)"));
  }
  const SessionEstimator estimator(registry);
  absl::StatusOr<partition::PartitionResult> partitioned =
      partition::Partition(*costed, estimator, config);
  if (!partitioned.ok()) {
    if (device_notes.empty()) return partitioned.status();
    return absl::Status(
        partitioned.status().code(),
        absl::StrCat(partitioned.status().message(), " (", absl::StrJoin(device_notes, "; "), ")"));
  }
  partition::PartitionResult result = *std::move(partitioned);
  INFERD_RETURN_IF_ERROR(partition::ApplyPartition(result, graph_));
  partition_report_ = std::move(result.report);
  for (std::string& note : device_notes) partition_report_.notes.push_back(std::move(note));
  for (const partition::DeviceReport& d : partition_report_.devices) {
    // Listed devices that are absent (allowed by fallback_on_missing_device) get no arenas.
    bool used = false;
    for (const Node& n : graph_.nodes) used = used || n.device == d.device;
    if (used || d.device == partition_report_.fallback_device) devices->push_back(d.device);
  }
  INFERD_ASSIGN_OR_RETURN(DeviceCopies copies,
                          InsertDeviceCopies(graph_, registry, partition_report_.fallback_device));
  boundary_copies_ = copies.copies;
  output_copies_ = copies.output_copies;
  uploads_ = std::move(copies.uploads);
  return absl::OkStatus();
}

}  // namespace inferd::engine

#include "engine/session.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/checked_math.h"
#include "base/device_name.h"
#include "base/status_macros.h"
#include "engine/blocked_layouts.h"
#include "engine/constant_folding.h"
#include "engine/copy.h"
#include "engine/int8_channels_last.h"
#include "engine/lowerings.h"
#include "engine/rewrites.h"
#include "partition/activation_plan.h"
#include "partition/budget_recheck.h"
#include "partition/partitioner.h"

namespace inferd::engine {

Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Load(const std::string& path,
                                                       const SessionOptions& options,
                                                       const KernelRegistry& registry) {
  ModelLoadOptions load;
  load.fixed_input_shapes = options.fixed_input_shapes;
  INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Load(path, load));
  return Create(std::move(model), options, registry);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& options,
                                                         const KernelRegistry& registry) {
  std::unique_ptr<Session> s(new Session());
  s->model_ = std::move(model);
  s->options_ = options;
  s->options_.intra_op_threads = std::max(1, options.intra_op_threads);
  s->options_.max_concurrent_runs = std::max(1, options.max_concurrent_runs);
  INFERD_RETURN_IF_ERROR(s->Init(registry));
  return s;
}

absl::Status Session::Init(const KernelRegistry& registry) {
  // pass 1: the session's own copy of the graph, rewritten.
  graph_ = model_->graph();
  if (options_.graph_rewrite) INFERD_RETURN_IF_ERROR(options_.graph_rewrite(graph_));
  if (options_.widen_half_precision) {
    INFERD_ASSIGN_OR_RETURN(half_precision_, WidenHalfPrecision(graph_, registry, derived_weights_,
                                                                options_.keep_half_weights));
  }
  INFERD_RETURN_IF_ERROR(ApplyLowerings(graph_, registry, derived_weights_).status());
  INFERD_RETURN_IF_ERROR(FoldConstants(graph_, registry, derived_weights_).status());
  if (options_.enable_fusions) {
    // Nodes that will run on a GPU stay unfused: the fused ops have CPU kernels only.
    INFERD_RETURN_IF_ERROR(PlaceDeviceNodes(registry));
    INFERD_ASSIGN_OR_RETURN(fused_nodes_, FuseOnHost(graph_, registry, derived_weights_));
  }
  // pass 2: devices: partition (rules and budgets), then the copies at device boundaries.
  std::vector<std::string> devices;
  INFERD_RETURN_IF_ERROR(PartitionGraph(registry, &devices));
  // Blocked activations between CPU convolutions (engine/blocked_layouts.h): once devices are
  // known, since only CPU kernels read them.
  // The same for 8-bit activations between quantized convolutions, channels-last
  // (engine/int8_channels_last.h).
  if (options_.enable_fusions) {
    blocked_values_ = AssignBlockedLayouts(graph_, registry);
    blocked_values_ += AssignInt8ChannelsLast(graph_, registry);
  }
  // pass 3: memory of each device; the weights its nodes read, uploaded once.
  INFERD_RETURN_IF_ERROR(MakeAllocators(devices));
  INFERD_RETURN_IF_ERROR(UploadWeights(uploads_));
  // pass 4: kernels and the execution plan.
  INFERD_ASSIGN_OR_RETURN(
      plan_, ExecutionPlan::Build(graph_, registry, devices, options_.intra_op_threads));
  // Level 2 of the budget: with the kernels made, their declared workspaces are exact.
  RecheckBudgets();
  // pass 5: arenas per device, and the run slots (weights are bound once).
  INFERD_RETURN_IF_ERROR(MakeArenas(devices));
  threads_ = std::make_unique<ThreadPool>(options_.intra_op_threads);
  INFERD_RETURN_IF_ERROR(MakeRunSlots());
  if (options_.pre_allocate) {
    INFERD_RETURN_IF_ERROR(CheckBudgets());
    INFERD_RETURN_IF_ERROR(PreAllocate());
  }
  return absl::OkStatus();
}

absl::Status Session::MakeArenas(const std::vector<std::string>& devices) {
  for (const std::string& name : devices) {
    DeviceArenas d;
    d.device = name;
    d.system = systems_.at(name);
    d.runtime = RuntimeOf(name);
    if (d.runtime != nullptr) d.ordinal = DeviceIndex(name, partition::DeviceType(name));
    d.execution = std::make_unique<memory::ExecutionArena>(d.system);
    const bool pinned_io = name == partition_report_.fallback_device && host_io_system_ != nullptr;
    d.io = std::make_unique<memory::IOArena>(pinned_io ? host_io_system_ : d.system);
    auto caps = options_.retention_caps.find(name);
    if (caps != options_.retention_caps.end()) {
      for (const auto& [arena, bytes] : caps->second) {
        if (arena == "execution") {
          d.execution->SetRetentionCap(bytes);
        } else if (arena == "io") {
          d.io->SetRetentionCap(bytes);
        } else {
          return absl::InvalidArgumentError(absl::StrCat("retention cap for unknown arena '", arena,
                                                         "' (use 'execution' or 'io')"));
        }
      }
    }
    devices_.push_back(std::move(d));
  }
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (devices_[d].device == partition_report_.fallback_device) staging_device_ = d;
  }
  return absl::OkStatus();
}

absl::Status Session::MakeRunSlots() {
  std::vector<DeviceArenas*> arenas;
  for (DeviceArenas& d : devices_) arenas.push_back(&d);
  for (int i = 0; i < options_.max_concurrent_runs; ++i) {
    auto slot = std::make_unique<RunSlot>(*plan_, arenas);
    for (const DeviceArenas& d : devices_) {
      std::unique_ptr<DeviceStream> stream;
      if (d.runtime != nullptr) {
        absl::StatusOr<std::unique_ptr<DeviceStream>> made = d.runtime->MakeStream(d.ordinal);
        if (!made.ok()) {
          return absl::Status(made.status().code(), absl::StrCat("a stream on ", d.device, ": ",
                                                                 made.status().message()));
        }
        stream = *std::move(made);
      }
      slot->streams.push_back(std::move(stream));
    }
    free_slots_.push_back(slot.get());
    slots_.push_back(std::move(slot));
  }
  return absl::OkStatus();
}

void Session::RecheckBudgets() {
  if (!plan_->is_static()) return;  // declared workspaces depend on run-time shapes
  // What each device will hold, now that the plan is made: its weights, the block at the size
  // class its execution arena allocates, each output at its IOArena size class, the subgraphs.
  std::vector<uint64_t> outputs(plan_->devices().size(), 0);
  for (size_t v = 0; v < plan_->values().size(); ++v) {
    const ValuePlan& vp = plan_->values()[v];
    if (vp.root != static_cast<int>(v) || vp.role != AllocationRole::kIO) continue;
    const int64_t bytes = StaticBytes(graph_.values[v]);
    if (bytes > 0) {
      outputs[vp.device] = SaturatingAdd<uint64_t>(
          outputs[vp.device], partition::ArenaCapacity(static_cast<uint64_t>(bytes)));
    }
  }
  for (size_t d = 0; d < plan_->devices().size(); ++d) {
    const DevicePlan& dp = plan_->devices()[d];
    for (partition::DeviceReport& r : partition_report_.devices) {
      if (r.device != dp.name) continue;
      uint64_t measured =
          SaturatingAdd<uint64_t>(r.accounted.weights, partition::ArenaCapacity(dp.block_bytes));
      measured = SaturatingAdd<uint64_t>(measured, outputs[d]);
      r.measured_bytes = SaturatingAdd<uint64_t>(measured, dp.subgraph_bytes);
    }
  }
  std::vector<partition::DeclaredWorkspace> declared;
  declared.reserve(plan_->steps().size());
  for (const PlanStep& step : plan_->steps()) {
    uint64_t bytes = 0;
    for (const WorkspaceRequirement& w : step.workspaces)
      bytes = SaturatingAdd<uint64_t>(bytes, w.bytes);
    declared.push_back(partition::DeclaredWorkspace{graph_.nodes[step.node].name,
                                                    plan_->devices()[step.device].name, bytes});
  }
  partition::RecheckResult recheck = partition::RecheckBudgets(partition_report_, declared);
  for (std::string& w : recheck.warnings) partition_report_.warnings.push_back(std::move(w));
}

absl::Status Session::CheckBudgets() const {
  // A pre-allocated plan must fit each device's budget: weights + one block per concurrent run
  // + one set of outputs per run.
  for (size_t d = 0; d < devices_.size(); ++d) {
    const partition::DeviceReport* report = partition_report_.FindDevice(devices_[d].device);
    if (report == nullptr || !report->budget_bytes) continue;
    const DevicePlan& dp = plan_->devices()[d];
    const uint64_t runs = slots_.size();
    const uint64_t weights = report->accounted.weights;
    const uint64_t per_run = SaturatingAdd<uint64_t>(
        SaturatingAdd<uint64_t>(dp.block_bytes, dp.output_bytes), dp.subgraph_bytes);
    const uint64_t needed = SaturatingAdd(weights, SaturatingMul(runs, per_run));
    if (needed > *report->budget_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "pre_allocate: ", dp.name, " needs ", needed, " bytes but its budget is ",
          *report->budget_bytes, ": weights ", weights, ", intermediates and workspaces ",
          dp.block_bytes, " x ", runs, " runs (workspaces ", dp.workspace_bytes, "), outputs ",
          dp.output_bytes, " x ", runs, " runs",
          dp.subgraph_bytes > 0
              ? absl::StrCat(", subgraphs ", dp.subgraph_bytes, " x ", runs, " runs")
              : ""));
    }
  }
  return absl::OkStatus();
}

absl::Status Session::PreAllocate() {
  if (!plan_->fully_static()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pre_allocate needs every shape known at load, but ", plan_->not_fully_static_reason(),
        "; give fixed_input_shapes for the dynamic inputs"));
  }
  // Each slot's blocks and its subgraphs' slots and blocks; `warm` collects one execution-arena
  // buffer per subgraph output handed over, released into the free lists at the end.
  std::vector<memory::AllocationHandle> warm;
  for (auto& slot : slots_) {
    absl::Status status = PreAllocateSlot(*slot, &warm);
    if (!status.ok()) {
      std::string sizes;
      for (const DevicePlan& dp : plan_->devices()) {
        absl::StrAppend(&sizes, sizes.empty() ? "" : "; ", dp.name, " needs ", dp.block_bytes,
                        " bytes per run x ", slots_.size(),
                        " concurrent runs (intermediates and workspaces, of which ",
                        dp.workspace_bytes, " workspaces) plus ", dp.output_bytes,
                        " output bytes per run");
        if (dp.subgraph_bytes > 0) {
          absl::StrAppend(&sizes, " and ", dp.subgraph_bytes, " subgraph bytes per run");
        }
      }
      return absl::ResourceExhaustedError(
          absl::StrCat("pre_allocate: ", sizes, ": ", status.message()));
    }
  }
  // Warm each device's IOArena with one set of output buffers per run slot: a run whose earlier
  // outputs were released needs no system allocation.
  for (size_t v = 0; v < plan_->values().size(); ++v) {
    const ValuePlan& vp = plan_->values()[v];
    if (vp.root != static_cast<int>(v) || vp.role != AllocationRole::kIO) continue;
    const int64_t bytes = StaticBytes(graph_.values[v]);
    if (graph_.values[v].type == DataType::kString) continue;  // heap, not in the IOArena
    for (size_t k = 0; k < slots_.size(); ++k) {
      absl::StatusOr<memory::AllocationHandle> h = devices_[vp.device].io->Allocate(bytes);
      if (!h.ok()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "pre_allocate: output '", graph_.values[v].name, "' (", bytes,
            " bytes) does not fit on ", devices_[vp.device].device, ": ", h.status().message()));
      }
      warm.push_back(std::move(*h));
    }
  }
  return absl::OkStatus();  // `warm` returns to the arenas' free lists here
}

std::vector<const Value*> Session::inputs() const {
  std::vector<const Value*> out;
  for (int v : graph_.inputs) out.push_back(&graph_.values[v]);
  return out;
}

std::vector<const Value*> Session::outputs() const {
  std::vector<const Value*> out;
  for (int v : graph_.outputs) out.push_back(&graph_.values[v]);
  return out;
}

SessionStats Session::stats() const {
  SessionStats s;
  s.runs = runs_.load();
  s.failed_runs = failed_runs_.load();
  s.input_bytes_borrowed = borrowed_.load();
  s.input_bytes_staged = staged_.load();
  s.static_plan_misses = plan_misses_.load();
  for (const PlanStep& step : plan_->steps())
    s.kernel_persistent_bytes += step.kernel->PersistentBytes();
  s.device_weight_bytes = device_weight_bytes_;
  return s;
}

RunSlot* Session::AcquireSlot(absl::Status* status) {
  std::unique_lock<std::mutex> lock(slots_mu_);
  if (free_slots_.empty() && options_.fail_fast_when_busy) {
    *status = absl::FailedPreconditionError(absl::StrCat(
        "all ", slots_.size(), " run slots of this model are busy (max_concurrent_runs)"));
    return nullptr;
  }
  slot_free_.wait(lock, [this] { return !free_slots_.empty(); });
  RunSlot* slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

void Session::ReleaseSlot(RunSlot* slot) {
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    free_slots_.push_back(slot);
  }
  slot_free_.notify_one();
}

absl::StatusOr<Tensor> Session::InputValue(const InputTensor& in, const Value& val, bool whole) {
  const ValueKind expected = whole ? val.kind : ValueKind::kTensor;
  if (in.kind != expected) {
    return absl::InvalidArgumentError(absl::StrCat("input '", val.name, "': expected ",
                                                   ValueKindName(expected), ", got ",
                                                   ValueKindName(in.kind)));
  }
  if (in.type != val.type) {
    return absl::InvalidArgumentError(absl::StrCat("input '", val.name, "': expected ",
                                                   DataTypeName(val.type), ", got ",
                                                   DataTypeName(in.type)));
  }
  if (in.kind != ValueKind::kTensor) {
    // A sequence or optional: its tensors are bound like tensor inputs, without the declared
    // shape (a sequence's tensors may differ in shape).
    if (in.kind == ValueKind::kOptional && in.items.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", val.name, "': an optional holds at most one value"));
    }
    std::vector<Tensor> items;
    for (const InputTensor& item : in.items) {
      const bool nested = in.kind == ValueKind::kOptional && item.kind == ValueKind::kSequence;
      if (item.kind != ValueKind::kTensor && !nested) {
        return absl::InvalidArgumentError(
            absl::StrCat("input '", val.name, "': a ", ValueKindName(in.kind), " of ",
                         ValueKindName(item.kind), "s is not supported"));
      }
      Value inner = val;
      inner.kind = item.kind;
      INFERD_ASSIGN_OR_RETURN(Tensor t, InputValue(item, inner, /*whole=*/nested));
      items.push_back(std::move(t));
    }
    if (in.kind == ValueKind::kSequence) return Tensor::Sequence(in.type, std::move(items));
    if (items.empty()) return Tensor::OptionalNone(in.type);
    return Tensor::OptionalOf(std::move(items[0]));
  }
  absl::Status bounds = CheckShapeBounds(in.shape.dims(), ElementSize(in.type));
  if (!bounds.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("input '", val.name, "': shape ",
                                                   ShapeForMessage(in.shape.dims()), ": ",
                                                   bounds.message()));
  }
  if (whole && val.kind == ValueKind::kTensor && !val.shape.Matches(in.shape)) {
    return absl::InvalidArgumentError(absl::StrCat("input '", val.name, "': expected shape ",
                                                   val.shape.ToString(), ", got ",
                                                   in.shape.ToString()));
  }
  if (in.type == DataType::kString) {  // borrowed std::strings (docs/strings.md)
    std::optional<int64_t> count = CheckedNumElements(in.shape.dims(), sizeof(std::string));
    if (!count || static_cast<size_t>(*count) * sizeof(std::string) != in.bytes ||
        (in.data == nullptr && *count > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", val.name, "': shape ", in.shape.ToString(), " of string needs ",
                       count ? absl::StrCat(*count) : "too many", " strings, got ",
                       in.bytes / sizeof(std::string)));
    }
    return Tensor::Borrowed(in.type, in.shape, in.data);
  }
  std::optional<int64_t> n = CheckedNumElements(in.shape.dims(), ElementSize(in.type));
  if (!n || static_cast<size_t>(*n) * ElementSize(in.type) != in.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", val.name, "': shape ", in.shape.ToString(), " of ", DataTypeName(in.type),
        " needs ", n ? absl::StrCat(*n * ElementSize(in.type)) : "too many", " bytes, got ",
        in.bytes));
  }
  if (in.data == nullptr && in.bytes > 0) {
    return absl::InvalidArgumentError(absl::StrCat("input '", val.name, "' has no data"));
  }
  if (reinterpret_cast<uintptr_t>(in.data) % std::max<size_t>(1, ElementSize(in.type)) == 0) {
    borrowed_.fetch_add(in.bytes, std::memory_order_relaxed);
    return Tensor::Borrowed(in.type, in.shape, in.data);
  }
  // Misaligned for its element type: staged in the staging arena (the fallback device's).
  INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, staging_arena().Allocate(in.bytes));
  CopyPayload(h.data(), in.data, in.bytes);
  staged_.fetch_add(in.bytes, std::memory_order_relaxed);
  return Tensor::Owned(in.type, in.shape, std::move(h));
}

absl::Status Session::BindInputs(absl::Span<const InputTensor> inputs, RunSlot& slot) {
  for (const InputTensor& in : inputs) {
    const int v = graph_.FindValue(in.name);
    if (v < 0 || !graph_.values[v].is_graph_input) {
      std::vector<std::string> names;
      for (int i : graph_.inputs) names.push_back(graph_.values[i].name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown input '", in.name, "'; the model's inputs are: ", absl::StrJoin(names, ", ")));
    }
    if (!slot.values[v].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' is given twice"));
    }
    INFERD_ASSIGN_OR_RETURN(slot.values[v], InputValue(in, graph_.values[v], /*whole=*/true));
  }
  for (int v : graph_.inputs) {
    if (slot.values[v].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", graph_.values[v].name, "' is missing"));
    }
  }
  return absl::OkStatus();
}

namespace {

// A string output's elements: its heap vector, or a copy (a borrowed input or weight).
std::shared_ptr<const std::vector<std::string>> StringsOf(const Tensor& t) {
  if (t.holds_strings() && t.shared_strings()->size() == static_cast<size_t>(t.NumElements()) &&
      t.raw_data() == t.shared_strings()->data()) {
    return t.shared_strings();
  }
  return Tensor::StringsCopy(t, t.shape()).shared_strings();
}

// A sequence or optional output: each tensor's IOArena buffer handed over, or (a graph input or
// weight among its tensors) copied into `io`.
absl::StatusOr<OutputTensor> CollectList(Tensor& value, memory::IOArena& io) {
  OutputTensor out;
  out.kind = value.kind();
  out.type = value.dtype();
  out.shape = value.shape();
  for (Tensor& item : value.mutable_items()) {
    if (!item.is_tensor()) {
      INFERD_ASSIGN_OR_RETURN(OutputTensor inner, CollectList(item, io));
      out.items.push_back(std::move(inner));
      continue;
    }
    OutputTensor o;
    o.type = item.dtype();
    o.shape = item.shape();
    if (item.is_string()) {
      o.strings = StringsOf(item);
    } else if (item.owns_buffer() && item.handle().arena_kind() == memory::ArenaKind::kIO) {
      o.buffer = item.TakeHandle();
    } else {
      INFERD_ASSIGN_OR_RETURN(o.buffer, io.Allocate(item.bytes()));
      CopyPayload(o.buffer.data(), item.raw_data(), item.bytes());
    }
    out.items.push_back(std::move(o));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<OutputTensor>> Session::CollectOutputs(RunSlot& slot,
                                                                  absl::Span<const int> outputs) {
  std::vector<OutputTensor> result;
  result.reserve(outputs.size());
  for (int v : outputs) {
    const ValuePlan& vp = plan_->values()[v];
    Tensor& t = slot.values[v];
    if (!t.is_tensor()) {
      INFERD_ASSIGN_OR_RETURN(OutputTensor out, CollectList(t, *devices_[vp.device].io));
      out.name = graph_.values[v].name;
      result.push_back(std::move(out));
      continue;
    }
    OutputTensor out;
    out.name = graph_.values[v].name;
    out.type = t.dtype();
    out.shape = t.shape();
    if (t.is_string()) {
      out.strings = StringsOf(t);
      result.push_back(std::move(out));
      continue;
    }
    // The buffer is owned by the output itself, or by the root of its alias group.
    memory::AllocationHandle handle;
    if (t.owns_buffer()) {
      handle = t.TakeHandle();
    } else if (vp.role == AllocationRole::kIO && slot.values[vp.root].owns_buffer() &&
               slot.values[vp.root].raw_data() == t.raw_data()) {
      handle = slot.values[vp.root].TakeHandle();
    }
    if (handle.valid() && handle.arena_kind() == memory::ArenaKind::kIO) {
      out.buffer = std::move(handle);
    } else {
      // A graph input or weight returned as an output (or an output listed twice): copied.
      INFERD_ASSIGN_OR_RETURN(out.buffer, devices_[vp.device].io->Allocate(t.bytes()));
      CopyPayload(out.buffer.data(), t.raw_data(), t.bytes());
    }
    result.push_back(std::move(out));
  }
  return result;
}

absl::StatusOr<std::vector<OutputTensor>> Session::Run(absl::Span<const InputTensor> inputs,
                                                       absl::Span<const std::string> output_names,
                                                       const RunOptions& run_options) {
  std::vector<int> outputs;
  if (output_names.empty()) {
    outputs = graph_.outputs;
  } else {
    for (const std::string& name : output_names) {
      const int v = graph_.FindValue(name);
      if (v < 0 || !graph_.values[v].is_graph_output) {
        return absl::InvalidArgumentError(
            absl::StrCat("requested output '", name, "' is not an output of the model"));
      }
      outputs.push_back(v);
    }
  }
  absl::Status status;
  RunSlot* slot = AcquireSlot(&status);
  if (slot == nullptr) return status;
  absl::StatusOr<std::vector<OutputTensor>> result;
  status = BindInputs(inputs, *slot);
  if (status.ok()) {
    const RunEnv env{threads_.get(), &plan_misses_, &run_options, plan_.get()};
    status = ExecutePlan(env, *slot);
  }
  // The run's device work must be done before its buffers go back to the shared arenas (and
  // before a failed run is reported: the stream may hold the first error).
  status.Update(slot->SynchronizeStreams());
  if (status.ok()) {
    result = CollectOutputs(*slot, outputs);
  } else {
    result = status;
  }
  slot->Clear();
  ReleaseSlot(slot);
  runs_.fetch_add(1, std::memory_order_relaxed);
  if (!result.ok()) failed_runs_.fetch_add(1, std::memory_order_relaxed);
  return result;
}

}  // namespace inferd::engine

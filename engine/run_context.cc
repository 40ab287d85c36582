#include "engine/run_context.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/copy.h"

namespace inferd::engine {
namespace {

// Whether every tensor of `value` (itself, or a sequence's / optional's items) owns a buffer of
// an arena of `kind`: such a value may be handed over as it is.
// A string tensor on the heap (docs/strings.md) belongs to no arena and is handed over as it is.
bool OwnsAll(const Tensor& value, memory::ArenaKind kind) {
  if (value.holds_strings()) return true;
  if (value.is_tensor()) return value.owns_buffer() && value.handle().arena_kind() == kind;
  for (const Tensor& item : value.items()) {
    if (!OwnsAll(item, kind)) return false;
  }
  return true;
}

// A deep copy of `value` whose tensors each own a buffer of `arena`.
template <typename ArenaT>
absl::StatusOr<Tensor> CopyInto(const Tensor& value, ArenaT& arena) {
  if (value.is_string()) return Tensor::StringsCopy(value, value.shape());
  if (value.is_tensor()) {
    INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, arena.Allocate(value.bytes()));
    Tensor copy = Tensor::Owned(value.dtype(), value.shape(), std::move(h));
    CopyPayload(copy.raw_mutable_data(), value.raw_data(), value.bytes());
    return copy;
  }
  std::vector<Tensor> items;
  items.reserve(value.items().size());
  for (const Tensor& item : value.items()) {
    INFERD_ASSIGN_OR_RETURN(Tensor copy, CopyInto(item, arena));
    items.push_back(std::move(copy));
  }
  if (value.is_sequence()) return Tensor::Sequence(value.dtype(), std::move(items));
  if (items.empty()) return Tensor::OptionalNone(value.dtype());
  return Tensor::OptionalOf(std::move(items[0]));
}

// A string tensor of `shape` whose elements are empty strings, on the heap (docs/strings.md).
// Its element count is checked with sizeof(std::string) per element; a failed allocation is
// RESOURCE_EXHAUSTED, not an exception.
absl::StatusOr<Tensor> EmptyStrings(const Shape& shape) {
  std::optional<int64_t> n = CheckedNumElements(shape.dims(), sizeof(std::string));
  if (!n) {
    return absl::InvalidArgumentError(
        absl::StrCat("string tensor shape ", shape.ToString(), " is invalid or too large"));
  }
  try {
    return Tensor::Strings(shape, std::vector<std::string>(static_cast<size_t>(*n)));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no memory for a string tensor of shape ", shape.ToString()));
  }
}

// The slot's stream on device `d`, or nullptr (a host device, a host-only plan).
DeviceStream* StreamOf(const RunSlot& slot, int d) {
  return static_cast<size_t>(d) < slot.streams.size() ? slot.streams[d].get() : nullptr;
}

// An execution-side buffer of `bytes` on device `d`: on a device with a stream, the smallest
// buffer this run gave back there that is large enough (RunSlot::held), else the arena's.
absl::StatusOr<memory::AllocationHandle> AllocateExecution(RunSlot& slot, int d, size_t bytes) {
  if (StreamOf(slot, d) != nullptr) {
    std::vector<memory::AllocationHandle>& held = slot.held[d];
    size_t best = held.size();
    for (size_t i = 0; i < held.size(); ++i) {
      if (held[i].capacity() >= bytes &&
          (best == held.size() || held[i].capacity() < held[best].capacity())) {
        best = i;
      }
    }
    if (best < held.size()) {
      memory::AllocationHandle h = std::move(held[best]);
      held[best] = std::move(held.back());
      held.pop_back();
      return h;
    }
  }
  return slot.devices[d]->execution->Allocate(bytes);
}

// Gives back an execution-side buffer of device `d`: to the arena on a host device, to the
// slot's held buffers on a device with a stream (it may still be read there).
void GiveBack(RunSlot& slot, int d, memory::AllocationHandle h) {
  if (h.valid() && StreamOf(slot, d) != nullptr) {
    slot.held[d].push_back(std::move(h));
  }  // else: released here
}

// The context one kernel invocation sees.
class RunContext final : public KernelContext, public SubgraphRunner {
 public:
  RunContext(const RunEnv& env, RunSlot& slot, size_t step_index)
      : env_(env),
        slot_(slot),
        plan_(slot.plan),
        step_(plan_.steps()[step_index]),
        step_index_(step_index),
        node_(plan_.graph().nodes[step_.node]),
        device_(*slot.devices[step_.device]) {}

  int num_inputs() const override { return static_cast<int>(node_.inputs.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= num_inputs() || node_.inputs[i] < 0) return nullptr;
    const Tensor& t = slot_.values[node_.inputs[i]];
    return t.empty() ? nullptr : &t;
  }
  int num_outputs() const override { return static_cast<int>(node_.outputs.size()); }
  bool output_wanted(int slot) const override {
    return slot >= 0 && slot < num_outputs() && node_.outputs[slot] >= 0;
  }

  absl::StatusOr<Tensor*> MakeOutputTensor(int slot, DataType type, const Shape& shape) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InternalError(absl::StrCat("output slot ", slot, " out of range"));
    }
    std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(type));
    if (!n) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", slot, " shape ", shape.ToString(), " is invalid or too large"));
    }
    const size_t bytes = static_cast<size_t>(*n) * ElementSize(type);
    const int v = node_.outputs[slot];
    if (type == DataType::kString) {  // heap, never an arena (docs/strings.md)
      if (v >= 0 && !slot_.values[v].empty()) {
        return absl::InternalError(absl::StrCat("output ", slot, " made twice"));
      }
      INFERD_ASSIGN_OR_RETURN(Tensor strings, EmptyStrings(shape));
      Tensor& out = v < 0 ? slot_.scratch_outputs.emplace_back() : slot_.values[v];
      out = std::move(strings);
      return &out;
    }
    if (v < 0) {  // an optional output nobody reads: scratch from the execution side
      INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                              AllocateExecution(slot_, step_.device, bytes));
      slot_.scratch_outputs.push_back(Tensor::Owned(type, shape, std::move(h)));
      return &slot_.scratch_outputs.back();
    }
    Tensor& out = slot_.values[v];
    if (!out.empty()) return absl::InternalError(absl::StrCat("output ", slot, " made twice"));
    const ValuePlan& vp = plan_.values()[v];
    if (vp.role == AllocationRole::kIO) {
      INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h, device_.io->Allocate(bytes));
      out = Tensor::Owned(type, shape, std::move(h));
    } else if (vp.planned && vp.root == v && bytes <= vp.bytes &&
               slot_.blocks[step_.device].valid()) {
      auto* base = static_cast<unsigned char*>(slot_.blocks[step_.device].data());
      out = Tensor::Borrowed(type, shape, base + vp.offset);
    } else {
      // A shape larger than planned (shape inference disagreed with the kernel), or an alias
      // the kernel chose to copy: from the arena instead of the block.
      if (vp.planned && vp.root == v) env_.plan_misses->fetch_add(1, std::memory_order_relaxed);
      INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                              AllocateExecution(slot_, step_.device, bytes));
      out = Tensor::Owned(type, shape, std::move(h));
    }
    return &out;
  }

  absl::StatusOr<Tensor*> MakeOutputAlias(int slot, int input_index, const Shape& shape) override {
    const Tensor* in = input(input_index);
    if (in == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("input ", input_index, " is absent"));
    }
    std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(in->dtype()));
    if (!n || static_cast<size_t>(*n) * ElementSize(in->dtype()) != in->bytes() ||
        (in->is_string() && *n != in->NumElements())) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot view ", in->shape().ToString(), " as ", shape.ToString()));
    }
    const bool allowed = std::find(step_.aliases.begin(), step_.aliases.end(),
                                   std::make_pair(slot, input_index)) != step_.aliases.end();
    if ((allowed || in->holds_strings()) && node_.outputs[slot] >= 0) {
      // A heap string tensor is shared by its views: aliasing it is always safe.
      Tensor& out = slot_.values[node_.outputs[slot]];
      out = in->View();
      out.Reshape(shape);
      return &out;
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, MakeOutputTensor(slot, in->dtype(), shape));
    INFERD_RETURN_IF_ERROR(CopyData(*out, *in));
    return out;
  }

  absl::StatusOr<Tensor> MakeTemporaryTensor(DataType type, const Shape& shape) override {
    std::optional<int64_t> n = CheckedNumElements(shape.dims(), ElementSize(type));
    if (!n) return absl::InvalidArgumentError("temporary shape is invalid or too large");
    if (type == DataType::kString) return EmptyStrings(shape);
    INFERD_ASSIGN_OR_RETURN(
        memory::AllocationHandle h,
        AllocateExecution(slot_, step_.device, static_cast<size_t>(*n) * ElementSize(type)));
    if (device_stream() == nullptr) return Tensor::Owned(type, shape, std::move(h));
    // On a device the kernel's work may still be queued when it drops the tensor: the slot keeps
    // the buffer until the step ends, then holds it for this run (RunSlot::held).
    Tensor t = Tensor::Borrowed(type, shape, h.data());
    slot_.step_temporaries.push_back(std::move(h));
    return t;
  }

  absl::StatusOr<void*> GetWorkspace(int slot_id) override {
    const bool planned = plan_.is_static();
    const std::vector<WorkspaceRequirement>& reqs =
        planned ? step_.workspaces : slot_.last_workspaces[step_index_];
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (reqs[i].slot_id != slot_id) continue;
      if (planned) {
        auto* base = static_cast<unsigned char*>(slot_.blocks[step_.device].data());
        return static_cast<void*>(base + step_.workspace_offsets[i]);
      }
      return slot_.workspaces[i].data();
    }
    return absl::InternalError(absl::StrCat("workspace ", slot_id, " was not declared"));
  }

  ThreadPool& threads() override { return *env_.threads; }
  SubgraphRunner* subgraphs() override { return step_.subplans.empty() ? nullptr : this; }
  DeviceStream* device_stream() const override { return StreamOf(slot_, step_.device); }
  DeviceStream* input_stream(int i) const override {
    if (i < 0 || i >= num_inputs() || node_.inputs[i] < 0) return nullptr;
    const int root = plan_.values()[node_.inputs[i]].root;
    const ValuePlan& rp = plan_.values()[root];
    // Graph inputs and host weights are host memory; made values and uploaded weights live on
    // their device.
    if (rp.producer_step < 0 && plan_.graph().values[root].resident_device.empty()) {
      return nullptr;
    }
    return StreamOf(slot_, rp.device);
  }

  absl::Status SetOutput(int slot, Tensor value) override {
    if (slot < 0 || slot >= num_outputs()) {
      return absl::InternalError(absl::StrCat("output slot ", slot, " out of range"));
    }
    const int v = node_.outputs[slot];
    if (v < 0) return absl::OkStatus();  // nobody reads it
    if (!slot_.values[v].empty()) {
      return absl::InternalError(absl::StrCat("output ", slot, " made twice"));
    }
    const memory::ArenaKind want = plan_.values()[v].role == AllocationRole::kIO
                                       ? memory::ArenaKind::kIO
                                       : memory::ArenaKind::kExecution;
    if (!value.is_tensor() && !OwnsAll(value, want)) {
      // A sequence or optional with a tensor of another arena (or borrowed): copied, tensor by
      // tensor, into the slot's arena.
      if (want == memory::ArenaKind::kIO) {
        INFERD_ASSIGN_OR_RETURN(value, CopyInto(value, *device_.io));
      } else {
        INFERD_ASSIGN_OR_RETURN(value, CopyInto(value, *device_.execution));
      }
    }
    if (OwnsAll(value, want)) {
      slot_.values[v] = std::move(value);  // handed over
      return absl::OkStatus();
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, MakeOutputTensor(slot, value.dtype(), value.shape()));
    return CopyData(*out, value);
  }

  int SubgraphInputCount(absl::string_view attribute) const override {
    auto plan = step_.subplans.find(std::string(attribute));
    if (plan == step_.subplans.end()) return -1;
    return static_cast<int>(plan->second->graph().inputs.size());
  }
  int SubgraphOutputCount(absl::string_view attribute) const override {
    auto plan = step_.subplans.find(std::string(attribute));
    if (plan == step_.subplans.end()) return -1;
    return static_cast<int>(plan->second->graph().outputs.size());
  }

  // The slot of subgraph `attribute` (made on first use) with its outer-scope values bound as
  // views of this graph's values of the same name.
  absl::StatusOr<RunSlot*> BindChild(absl::string_view attribute) {
    auto plan = step_.subplans.find(std::string(attribute));
    if (plan == step_.subplans.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no subgraph '", attribute, "'"));
    }
    const ExecutionPlan& sub = *plan->second;
    std::unique_ptr<RunSlot>& child = slot_.children[{static_cast<int>(step_index_), plan->first}];
    if (child == nullptr) child = std::make_unique<RunSlot>(sub, std::vector{&device_});
    const Graph& g = sub.graph();
    for (size_t v = 0; v < g.values.size(); ++v) {
      if (!g.values[v].outer_scope) continue;
      // An outer value made on another device was copied to this node's device at the boundary
      // (engine/device_copies.h): the subgraph reads that copy.
      int pv = plan_.graph().FindValue(absl::StrCat(g.values[v].name, "/copy_to_", device_.device));
      if (pv < 0) pv = plan_.graph().FindValue(g.values[v].name);
      if (pv < 0 || slot_.values[pv].empty()) {
        return absl::InternalError(
            absl::StrCat("outer value '", g.values[v].name, "' is not available to the subgraph"));
      }
      child->values[v] = slot_.values[pv].View();
    }
    return child.get();
  }

  absl::Status RunSubgraphWith(absl::string_view attribute, absl::Span<const Tensor* const> inputs,
                               std::vector<Tensor>& outputs) override {
    INFERD_ASSIGN_OR_RETURN(RunSlot * child, BindChild(attribute));
    const ExecutionPlan& sub = child->plan;
    const Graph& g = sub.graph();
    if (inputs.size() != g.inputs.size()) {
      child->Clear();
      return absl::InvalidArgumentError(absl::StrCat("subgraph '", attribute, "' declares ",
                                                     g.inputs.size(), " inputs, given ",
                                                     inputs.size()));
    }
    absl::Status status;
    for (size_t i = 0; status.ok() && i < inputs.size(); ++i) {
      const Value& declared = g.values[g.inputs[i]];
      if (inputs[i] == nullptr) {
        status = absl::InvalidArgumentError(
            absl::StrCat("subgraph '", attribute, "' input '", declared.name, "' is absent"));
        break;
      }
      // ONNX treats an optional holding a value and the value itself alike (a Loop body may
      // take an optional sequence and return the sequence): wrapped or unwrapped as declared.
      Tensor bound = inputs[i]->View();
      if (declared.kind == ValueKind::kOptional && !bound.is_optional()) {
        bound = Tensor::OptionalOf(std::move(bound));
      } else if (declared.kind != ValueKind::kOptional && bound.has_element()) {
        Tensor inner = std::move(bound.mutable_items()[0]);
        bound = std::move(inner);
      }
      if (declared.kind != bound.kind()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "subgraph '", attribute, "' input '", declared.name, "': declared ",
            ValueKindName(declared.kind), ", given ", ValueKindName(inputs[i]->kind())));
        break;
      }
      if (declared.type != DataType::kUndefined && declared.type != inputs[i]->dtype()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "subgraph '", attribute, "' input '", declared.name, "' is declared ",
            DataTypeName(declared.type), ", given ", DataTypeName(inputs[i]->dtype())));
        break;
      }
      // A static plan sized the subgraph's buffers from the declared shapes: hold it to them.
      if (sub.is_static()) {
        std::optional<Shape> s = declared.shape.ToShape();
        if (!s || *s != inputs[i]->shape()) {
          status = absl::InvalidArgumentError(absl::StrCat(
              "subgraph '", attribute, "' input '", declared.name, "' is declared with shape ",
              declared.shape.ToString(), ", given ", inputs[i]->shape().ToString()));
          break;
        }
      }
      child->values[g.inputs[i]] = std::move(bound);
    }
    if (status.ok()) status = ExecutePlan(env_, *child);
    outputs.clear();
    for (size_t i = 0; status.ok() && i < g.outputs.size(); ++i) {
      // A value declared twice as an output was handed over at its first place: copy that.
      const size_t first =
          std::find(g.outputs.begin(), g.outputs.end(), g.outputs[i]) - g.outputs.begin();
      Tensor& t = first < i ? outputs[first] : child->values[g.outputs[i]];
      if (first == i && OwnsAll(t, memory::ArenaKind::kExecution)) {
        outputs.push_back(std::move(t));  // computed inside: handed over
        continue;
      }
      if (!t.is_tensor()) {  // a sequence or optional: copied tensor by tensor
        absl::StatusOr<Tensor> copy = CopyInto(t, *device_.execution);
        if (!copy.ok()) {
          status = copy.status();
          break;
        }
        outputs.push_back(std::move(*copy));
        continue;
      }
      // An input, outer value or weight returned as is (or an IO-side alias): copied, so that
      // the output outlives the inputs of this iteration.
      if (t.is_string()) {
        outputs.push_back(Tensor::StringsCopy(t, t.shape()));
        continue;
      }
      absl::StatusOr<memory::AllocationHandle> h = device_.execution->Allocate(t.bytes());
      if (!h.ok()) {
        status = h.status();
        break;
      }
      Tensor copy = Tensor::Owned(t.dtype(), t.shape(), std::move(*h));
      CopyPayload(copy.raw_mutable_data(), t.raw_data(), t.bytes());
      outputs.push_back(std::move(copy));
    }
    child->Clear();
    return status;
  }

  absl::Status RunSubgraph(absl::string_view attribute) override {
    INFERD_ASSIGN_OR_RETURN(RunSlot * child, BindChild(attribute));
    const Graph& g = child->plan.graph();
    absl::Status status = ExecutePlan(env_, *child);
    for (size_t i = 0; status.ok() && i < g.outputs.size() && i < node_.outputs.size(); ++i) {
      const int pv = node_.outputs[i];
      if (pv < 0) continue;
      Tensor& t = child->values[g.outputs[i]];
      const memory::ArenaKind want = plan_.values()[pv].role == AllocationRole::kIO
                                         ? memory::ArenaKind::kIO
                                         : memory::ArenaKind::kExecution;
      if (OwnsAll(t, want)) {
        slot_.values[pv] = std::move(t);  // made in the right arena: handed over
        continue;
      }
      if (!t.is_tensor()) {  // a sequence or optional of outer values: copied
        status = SetOutput(static_cast<int>(i), t.View());
        if (!status.ok()) break;
        continue;
      }
      // An outer value or weight returned as is: copied into the node's output.
      absl::StatusOr<Tensor*> out = MakeOutputTensor(static_cast<int>(i), t.dtype(), t.shape());
      if (!out.ok()) {
        status = out.status();
        break;
      }
      status = CopyData(**out, t);
    }
    child->Clear();
    return status;
  }

 private:
  // Bytes within this step's device: memcpy on the host, in stream order on a device.
  absl::Status CopyBytes(void* dst, const void* src, size_t bytes) const {
    if (DeviceStream* stream = device_stream()) return stream->CopyOnDevice(dst, src, bytes);
    CopyPayload(dst, src, bytes);
    return absl::OkStatus();
  }
  // The elements of `src` into `dst` (same type and element count): strings one by one.
  absl::Status CopyData(Tensor& dst, const Tensor& src) const {
    if (src.is_string()) {
      std::copy_n(src.data<std::string>(), src.NumElements(), dst.mutable_data<std::string>());
      return absl::OkStatus();
    }
    return CopyBytes(dst.raw_mutable_data(), src.raw_data(), src.bytes());
  }

  const RunEnv& env_;
  RunSlot& slot_;
  const ExecutionPlan& plan_;
  const PlanStep& step_;
  const size_t step_index_;
  const Node& node_;
  DeviceArenas& device_;
};

}  // namespace

RunSlot::RunSlot(const ExecutionPlan& p, std::vector<DeviceArenas*> d)
    : plan(p), devices(std::move(d)) {
  const Graph& g = plan.graph();
  values.resize(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (const Tensor* w = g.values[v].initializer) values[v] = w->View();
  }
  blocks.resize(devices.size());
  held.resize(devices.size());
  last_shapes.resize(plan.steps().size());
  last_workspaces.resize(plan.steps().size());
}

absl::Status RunSlot::SynchronizeStreams() {
  absl::Status status;
  for (const std::unique_ptr<DeviceStream>& stream : streams) {
    if (stream != nullptr) status.Update(stream->Synchronize());
  }
  return status;
}

void RunSlot::Clear() {
  const Graph& g = plan.graph();
  for (size_t v = 0; v < values.size(); ++v) {
    if (g.values[v].initializer == nullptr) values[v].Reset();
  }
  workspaces.clear();
  scratch_outputs.clear();
  step_temporaries.clear();
  for (std::vector<memory::AllocationHandle>& h : held) h.clear();
  for (auto& [key, child] : children) child->Clear();
  if (!blocks_pre_allocated) {
    for (auto& b : blocks) b.Release();
  }
}

absl::Status PreAllocateSlot(RunSlot& slot, std::vector<memory::AllocationHandle>* warm) {
  const ExecutionPlan& plan = slot.plan;
  for (size_t d = 0; d < slot.devices.size(); ++d) {
    const size_t bytes = plan.devices()[d].block_bytes;
    if (bytes == 0 || slot.blocks[d].valid()) continue;
    INFERD_ASSIGN_OR_RETURN(slot.blocks[d], slot.devices[d]->execution->Allocate(bytes));
  }
  slot.blocks_pre_allocated = true;
  const std::vector<PlanStep>& steps = plan.steps();
  for (size_t k = 0; k < steps.size(); ++k) {
    const PlanStep& step = steps[k];
    if (step.subplans.empty()) continue;
    DeviceArenas* device = slot.devices[step.device];
    for (const auto& [attribute, sub] : step.subplans) {
      std::unique_ptr<RunSlot>& child = slot.children[{static_cast<int>(k), attribute}];
      if (child == nullptr) child = std::make_unique<RunSlot>(*sub, std::vector{device});
      INFERD_RETURN_IF_ERROR(PreAllocateSlot(*child, warm));
    }
    for (int v : plan.graph().nodes[step.node].outputs) {
      if (v < 0 || plan.values()[v].role != AllocationRole::kExecution) continue;
      if (plan.values()[v].bytes == 0) continue;
      INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                              device->execution->Allocate(plan.values()[v].bytes));
      warm->push_back(std::move(h));
    }
  }
  return absl::OkStatus();
}

absl::Status ExecutePlan(const RunEnv& env, RunSlot& slot) {
  const ExecutionPlan& plan = slot.plan;
  const Graph& graph = plan.graph();
  if (plan.is_static()) {
    for (size_t d = 0; d < slot.devices.size(); ++d) {
      const size_t bytes = plan.devices()[d].block_bytes;
      if (bytes == 0 || slot.blocks[d].valid()) continue;
      INFERD_ASSIGN_OR_RETURN(slot.blocks[d], slot.devices[d]->execution->Allocate(bytes));
    }
  }
  const std::vector<PlanStep>& steps = plan.steps();
  for (size_t k = 0; k < steps.size(); ++k) {
    const PlanStep& step = steps[k];
    const Node& node = graph.nodes[step.node];
    if (env.options != nullptr && env.options->cancelled && env.options->cancelled()) {
      return absl::CancelledError(absl::StrCat("run cancelled before node '", node.name, "'"));
    }
    // Dynamic shapes: workspaces for this run's input shapes (declared again only when they
    // change), taken from the execution arena for the duration of the step.
    if (!plan.is_static()) {
      std::vector<Shape>& shapes = slot.last_shapes[k];
      bool same = shapes.size() == node.inputs.size();
      for (size_t i = 0; same && i < node.inputs.size(); ++i) {
        const int v = node.inputs[i];
        same = (v < 0 ? Shape() : slot.values[v].shape()) == shapes[i];
      }
      if (!same) {
        shapes.clear();
        for (int v : node.inputs) shapes.push_back(v < 0 ? Shape() : slot.values[v].shape());
        slot.last_workspaces[k] = step.kernel->DeclareWorkspaceRequirements(shapes);
      }
      for (const WorkspaceRequirement& w : slot.last_workspaces[k]) {
        INFERD_ASSIGN_OR_RETURN(memory::AllocationHandle h,
                                AllocateExecution(slot, step.device, w.bytes));
        slot.workspaces.push_back(std::move(h));
      }
    }
    DeviceStream* stream = StreamOf(slot, step.device);
    if (stream != nullptr) INFERD_RETURN_IF_ERROR(stream->Enter());
    RunContext ctx(env, slot, k);
    std::vector<double>* profile =
        env.options != nullptr && &plan == env.profiled_plan ? env.options->step_micros : nullptr;
    const auto t0 = profile != nullptr ? std::chrono::steady_clock::now()
                                       : std::chrono::steady_clock::time_point();
    absl::Status status = step.kernel->Compute(ctx);
    if (profile != nullptr) {
      if (profile->size() < steps.size()) profile->resize(steps.size(), 0.0);
      (*profile)[k] +=
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    if (stream != nullptr) {  // the device may still be using them: held for this run
      for (memory::AllocationHandle& h : slot.workspaces) GiveBack(slot, step.device, std::move(h));
      for (memory::AllocationHandle& h : slot.step_temporaries) {
        GiveBack(slot, step.device, std::move(h));
      }
      for (Tensor& t : slot.scratch_outputs) GiveBack(slot, step.device, t.TakeHandle());
      slot.step_temporaries.clear();
    }
    slot.workspaces.clear();
    slot.scratch_outputs.clear();
    if (!status.ok()) {
      if (absl::StrContains(status.message(), node.name)) return status;
      return absl::Status(status.code(), absl::StrCat("node '", node.name, "' (", node.op_type,
                                                      "): ", status.message()));
    }
    for (int v : node.outputs) {
      if (v >= 0 && slot.values[v].empty()) {
        return absl::InternalError(absl::StrCat("node '", node.name, "' (", node.op_type,
                                                ") did not produce '", graph.values[v].name, "'"));
      }
    }
    for (int v : step.release) {
      Tensor& t = slot.values[v];
      if (t.owns_buffer()) GiveBack(slot, plan.values()[v].device, t.TakeHandle());
      t.Reset();
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::engine

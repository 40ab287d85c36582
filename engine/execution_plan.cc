#include "engine/execution_plan.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/device_copies.h"
#include "memory/memory_planner.h"

namespace inferd::engine {
namespace {

size_t RoundUpToPlanAlignment(size_t bytes) {
  return CheckedRoundUp(bytes, memory::kPlanAlignment).value_or(SIZE_MAX);
}

// Per-device byte totals saturate (base/checked_math.h): they are reported and compared with
// budgets, and a saturated one exceeds every budget.
void AddBytes(size_t& total, size_t bytes) { total = SaturatingAdd(total, bytes); }

std::string DeviceType(const std::string& device) {
  const size_t colon = device.find(':');
  return colon == std::string::npos ? device : device.substr(0, colon);
}

}  // namespace

const char* AllocationRoleName(AllocationRole role) {
  switch (role) {
    case AllocationRole::kBorrowed:
      return "borrowed";
    case AllocationRole::kExecution:
      return "execution";
    case AllocationRole::kIO:
      return "io";
  }
  return "?";
}

int64_t StaticBytes(const Value& v) {
  std::optional<Shape> shape = v.shape.ToShape();
  // String values live on the heap, outside the arenas and the static plan (docs/strings.md).
  if (shape && v.type == DataType::kString && v.kind == ValueKind::kTensor) return 0;
  if (!shape || ElementSize(v.type) == 0) return -1;
  std::optional<int64_t> n = CheckedNumElements(shape->dims(), ElementSize(v.type));
  return n ? *n * static_cast<int64_t>(ElementSize(v.type)) : -1;
}

absl::StatusOr<std::unique_ptr<ExecutionPlan>> ExecutionPlan::Build(
    const Graph& graph, const KernelRegistry& registry, const std::vector<std::string>& devices,
    int intra_op_threads, const std::vector<AllocationRole>& output_roles) {
  auto plan = std::unique_ptr<ExecutionPlan>(new ExecutionPlan());
  plan->graph_ = &graph;
  for (const std::string& d : devices) plan->devices_.push_back(DevicePlan{d});
  plan->values_.resize(graph.values.size());
  plan->steps_.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    PlanStep& step = plan->steps_[n];
    step.node = static_cast<int>(n);
    const std::string& device = node.device.empty() ? devices[0] : node.device;
    auto it = std::find(devices.begin(), devices.end(), device);
    if (it == devices.end()) {
      return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' is assigned to '",
                                                     device, "', which this session lacks"));
    }
    step.device = static_cast<int>(it - devices.begin());
    plan->devices_[step.device].nodes++;
  }
  INFERD_RETURN_IF_ERROR(plan->ResolveKernels(registry, intra_op_threads));
  plan->AssignRolesAndAliases(output_roles);
  INFERD_RETURN_IF_ERROR(plan->BuildSubplans(registry, intra_op_threads));
  plan->ComputeLiveness();
  plan->PlanStatic();
  return plan;
}

namespace {

// Why nodes cannot run, gathered over the whole graph so that one load reports every missing
// (operator, opset, element type) at once, each with the nodes it concerns.
class Refusals {
 public:
  // `status` names its node as "node 'n'..." (Explain's and the kernels' messages do).
  void Add(const std::string& node, absl::Status status) {
    std::string reason(status.message());
    const std::string prefix = absl::StrCat("node '", node, "'");
    if (absl::StartsWith(reason, prefix)) {
      reason = std::string(absl::StripPrefix(absl::StripPrefix(reason, prefix), ":"));
      reason = std::string(absl::StripLeadingAsciiWhitespace(reason));
    }
    for (Entry& e : entries_) {
      if (e.reason == reason) {
        e.nodes.push_back(node);
        return;
      }
    }
    entries_.push_back(Entry{std::move(reason), {node}, status});
  }
  bool empty() const { return entries_.empty(); }
  // One node: its own status; more: a list by reason. UNIMPLEMENTED when every reason is a
  // missing kernel or feature, else the first other code.
  absl::Status ToStatus() const {
    if (entries_.size() == 1 && entries_[0].nodes.size() == 1) return entries_[0].first;
    absl::StatusCode code = absl::StatusCode::kUnimplemented;
    for (const Entry& e : entries_) {
      if (e.first.code() != absl::StatusCode::kUnimplemented) {
        code = e.first.code();
        break;
      }
    }
    size_t nodes = 0;
    for (const Entry& e : entries_) nodes += e.nodes.size();
    std::string message =
        absl::StrCat(nodes, nodes == 1 ? " node" : " nodes", " cannot run (", entries_.size(),
                     entries_.size() == 1 ? " reason" : " reasons", "):");
    for (const Entry& e : entries_) {
      constexpr size_t kShown = 3;
      std::vector<std::string> shown;
      for (size_t i = 0; i < e.nodes.size() && i < kShown; ++i) {
        shown.push_back(absl::StrCat("'", e.nodes[i], "'"));
      }
      absl::StrAppend(
          &message, "\n  - ", e.reason, " [node", e.nodes.size() == 1 ? " " : "s ",
          absl::StrJoin(shown, ", "),
          e.nodes.size() > kShown ? absl::StrCat(" and ", e.nodes.size() - kShown, " more") : "",
          "]");
    }
    return absl::Status(code, message);
  }

 private:
  struct Entry {
    std::string reason;
    std::vector<std::string> nodes;
    absl::Status first;  // as the first node's refusal said it
  };
  std::vector<Entry> entries_;
};

}  // namespace

absl::Status ExecutionPlan::ResolveKernels(const KernelRegistry& registry, int threads) {
  const Graph& g = *graph_;
  Refusals refusals;
  for (PlanStep& step : steps_) {
    const Node& node = g.nodes[step.node];
    NodeIo io = NodeIoOf(g, node);
    const std::string device_type = DeviceType(devices_[step.device].name);
    step.def = FindNodeKernel({&EngineKernels(), &registry}, node, io, device_type);
    if (step.def == nullptr) {
      refusals.Add(node.name, registry.Explain(node.domain, node.op_type, node.opset, device_type,
                                               io.in_types, io.out_types, node.name));
      continue;
    }
    KernelInfo info(node.name, node.op_type, node.domain, node.opset, &node.attributes,
                    std::move(io.ins), std::move(io.outs), threads);
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel = step.def->create(info);
    if (!kernel.ok()) {
      const absl::Status& s = kernel.status();
      // Kernels name the node themselves; add it where they did not.
      refusals.Add(node.name,
                   absl::StrContains(s.message(), node.name)
                       ? s
                       : absl::Status(s.code(), absl::StrCat("node '", node.name, "' (",
                                                             node.op_type, "): ", s.message())));
      continue;
    }
    step.kernel = std::move(*kernel);
  }
  return refusals.empty() ? absl::OkStatus() : refusals.ToStatus();
}

void ExecutionPlan::AssignRolesAndAliases(const std::vector<AllocationRole>& output_roles) {
  const Graph& g = *graph_;
  for (size_t v = 0; v < g.values.size(); ++v) {
    ValuePlan& vp = values_[v];
    vp.root = static_cast<int>(v);
    const Value& val = g.values[v];
    if (val.producer < 0) {
      vp.role = AllocationRole::kBorrowed;
      vp.holds_graph_output = val.is_graph_output;
      // A weight uploaded to a device lives there (engine/device_copies.h); others on the host.
      for (size_t d = 0; d < devices_.size(); ++d) {
        if (!val.resident_device.empty() && devices_[d].name == val.resident_device) {
          vp.device = static_cast<int>(d);
        }
      }
    } else {
      vp.role = val.is_graph_output ? AllocationRole::kIO : AllocationRole::kExecution;
      vp.holds_graph_output = val.is_graph_output;
      vp.producer_step = val.producer;
      vp.device = steps_[val.producer].device;
    }
  }
  // A subgraph's declared outputs become its parent node's outputs: same roles.
  for (size_t i = 0; i < output_roles.size() && i < g.outputs.size(); ++i) {
    ValuePlan& vp = values_[g.outputs[i]];
    if (vp.role != AllocationRole::kBorrowed) vp.role = output_roles[i];
  }
  for (PlanStep& step : steps_) {
    const Node& node = g.nodes[step.node];
    for (const auto& [slot, input] : step.kernel->OutputAliases()) {
      if (slot >= static_cast<int>(node.outputs.size()) ||
          input >= static_cast<int>(node.inputs.size())) {
        continue;
      }
      const int out = node.outputs[slot], in = node.inputs[input];
      if (out < 0 || in < 0) continue;
      const int root = values_[in].root;
      ValuePlan& rp = values_[root];
      const bool out_is_graph_output = g.values[out].is_graph_output;
      if (out_is_graph_output) {
        // A graph output must own an IO buffer of its own: alias only a buffer made in this run,
        // on this device, whose group holds no other graph output; the group then lives in IO.
        if (rp.role == AllocationRole::kBorrowed || rp.holds_graph_output ||
            rp.device != step.device) {
          continue;
        }
        rp.role = AllocationRole::kIO;
        rp.holds_graph_output = true;
      } else if (rp.role != AllocationRole::kBorrowed && rp.device != step.device) {
        continue;
      }
      values_[out].root = root;
      step.aliases.emplace_back(slot, input);
    }
  }
  for (ValuePlan& vp : values_) vp.role = values_[vp.root].role;
}

absl::Status ExecutionPlan::BuildSubplans(const KernelRegistry& registry, int threads) {
  const Graph& g = *graph_;
  for (PlanStep& step : steps_) {
    const Node& node = g.nodes[step.node];
    if (node.subgraphs.empty()) continue;
    // If's branch outputs become the node's outputs: same roles. The bodies of Loop, Scan and
    // SequenceMap run once per iteration and hand their outputs to the kernel: intermediates.
    const bool hands_over = node.op_type == "If" && node.domain.empty();
    std::vector<AllocationRole> if_roles;
    for (int v : node.outputs) {
      if_roles.push_back(v >= 0 ? values_[v].role : AllocationRole::kExecution);
    }
    for (const auto& [attribute, sub] : node.subgraphs) {
      const std::vector<AllocationRole> roles =
          hands_over ? if_roles
                     : std::vector<AllocationRole>(sub->outputs.size(), AllocationRole::kExecution);
      absl::StatusOr<std::unique_ptr<ExecutionPlan>> plan =
          Build(*sub, registry, {devices_[step.device].name}, threads, roles);
      if (!plan.ok()) {
        return absl::Status(plan.status().code(),
                            absl::StrCat("subgraph '", attribute, "' of node '", node.name,
                                         "': ", plan.status().message()));
      }
      step.subplans[attribute] = std::move(*plan);
    }
  }
  return absl::OkStatus();
}

void ExecutionPlan::ComputeLiveness() {
  const Graph& g = *graph_;
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Node& node = g.nodes[steps_[k].node];
    auto touch = [&](int v) {
      if (v < 0) return;
      ValuePlan& root = values_[values_[v].root];
      root.last_use = std::max(root.last_use, static_cast<int>(k));
    };
    for (int v : node.inputs) touch(v);
    for (int v : node.implicit_inputs) touch(v);
    for (int v : node.outputs) touch(v);
  }
  // Group members, by root.
  std::map<int, std::vector<int>> members;
  for (size_t v = 0; v < values_.size(); ++v)
    members[values_[v].root].push_back(static_cast<int>(v));
  for (auto& [root, group] : members) {
    ValuePlan& rp = values_[root];
    if (rp.role == AllocationRole::kBorrowed || rp.holds_graph_output) {
      if (rp.holds_graph_output) rp.last_use = kNeverReleased;
      continue;
    }
    if (rp.last_use < 0) continue;
    for (int v : group) steps_[rp.last_use].release.push_back(v);
  }
}

void ExecutionPlan::PlanStatic() {
  // pass 1: every execution-role buffer and every workspace must have a size known at load.
  std::vector<std::vector<Shape>> input_shapes;
  if (!SizeStaticBuffers(input_shapes)) return;
  // pass 2: lay out intermediates and workspaces per device.
  std::vector<memory::GreedyMemoryPlanner> planners(devices_.size());
  const std::vector<std::pair<int, int>> value_ids = AddValueBuffers(planners);
  const std::vector<std::vector<int>> workspace_ids = AddWorkspaceBuffers(input_shapes, planners);
  for (auto& [v, id] : value_ids) {
    values_[v].planned = true;
    values_[v].offset = planners[values_[v].device].GetOffset(id);
  }
  for (size_t k = 0; k < steps_.size(); ++k) {
    for (int id : workspace_ids[k]) {
      steps_[k].workspace_offsets.push_back(planners[steps_[k].device].GetOffset(id));
    }
  }
  for (size_t d = 0; d < devices_.size(); ++d) devices_[d].block_bytes = planners[d].GetPeakBytes();
  is_static_ = true;
  // pass 3: the subgraphs' blocks (each branch has its own slot and block).
  AddSubgraphBlocks();
}

bool ExecutionPlan::SizeStaticBuffers(std::vector<std::vector<Shape>>& input_shapes) {
  const Graph& g = *graph_;
  input_shapes.assign(steps_.size(), {});
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Node& node = g.nodes[steps_[k].node];
    for (int v : node.inputs) {
      if (v < 0) {
        input_shapes[k].push_back(Shape());
        continue;
      }
      std::optional<Shape> s = g.values[v].shape.ToShape();
      if (!s) {
        dynamic_reason_ = absl::StrCat("value '", g.values[v].name, "' has shape ",
                                       g.values[v].shape.ToString(), " at load");
        return false;
      }
      input_shapes[k].push_back(*s);
    }
  }
  for (size_t v = 0; v < values_.size(); ++v) {
    const ValuePlan& vp = values_[v];
    if (vp.root != static_cast<int>(v) || vp.role == AllocationRole::kBorrowed) continue;
    if (vp.producer_step >= 0 && !steps_[vp.producer_step].subplans.empty()) continue;
    const int64_t bytes = StaticBytes(g.values[v]);
    if (bytes < 0) {
      dynamic_reason_ = absl::StrCat("value '", g.values[v].name, "' has shape ",
                                     g.values[v].shape.ToString(), " at load");
      return false;
    }
    values_[v].bytes = static_cast<size_t>(bytes);
  }
  return true;
}

std::vector<std::pair<int, int>> ExecutionPlan::AddValueBuffers(
    std::vector<memory::GreedyMemoryPlanner>& planners) {
  const Graph& g = *graph_;
  std::vector<std::pair<int, int>> value_ids;  // (value, planner id)
  for (size_t v = 0; v < values_.size(); ++v) {
    ValuePlan& vp = values_[v];
    if (vp.root != static_cast<int>(v)) continue;
    // Outputs of a node with subgraphs are made by the subgraph's run, in the arena of their
    // role, and handed over: not in the block, but counted.
    if (vp.producer_step >= 0 && !steps_[vp.producer_step].subplans.empty()) {
      const int64_t bytes = StaticBytes(g.values[v]);
      if (bytes < 0) {
        if (subgraph_reason_.empty()) {
          subgraph_reason_ = absl::StrCat("value '", g.values[v].name, "' made by node '",
                                          g.nodes[steps_[vp.producer_step].node].name,
                                          "' has shape ", g.values[v].shape.ToString(), " at load");
        }
        continue;
      }
      vp.bytes = static_cast<size_t>(bytes);
      if (vp.role == AllocationRole::kIO) AddBytes(devices_[vp.device].output_bytes, vp.bytes);
      if (vp.role == AllocationRole::kExecution)
        AddBytes(devices_[vp.device].subgraph_bytes, vp.bytes);
      continue;
    }
    if (vp.role == AllocationRole::kExecution && vp.holds_graph_output) {
      // A subgraph's output (its node's output is an intermediate): an arena buffer of its own,
      // handed to the node without a copy, not a place in this plan's block.
      AddBytes(devices_[vp.device].output_bytes, vp.bytes);
      continue;
    }
    if (vp.role == AllocationRole::kIO) {
      AddBytes(devices_[vp.device].output_bytes, vp.bytes);
      continue;
    }
    if (vp.role != AllocationRole::kExecution) continue;
    if (g.values[v].type == DataType::kString) continue;  // heap, not planned
    const int last = vp.last_use < 0 ? vp.producer_step : vp.last_use;
    value_ids.emplace_back(static_cast<int>(v),
                           planners[vp.device].AddBuffer(vp.bytes, vp.producer_step, last));
    AddBytes(devices_[vp.device].naive_bytes, RoundUpToPlanAlignment(vp.bytes));
  }
  return value_ids;
}

std::vector<std::vector<int>> ExecutionPlan::AddWorkspaceBuffers(
    const std::vector<std::vector<Shape>>& input_shapes,
    std::vector<memory::GreedyMemoryPlanner>& planners) {
  std::vector<std::vector<int>> workspace_ids(steps_.size());
  for (size_t k = 0; k < steps_.size(); ++k) {
    PlanStep& step = steps_[k];
    step.workspaces = step.kernel->DeclareWorkspaceRequirements(input_shapes[k]);
    for (const WorkspaceRequirement& w : step.workspaces) {
      workspace_ids[k].push_back(
          planners[step.device].AddBuffer(w.bytes, static_cast<int>(k), static_cast<int>(k)));
      AddBytes(devices_[step.device].naive_bytes, RoundUpToPlanAlignment(w.bytes));
      AddBytes(devices_[step.device].workspace_bytes, w.bytes);
    }
  }
  return workspace_ids;
}

void ExecutionPlan::AddSubgraphBlocks() {
  const Graph& g = *graph_;
  for (PlanStep& step : steps_) {
    for (const auto& [attribute, sub] : step.subplans) {
      if (!sub->fully_static()) {
        if (subgraph_reason_.empty()) {
          subgraph_reason_ =
              absl::StrCat("subgraph '", attribute, "' of node '", g.nodes[step.node].name,
                           "': ", sub->not_fully_static_reason());
        }
        continue;
      }
      const DevicePlan& sd = sub->devices()[0];
      AddBytes(devices_[step.device].subgraph_bytes,
               SaturatingAdd(sd.block_bytes, sd.subgraph_bytes));
    }
  }
}

std::string ExecutionPlan::Summary() const {
  std::string out = absl::StrCat(steps_.size(), " steps, ",
                                 is_static_ ? "static plan" : "dynamic shapes (arenas per run)");
  if (!is_static_) absl::StrAppend(&out, ": ", dynamic_reason_);
  for (const DevicePlan& d : devices_) {
    absl::StrAppend(&out, "\n  ", d.name, ": ", d.nodes, " nodes");
    if (is_static_) {
      absl::StrAppend(&out, ", planned peak ", d.block_bytes, " bytes vs naive sum ", d.naive_bytes,
                      " bytes (workspaces ", d.workspace_bytes, ", outputs ", d.output_bytes, ")");
      if (d.subgraph_bytes > 0) {
        absl::StrAppend(&out, "; subgraphs ", d.subgraph_bytes, " bytes per run");
      }
    }
  }
  return out;
}

}  // namespace inferd::engine

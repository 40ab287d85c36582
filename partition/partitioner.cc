#include "partition/partitioner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"

namespace inferd::partition {
namespace {

constexpr size_t kMaxNamesInWarning = 3;

std::string Bytes(uint64_t b) { return absl::StrCat(FormatBytes(b), " (", b, " bytes)"); }

// The devices, normalised, with the fallback among them.
absl::Status ResolveDevices(const PartitionConfig& config, std::vector<DeviceSpec>& devices,
                            std::string& fallback) {
  for (const DeviceSpec& d : config.devices) {
    absl::StatusOr<std::string> name = NormalizeDeviceName(d.name);
    if (!name.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("devices: ", name.status().message()));
    }
    for (const DeviceSpec& seen : devices) {
      if (seen.name == *name) {
        return absl::InvalidArgumentError(absl::StrCat("devices: '", *name, "' is listed twice"));
      }
    }
    devices.push_back(DeviceSpec{*name, d.budget_bytes, d.present});
  }
  absl::StatusOr<std::string> fb = NormalizeDeviceName(config.fallback_device);
  if (!fb.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("fallback device: ", fb.status().message()));
  }
  fallback = *fb;
  auto it = std::find_if(devices.begin(), devices.end(),
                         [&](const DeviceSpec& d) { return d.name == fallback; });
  if (it == devices.end()) {
    if (fallback != "cpu:0") {
      std::vector<std::string> names;
      for (const DeviceSpec& d : devices) names.push_back(d.name);
      return absl::InvalidArgumentError(absl::StrCat("fallback device '", fallback,
                                                     "' is not among the devices (",
                                                     absl::StrJoin(names, ", "), ")"));
    }
    devices.push_back(DeviceSpec{fallback, std::nullopt, true});
  } else if (!it->present) {
    return absl::FailedPreconditionError(
        absl::StrCat("fallback device '", fallback,
                     "' does not exist on this machine; every node no other device takes runs "
                     "there, so choose a fallback_device that exists"));
  }
  return absl::OkStatus();
}

// "'a', 'b', 'c' and 4 more"
std::string SomeNames(const engine::Graph& graph, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  for (size_t k = 0; k < nodes.size() && k < kMaxNamesInWarning; ++k) {
    names.push_back(absl::StrCat("'", graph.nodes[nodes[k]].name, "'"));
  }
  std::string out = absl::StrJoin(names, ", ");
  if (nodes.size() > kMaxNamesInWarning) {
    absl::StrAppend(&out, " and ", nodes.size() - kMaxNamesInWarning, " more");
  }
  return out;
}

// The refusal: what the fallback must hold, by category, against its budget.
absl::Status Refuse(ResourceAccountant& fb, const std::vector<DeviceSpec>& devices,
                    std::vector<ResourceAccountant>& accountants,
                    const std::vector<std::string>& node_device,
                    const std::vector<NodeCost>& costs) {
  const ResourceCost need = fb.committed();
  const uint64_t budget = *fb.budget_bytes();
  int estimated = 0, heuristic = 0;
  for (size_t i = 0; i < node_device.size(); ++i) {
    if (node_device[i] == fb.device()) ++(costs[i].workspace_estimated ? estimated : heuristic);
  }
  std::string msg = absl::StrCat(
      "partition: the model does not fit: the fallback device ", fb.device(),
      " must hold every node the other devices did not take, which needs ",
      FormatBytes(need.total()), ", but its budget is ", FormatBytes(budget), " (short by ",
      FormatBytes(need.total() - budget), ")\n", "  on ", fb.device(), ":\n",
      "    weights      needed ", Bytes(need.weights), "\n", "    activations  needed ",
      Bytes(need.activations),
      " (liveness-planned intermediates, copies and estimated workspaces, plus outputs)\n",
      "    workspace    needed ", Bytes(need.workspace), " (the 1.5x heuristic for ", heuristic,
      " nodes without an estimate; ", estimated, " estimated, planned with the activations)\n",
      "    total        needed ", Bytes(need.total()), ", available ", Bytes(budget), "\n");
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].name == fb.device()) continue;
    const int n =
        static_cast<int>(std::count(node_device.begin(), node_device.end(), devices[d].name));
    absl::StrAppend(&msg, "  ", devices[d].name, " took ", n, " nodes, ",
                    FormatBytes(accountants[d].committed().total()),
                    devices[d].budget_bytes
                        ? absl::StrCat(" of its ", FormatBytes(*devices[d].budget_bytes), " budget")
                        : " (no budget)",
                    "\n");
  }
  absl::StrAppend(&msg, "  to fit: raise the budget of ", fb.device(),
                  ", give other devices budgets or rules for more of the model, or load with "
                  "smaller max_input_shapes");
  return absl::ResourceExhaustedError(msg);
}

// One partitioning: the devices and their accountants, the rules and what each node got.
struct Partitioning {
  Partitioning(const engine::Graph& g, const PartitionConfig& c) : graph(g), config(c) {
    plan.graph = &graph;
    plan.layers = LayerDetector(config.layer_prefixes);
  }

  // Gives device d the taken units, each node with its cost there.
  void Assign(size_t d, absl::Span<const std::vector<int>> taken, const std::vector<NodeCost>& c) {
    size_t k = 0;
    for (const std::vector<int>& unit : taken) {
      for (int node : unit) {
        plan.node_device[node] = plan.devices[d].name;
        plan.node_costs[node] = c[k++];
      }
    }
  }
  // What `unit` would add to device d's charge (it did not fit).
  uint64_t Need(size_t d, const std::vector<int>& unit) {
    for (int node : unit) accountants[d].AddPending(node);
    const uint64_t need = accountants[d].pending().total();
    accountants[d].DiscardPending();
    return need;
  }
  int num_nodes() const { return static_cast<int>(graph.nodes.size()); }
  // The nodes of `unit` device d has kernels for; the others are left to the fallback (pass 6)
  // and, when `missed` is given, appended to it for the report.
  std::vector<int> Runnable(size_t d, const std::vector<int>& unit,
                            std::vector<int>* missed = nullptr) const {
    std::vector<int> kept;
    kept.reserve(unit.size());
    for (int node : unit) {
      if (estimator->HasKernel(graph, node, plan.devices[d].name)) {
        kept.push_back(node);
      } else if (missed != nullptr) {
        missed->push_back(node);
      }
    }
    return kept;
  }

  const engine::Graph& graph;
  const PartitionConfig& config;
  const engine::WorkspaceEstimator* estimator = nullptr;
  std::map<size_t, std::vector<int>> no_kernel;  // by device: nodes it has no kernel for
  PlanInputs plan;  // devices, fallback, mode, node_device, node_costs, node_rule, notes, warnings
  std::map<std::string, size_t> device_index;
  std::vector<ResourceAccountant> accountants;  // by device index
  size_t fb = 0;                                // the fallback's device index
  std::optional<LayeringIndex> index;
  std::vector<size_t> rule_device;  // by rule: device index
};

// pass 1: devices, and the fallback among them, each with its accountant.
absl::Status SetUpDevices(Partitioning& p, const engine::WorkspaceEstimator& estimator) {
  std::vector<DeviceSpec>& devices = p.plan.devices;
  if (absl::Status st = ResolveDevices(p.config, devices, p.plan.fallback_device); !st.ok()) {
    return st;
  }
  p.estimator = &estimator;
  p.accountants.reserve(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    p.device_index[devices[d].name] = d;
    p.accountants.emplace_back(p.graph, estimator, devices[d].name, devices[d].budget_bytes);
  }
  p.fb = p.device_index.at(p.plan.fallback_device);
  p.plan.node_device.assign(p.num_nodes(), "");
  p.plan.node_costs.assign(p.num_nodes(), NodeCost());
  return absl::OkStatus();
}

// pass 3: the device of each rule: it must exist, or fall back when allowed.
absl::Status ResolveRuleDevices(Partitioning& p) {
  const LayeringRules& rules = p.index->rules();
  const std::string& fallback = p.plan.fallback_device;
  p.rule_device.assign(rules.rules.size(), p.fb);
  for (size_t r = 0; r < rules.rules.size(); ++r) {
    const std::string& name = rules.rules[r].device;
    auto it = p.device_index.find(name);
    const bool listed = it != p.device_index.end();
    if (listed && p.plan.devices[it->second].present) {
      p.rule_device[r] = it->second;
      continue;
    }
    const std::string why =
        listed ? "does not exist on this machine" : "is not among the configured devices";
    if (!p.config.fallback_on_missing_device) {
      const std::string msg = absl::StrCat(
          RuleModeName(p.index->mode()), " rules: rule ", r + 1, " (column ", rules.rules[r].column,
          ") names device '", name, "', which ", why,
          "; configure the device, or set fallback_on_missing_device to run its nodes on ",
          fallback);
      return listed ? absl::FailedPreconditionError(msg) : absl::InvalidArgumentError(msg);
    }
    p.plan.warnings.push_back(absl::StrCat("rule ", r + 1, " names device '", name, "', which ",
                                           why, ": its nodes go to the fallback ", fallback));
  }
  return absl::OkStatus();
}

// pass 5 (rules): each rule's nodes to its device, in rule order, until a budget stops it.
void PlaceByRules(Partitioning& p) {
  const LayeringRules& rules = p.index->rules();
  const std::string& fallback = p.plan.fallback_device;
  p.plan.mode = absl::StrCat(RuleModeName(p.index->mode()), " rules (", rules.rules.size(),
                             rules.rules.size() == 1 ? " rule, " : " rules, ", rules.num_patterns(),
                             rules.num_patterns() == 1 ? " pattern)" : " patterns)");
  for (size_t r = 0; r < rules.rules.size(); ++r) {
    const size_t d = p.rule_device[r];
    if (d == p.fb) continue;                    // the fallback takes its nodes in pass 6
    std::vector<std::pair<size_t, int>> order;  // (pattern, node)
    std::vector<int> claimed;
    for (int i = 0; i < p.num_nodes(); ++i) {
      if (p.plan.node_rule[i] && p.plan.node_rule[i]->rule == r) claimed.push_back(i);
    }
    for (int i : p.Runnable(d, claimed, &p.no_kernel[d])) {
      order.emplace_back(p.plan.node_rule[i]->pattern, i);
    }
    std::stable_sort(order.begin(), order.end());
    ResourceAccountant& acct = p.accountants[d];
    const std::string& device = p.plan.devices[d].name;
    if (acct.stopped()) {
      p.plan.warnings.push_back(absl::StrCat(device, " is full (budget reached): the ",
                                             order.size(), " nodes of rule ", r + 1, " go to ",
                                             fallback));
      continue;
    }
    std::vector<std::vector<int>> singles;
    for (const auto& [pattern, node] : order) singles.push_back({node});
    std::vector<NodeCost> costs;
    const size_t k = acct.CommitFittingRun(singles, &costs);
    p.Assign(d, absl::MakeConstSpan(singles).first(k), costs);
    if (k == singles.size()) continue;
    const uint64_t need = p.Need(d, singles[k]);
    acct.Stop();
    p.plan.warnings.push_back(absl::StrCat(
        device, ": budget of ", FormatBytes(*acct.budget_bytes()), " reached at node '",
        p.graph.nodes[singles[k][0]].name, "' (rule ", r + 1, "), which needs ", FormatBytes(need),
        " with ", FormatBytes(*acct.budget_bytes() - acct.committed().total()),
        " left; it and the ", order.size() - k - 1, " later nodes of rule ", r + 1, " go to ",
        fallback));
  }
}

// Budget-only units: whole layers, single nodes outside layers, in graph order.
struct Units {
  std::vector<std::vector<int>> nodes;
  std::vector<std::string> names;  // "layer layers.5", "node 'x'"
};

Units LayerUnits(const Partitioning& p) {
  Units units;
  std::unordered_map<std::string, size_t> unit_of_layer;
  for (int i = 0; i < p.num_nodes(); ++i) {
    std::optional<LayerId> layer = p.plan.layers.Detect(p.graph.nodes[i].name);
    if (!layer) {
      units.nodes.push_back({i});
      units.names.push_back(absl::StrCat("node '", p.graph.nodes[i].name, "'"));
      continue;
    }
    auto [it, inserted] = unit_of_layer.emplace(layer->key, units.nodes.size());
    if (inserted) {
      units.nodes.emplace_back();
      units.names.push_back(absl::StrCat("layer ", layer->key));
    }
    units.nodes[it->second].push_back(i);
  }
  return units;
}

// The devices budget-only mode fills, most capable first; warns about the others.
absl::StatusOr<std::vector<size_t>> FillOrder(Partitioning& p) {
  const std::vector<DeviceSpec>& devices = p.plan.devices;
  const std::string& fallback = p.plan.fallback_device;
  std::vector<size_t> fill;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (d == p.fb) continue;
    if (!devices[d].budget_bytes) {
      p.plan.warnings.push_back(
          absl::StrCat(devices[d].name,
                       " has no budget: budget-only mode places nodes only on devices "
                       "with a budget, so it gets none"));
    } else if (!devices[d].present) {
      const std::string msg =
          absl::StrCat(devices[d].name, " has a budget but does not exist on this machine");
      if (!p.config.fallback_on_missing_device) {
        return absl::FailedPreconditionError(
            absl::StrCat("partition: ", msg,
                         "; remove it, or set fallback_on_missing_device to run its "
                         "share on ",
                         fallback));
      }
      p.plan.warnings.push_back(absl::StrCat(msg, ": its share goes to the fallback ", fallback));
    } else {
      fill.push_back(d);
    }
  }
  std::stable_sort(fill.begin(), fill.end(), [&](size_t a, size_t b) {
    return CapabilityRank(devices[a].name) < CapabilityRank(devices[b].name);
  });
  return fill;
}

// Device d takes units from `next` on until one does not fit; `next` moves past what it took.
void FillDevice(Partitioning& p, size_t d, const Units& units, size_t& next) {
  ResourceAccountant& acct = p.accountants[d];
  const std::string& device = p.plan.devices[d].name;
  const size_t first = next;
  std::string stop;  // why the device stopped, when it did
  // Each unit without the nodes this device has no kernel for (they go to the fallback).
  std::vector<std::vector<int>> offered;
  offered.reserve(units.nodes.size() - next);
  for (size_t u = next; u < units.nodes.size(); ++u)
    offered.push_back(p.Runnable(d, units.nodes[u]));
  std::vector<NodeCost> costs;
  const size_t k = acct.CommitFittingRun(offered, &costs);
  p.Assign(d, absl::MakeConstSpan(offered).first(k), costs);
  // The taken units' nodes without a kernel here (units not taken go on to the next device).
  for (size_t u = next; u < next + k; ++u) p.Runnable(d, units.nodes[u], &p.no_kernel[d]);
  next += k;
  if (next < units.nodes.size()) {
    const uint64_t need = p.Need(d, offered[k]);
    acct.Stop();
    stop = absl::StrCat(units.names[next], ", which needs ", FormatBytes(need), " with ",
                        FormatBytes(*acct.budget_bytes() - acct.committed().total()), " left");
  }
  if (next == first && !stop.empty()) {
    p.plan.warnings.push_back(
        absl::StrCat(device, " takes nothing: it stops at once before ", stop));
  } else if (next > first) {
    p.plan.notes.push_back(absl::StrCat(
        device, " takes ", units.names[first],
        next - first > 1 ? absl::StrCat(" to ", units.names[next - 1]) : "", " (",
        FormatBytes(acct.committed().total()), " of ", FormatBytes(*acct.budget_bytes()), ")",
        stop.empty() ? "" : absl::StrCat("; it stops before ", stop)));
  }
}

// pass 5 (budget only): units (whole layers; single nodes outside layers) in graph order,
// a contiguous run per device, most capable device first.
absl::Status PlaceByBudget(Partitioning& p) {
  const Units units = LayerUnits(p);
  absl::StatusOr<std::vector<size_t>> fill = FillOrder(p);
  if (!fill.ok()) return fill.status();
  std::vector<std::string> order_names;
  for (size_t d : *fill) order_names.push_back(p.plan.devices[d].name);
  p.plan.mode = absl::StrCat("budget only (fills ", absl::StrJoin(order_names, ", then "),
                             ", whole layers at a time)");
  size_t next = 0;
  for (size_t d : *fill) FillDevice(p, d, units, next);
  return absl::OkStatus();
}

// pass 5 (neither rules nor budgets).
void PlaceNothing(Partitioning& p) {
  p.plan.mode = "no rules or budgets: every node on the fallback";
  for (size_t d = 0; d < p.plan.devices.size(); ++d) {
    if (d != p.fb) {
      p.plan.warnings.push_back(absl::StrCat(p.plan.devices[d].name,
                                             " has neither rules nor a budget: it gets no nodes"));
    }
  }
}

// pass 6: the fallback takes every node left, in graph order, and must hold them.
absl::Status PlaceRestOnFallback(Partitioning& p) {
  ResourceAccountant& fb_acct = p.accountants[p.fb];
  for (int i = 0; i < p.num_nodes(); ++i) {
    if (!p.plan.node_device[i].empty()) continue;
    p.plan.node_costs[i] = fb_acct.AddPending(i);
    fb_acct.CommitPending();
    p.plan.node_device[i] = p.plan.fallback_device;
  }
  if (fb_acct.budget_bytes() && fb_acct.committed().total() > *fb_acct.budget_bytes()) {
    return Refuse(fb_acct, p.plan.devices, p.accountants, p.plan.node_device, p.plan.node_costs);
  }
  return absl::OkStatus();
}

// pass 7: the report.
PartitionResult MakeResult(Partitioning& p) {
  for (const auto& [d, nodes] : p.no_kernel) {
    if (nodes.empty()) continue;
    std::map<std::string, int> ops;
    for (int node : nodes) ++ops[p.graph.nodes[node].op_type];
    std::vector<std::string> counts;
    for (const auto& [op, n] : ops) counts.push_back(n > 1 ? absl::StrCat(op, " x", n) : op);
    p.plan.notes.push_back(absl::StrCat(p.plan.devices[d].name, " has no kernel for ", nodes.size(),
                                        nodes.size() == 1 ? " node" : " nodes",
                                        " it would have taken (", absl::StrJoin(counts, ", "), ": ",
                                        SomeNames(p.graph, nodes), "): they run on the fallback ",
                                        p.plan.fallback_device,
                                        ", with copies where their values cross"));
  }
  std::vector<int> unknown;
  for (int i = 0; i < p.num_nodes(); ++i) {
    if (p.plan.node_costs[i].shapes_unknown) unknown.push_back(i);
  }
  if (!unknown.empty()) {
    p.plan.warnings.push_back(absl::StrCat(
        unknown.size(),
        " nodes have outputs of unknown shape, counted as 0 bytes: ", SomeNames(p.graph, unknown),
        "; give the largest input shapes (max_input_shapes; inferctl plan --input-shape) so "
        "that budgets see every activation"));
  }
  PartitionResult result;
  result.report = BuildPlanReport(p.plan);
  result.node_device = std::move(p.plan.node_device);
  result.node_costs = std::move(p.plan.node_costs);
  return result;
}

}  // namespace

absl::StatusOr<PartitionResult> Partition(const engine::Graph& graph,
                                          const engine::WorkspaceEstimator& estimator,
                                          const PartitionConfig& config) {
  Partitioning p(graph, config);
  // pass 1: devices, and the fallback among them.
  if (absl::Status st = SetUpDevices(p, estimator); !st.ok()) return st;
  // pass 2: parse the rules (one mode at most).
  absl::StatusOr<LayeringIndex> index =
      LayeringIndex::Create(config.name_rules, config.annotation_rules);
  if (!index.ok()) return index.status();
  p.index = *std::move(index);
  // pass 3: the device of each rule.
  if (absl::Status st = ResolveRuleDevices(p); !st.ok()) return st;
  // pass 4: index every node to its rule.
  absl::StatusOr<std::vector<std::optional<PatternMatch>>> node_rule =
      p.index->Assign(graph, config.subgraph_parent);
  if (!node_rule.ok()) return node_rule.status();
  p.plan.node_rule = *std::move(node_rule);
  // pass 5: the devices other than the fallback take their nodes.
  bool budget_only = false;
  for (size_t d = 0; d < p.plan.devices.size(); ++d) {
    budget_only |= d != p.fb && p.plan.devices[d].budget_bytes.has_value();
  }
  if (p.index->has_rules()) {
    PlaceByRules(p);
  } else if (budget_only) {
    if (absl::Status st = PlaceByBudget(p); !st.ok()) return st;
  } else {
    PlaceNothing(p);
  }
  // pass 6: the fallback takes the rest.
  if (absl::Status st = PlaceRestOnFallback(p); !st.ok()) return st;
  // pass 7: the report.
  return MakeResult(p);
}

absl::Status ApplyPartition(const PartitionResult& result, engine::Graph& graph) {
  const std::vector<NodeReport>& nodes = result.report.nodes;
  std::map<std::string, size_t, std::less<>> by_name;  // ordered: prefix search below
  std::unordered_map<std::string, size_t> by_output;
  for (size_t i = 0; i < nodes.size(); ++i) {
    by_name.emplace(nodes[i].name, i);
    for (const std::string& v : nodes[i].outputs) by_output.emplace(v, i);
  }
  auto find = [&](absl::string_view name) -> std::optional<size_t> {
    auto it = by_name.find(name);
    if (it == by_name.end()) return std::nullopt;
    return it->second;
  };
  for (engine::Node& node : graph.nodes) {
    // 1: the same name.
    std::optional<size_t> match = find(node.name);
    // 2: fused here, not there: "<original>/MatMulAddFusion" takes the original's device.
    const absl::string_view original = engine::OriginalNodeName(node.name);
    if (!match && !original.empty()) match = find(original);
    // 3: fused there, not here: the node that made one of its outputs there, or the fused node
    // named after it ("<name>/...").
    for (size_t k = 0; !match && k < node.outputs.size(); ++k) {
      if (node.outputs[k] < 0) continue;
      auto it = by_output.find(graph.values[node.outputs[k]].name);
      if (it != by_output.end()) match = it->second;
    }
    if (!match) {
      const std::string prefix = node.name + "/";
      auto it = by_name.lower_bound(prefix);
      if (it != by_name.end() && absl::StartsWith(it->first, prefix)) match = it->second;
    }
    if (!match) {
      return absl::InvalidArgumentError(absl::StrCat(
          "partition: node '", node.name,
          "' is not in the partition; partition a graph of the same model (same node and value "
          "names, fusions aside)"));
    }
    node.device = result.node_device[*match];
  }
  return absl::OkStatus();
}

}  // namespace inferd::partition

#include "partition/plan_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/checked_math.h"
#include "partition/activation_plan.h"

namespace inferd::partition {
namespace {

constexpr size_t kMaxCopiesListed = 10;

// Columns padded to their widest cell; `align[c]` is 'r' for right-aligned columns (others left).
std::string Table(const std::vector<std::vector<std::string>>& rows, absl::string_view align,
                  absl::string_view indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c > 0) line += "  ";
      line += c < align.size() && align[c] == 'r' ? pad + row[c] : row[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string SignedBytes(int64_t bytes) {
  return bytes < 0 ? absl::StrCat("-", FormatBytes(static_cast<uint64_t>(-bytes)))
                   : FormatBytes(static_cast<uint64_t>(bytes));
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit >= 2 ? "%.2f %s" : "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::optional<int64_t> DeviceReport::headroom_bytes() const {
  if (!budget_bytes) return std::nullopt;
  return static_cast<int64_t>(*budget_bytes) - static_cast<int64_t>(accounted.total());
}

const DeviceReport* PlanReport::FindDevice(absl::string_view device) const {
  for (const DeviceReport& d : devices) {
    if (d.device == device) return &d;
  }
  return nullptr;
}

PlanReport BuildPlanReport(const PlanInputs& in) {
  const engine::Graph& g = *in.graph;
  PlanReport r;
  r.mode = in.mode;
  r.fallback_device = in.fallback_device;
  r.notes = in.notes;
  r.warnings = in.warnings;
  r.copies = FindBoundaryCopies(g, in.node_device);
  // per node
  std::map<std::string, size_t> layer_index;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const engine::Node& node = g.nodes[i];
    NodeReport n;
    n.name = node.name;
    n.op_type = node.op_type;
    n.device = in.node_device[i];
    if (std::optional<LayerId> layer = in.layers.Detect(node.name)) n.layer = layer->key;
    if (!in.node_rule.empty()) n.rule = in.node_rule[i];
    n.cost = in.node_costs[i];
    for (int v : node.outputs) {
      if (v >= 0) n.outputs.push_back(g.values[v].name);
    }
    // per layer
    auto [it, inserted] = layer_index.emplace(n.layer, r.layers.size());
    if (inserted) r.layers.push_back(LayerReport{n.layer, {}, 0, 0});
    LayerReport& layer = r.layers[it->second];
    ++layer.nodes;
    layer.bytes += n.cost.cost.total();
    auto dev = std::find_if(layer.devices.begin(), layer.devices.end(),
                            [&](const auto& d) { return d.first == n.device; });
    if (dev == layer.devices.end()) {
      layer.devices.emplace_back(n.device, 1);
    } else {
      ++dev->second;
    }
    r.nodes.push_back(std::move(n));
  }
  // per device: node devices as indices into in.devices, and the estimated workspaces
  std::vector<int> node_device(g.nodes.size(), kUnassigned);
  std::vector<std::optional<uint64_t>> workspace(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (size_t d = 0; d < in.devices.size(); ++d) {
      if (in.devices[d].name == in.node_device[i]) node_device[i] = static_cast<int>(d);
    }
    if (in.node_costs[i].workspace_estimated) workspace[i] = in.node_costs[i].cost.workspace;
  }
  for (const DeviceSpec& spec : in.devices) {
    DeviceReport d;
    d.device = spec.name;
    d.fallback = spec.name == in.fallback_device;
    d.budget_bytes = spec.budget_bytes;
    for (const NodeReport& n : r.nodes) {
      if (n.device != d.device) continue;
      ++d.nodes;
      d.accounted.weights = SaturatingAdd(d.accounted.weights, n.cost.cost.weights);
      if (n.cost.workspace_estimated) {
        ++d.workspace_estimated_nodes;
      } else {
        ++d.workspace_heuristic_nodes;
        d.accounted.workspace = SaturatingAdd(d.accounted.workspace, n.cost.cost.workspace);
      }
    }
    for (const BoundaryCopy& c : r.copies) {
      if (c.to != d.device) continue;
      ++d.copies_in;
      d.copy_in_bytes += c.bytes;
    }
    // The activations as the engine will plan them, with every node's device now known.
    const ActivationCharge plan = PlanDeviceActivations(
        g, static_cast<int>(r.devices.size()), IsHostDevice(d.device), node_device, workspace);
    d.accounted.activations = plan.total();
    d.activation_peak_bytes = plan.block_peak;
    d.activation_peak_planned = !plan.shapes_unknown;
    d.activation_sum_bytes = plan.output_sum;
    d.estimated_workspace_bytes = plan.workspace_bytes;
    r.devices.push_back(std::move(d));
  }
  return r;
}

namespace {

// The device table, its legend and where the workspaces came from.
std::string DevicesSection(const std::vector<DeviceReport>& devices) {
  std::vector<std::vector<std::string>> rows = {{"device", "nodes", "weights", "activations",
                                                 "workspace", "accounted", "measured", "budget",
                                                 "headroom"}};
  bool any_unknown = false;
  for (const DeviceReport& d : devices) {
    any_unknown |= !d.activation_peak_planned;
    const std::optional<int64_t> headroom = d.headroom_bytes();
    rows.push_back({absl::StrCat(d.device, d.fallback ? "*" : ""), absl::StrCat(d.nodes),
                    FormatBytes(d.accounted.weights),
                    absl::StrCat(FormatBytes(d.accounted.activations),
                                 d.activation_peak_planned ? "" : " (?)"),
                    FormatBytes(d.accounted.workspace), FormatBytes(d.accounted.total()),
                    d.measured_bytes ? FormatBytes(*d.measured_bytes) : "-",
                    d.budget_bytes ? FormatBytes(*d.budget_bytes) : "none",
                    headroom ? SignedBytes(*headroom) : "-"});
  }
  std::string out = Table(rows, "lrrrrrrrr", "  ");
  absl::StrAppend(
      &out,
      "  * fallback device. accounted = weights + activations + workspace: what budgets are "
      "checked against.\n"
      "  activations = liveness-planned block of intermediates, incoming copies and estimated\n"
      "  workspaces (at its arena size class) + the graph outputs made there",
      any_unknown ? "; (?) = some shape unknown, counted as 0" : "",
      ".\n  workspace = the 1.5x heuristic, for nodes whose kernel has no estimate.\n"
      "  measured = weights + the engine's arena peaks for one run, once its kernels are made.\n");
  for (const DeviceReport& d : devices) {
    if (d.nodes == 0) continue;
    absl::StrAppend(&out, "  ", d.device, ": block peak ", FormatBytes(d.activation_peak_bytes),
                    " (sum of node outputs ", FormatBytes(d.activation_sum_bytes),
                    "; estimated workspaces ", FormatBytes(d.estimated_workspace_bytes),
                    "; copies in ", FormatBytes(d.copy_in_bytes),
                    "); workspace of nodes: ", d.workspace_estimated_nodes, " kernel estimates / ",
                    d.workspace_heuristic_nodes, " by the 1.5x heuristic",
                    d.measured_bytes && *d.measured_bytes > 0
                        ? absl::StrFormat("; accounted / measured %.3f",
                                          static_cast<double>(d.accounted.total()) /
                                              static_cast<double>(*d.measured_bytes))
                        : "",
                    "\n");
  }
  return out;
}

// Boundary copies: totals per device pair, then the first kMaxCopiesListed.
std::string CopiesSection(const std::vector<BoundaryCopy>& copies,
                          const std::vector<NodeReport>& nodes) {
  if (copies.empty()) return "boundary copies: none\n";
  std::map<std::pair<std::string, std::string>, std::pair<int, uint64_t>> by_pair;
  for (const BoundaryCopy& c : copies) {
    auto& e = by_pair[{c.from, c.to}];
    ++e.first;
    e.second += c.bytes;
  }
  std::vector<std::string> parts;
  for (const auto& [pair, e] : by_pair) {
    parts.push_back(absl::StrCat(pair.first, " -> ", pair.second, ": ", e.first, " (",
                                 FormatBytes(e.second), ")"));
  }
  std::string out =
      absl::StrCat("boundary copies: ", copies.size(), " (", absl::StrJoin(parts, ", "), ")\n");
  std::vector<std::vector<std::string>> copy_rows;
  for (size_t i = 0; i < copies.size() && i < kMaxCopiesListed; ++i) {
    const BoundaryCopy& c = copies[i];
    const std::string reader = static_cast<size_t>(c.first_reader) < nodes.size()
                                   ? absl::StrCat("before '", nodes[c.first_reader].name, "'")
                                   : "";
    copy_rows.push_back({absl::StrCat(c.from, " -> ", c.to),
                         c.bytes_known ? FormatBytes(c.bytes) : "? B",
                         absl::StrCat("'", c.value_name, "'"), reader});
  }
  absl::StrAppend(&out, Table(copy_rows, "lrll", "  "));
  if (copies.size() > kMaxCopiesListed) {
    absl::StrAppend(&out, "  ... and ", copies.size() - kMaxCopiesListed, " more\n");
  }
  return out;
}

std::string LayersSection(const std::vector<LayerReport>& layers) {
  size_t named_layers = 0;
  for (const LayerReport& l : layers) named_layers += l.layer.empty() ? 0 : 1;
  if (named_layers == 0) return "layers: none detected in node names\n";
  std::string out = absl::StrCat("layers: ", named_layers, "\n");
  std::vector<std::vector<std::string>> layer_rows = {{"layer", "device", "nodes", "bytes"}};
  for (const LayerReport& l : layers) {
    std::vector<std::string> devs;
    for (const auto& [device, n] : l.devices) {
      devs.push_back(l.devices.size() == 1 ? device : absl::StrCat(device, " (", n, ")"));
    }
    layer_rows.push_back({l.layer.empty() ? "(outside layers)" : l.layer,
                          absl::StrJoin(devs, " + "), absl::StrCat(l.nodes), FormatBytes(l.bytes)});
  }
  absl::StrAppend(&out, Table(layer_rows, "llrr", "  "));
  return out;
}

// "title:\n  - line\n..." or nothing.
std::string ListSection(absl::string_view title, const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string out = absl::StrCat(title, ":\n");
  for (const std::string& l : lines) absl::StrAppend(&out, "  - ", l, "\n");
  return out;
}

}  // namespace

std::string PlanReport::ToString() const {
  return absl::StrCat("partition plan: ", mode, "; fallback ", fallback_device, "\n",
                      DevicesSection(devices), CopiesSection(copies, nodes), LayersSection(layers),
                      ListSection("notes", notes), ListSection("warnings", warnings));
}

std::string PlanReport::NodesToString() const {
  std::vector<std::vector<std::string>> rows = {
      {"#", "device", "layer", "weights", "activations", "workspace", "op", "name"}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeReport& n = nodes[i];
    rows.push_back(
        {absl::StrCat(i), n.device, n.layer.empty() ? "-" : n.layer,
         FormatBytes(n.cost.cost.weights), FormatBytes(n.cost.cost.activations),
         absl::StrCat(FormatBytes(n.cost.cost.workspace), n.cost.workspace_estimated ? "" : " (h)"),
         n.op_type, n.name});
  }
  return absl::StrCat(Table(rows, "rllrrrll", "  "),
                      "  (h) = 1.5x heuristic, no kernel estimate\n");
}

}  // namespace inferd::partition

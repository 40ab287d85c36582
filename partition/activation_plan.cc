#include "partition/activation_plan.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/checked_math.h"
#include "memory/memory_planner.h"
#include "memory/size_classes.h"
#include "partition/resource_accountant.h"

namespace inferd::partition {
namespace {

int NodeStep(int node) { return 2 * node + 1; }
int CopyStep(int reader) { return 2 * reader; }

}  // namespace

uint64_t ActivationCharge::total() const { return SaturatingAdd(block_bytes, output_bytes); }

uint64_t ArenaCapacity(uint64_t bytes) {
  if (bytes == 0) return 0;
  const int c = memory::SizeClassFor(static_cast<size_t>(bytes));
  return c < 0 ? bytes : memory::SizeClassCapacity(c);
}

ActivationCharge PlanDeviceActivations(const engine::Graph& graph, int device, bool host_device,
                                       absl::Span<const int> node_device,
                                       absl::Span<const std::optional<uint64_t>> node_workspace) {
  ActivationCharge c;
  memory::GreedyMemoryPlanner planner;
  std::vector<std::pair<int, int>> first_on;  // (other device, its first reader), per value
  // pass 1: what the device's nodes make: intermediates into the block, graph outputs to IO,
  // estimated workspaces into the block for their own step.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (node_device[i] != device) continue;
    const int node = static_cast<int>(i);
    for (int v : graph.nodes[i].outputs) {
      if (v < 0) continue;
      const engine::Value& value = graph.values[v];
      const std::optional<uint64_t> bytes = StaticValueBytes(value);
      if (!bytes) {
        c.shapes_unknown = true;
        continue;
      }
      c.output_sum = SaturatingAdd(c.output_sum, *bytes);
      if (value.is_graph_output) {
        c.output_bytes = SaturatingAdd(c.output_bytes, ArenaCapacity(*bytes));
        continue;
      }
      int last = NodeStep(node);
      first_on.clear();
      for (const auto& [reader, input_index] : value.consumers) {
        const int d = node_device[reader];
        if (d == device || d == kUnassigned) {
          last = std::max(last, NodeStep(reader));
          continue;
        }
        auto it = std::find_if(first_on.begin(), first_on.end(),
                               [&](const auto& e) { return e.first == d; });
        if (it == first_on.end()) {
          first_on.emplace_back(d, reader);
        } else {
          it->second = std::min(it->second, reader);
        }
      }
      for (const auto& [d, reader] : first_on) last = std::max(last, CopyStep(reader));
      planner.AddBuffer(static_cast<size_t>(*bytes), NodeStep(node), last);
    }
    const std::optional<uint64_t> workspace = node_workspace[i];
    if (workspace && *workspace > 0) {
      planner.AddBuffer(static_cast<size_t>(*workspace), NodeStep(node), NodeStep(node));
      c.workspace_bytes = SaturatingAdd(c.workspace_bytes, *workspace);
    }
  }
  // pass 2: incoming copies: values read here and made elsewhere (or not yet placed), live from
  // the copy before their first reader here to their last reader here.
  for (const engine::Value& value : graph.values) {
    if (value.initializer != nullptr) continue;
    if (value.producer >= 0 ? node_device[value.producer] == device
                            : (host_device || !value.is_graph_input)) {
      continue;
    }
    int first = -1, last = -1;
    for (const auto& [reader, input_index] : value.consumers) {
      if (node_device[reader] != device) continue;
      first = first < 0 ? reader : std::min(first, reader);
      last = std::max(last, reader);
    }
    if (first < 0) continue;
    const std::optional<uint64_t> bytes = StaticValueBytes(value);
    if (!bytes) {
      c.shapes_unknown = true;
      continue;
    }
    planner.AddBuffer(static_cast<size_t>(*bytes), CopyStep(first), NodeStep(last));
    c.copy_in_bytes = SaturatingAdd(c.copy_in_bytes, *bytes);
  }
  c.block_peak = planner.GetPeakBytes();
  c.block_bytes = ArenaCapacity(c.block_peak);
  return c;
}

}  // namespace inferd::partition

#include "partition/boundary_copies.h"

#include <algorithm>
#include <map>

#include "partition/device.h"
#include "partition/resource_accountant.h"

namespace inferd::partition {

std::vector<BoundaryCopy> FindBoundaryCopies(const engine::Graph& graph,
                                             absl::Span<const std::string> node_device) {
  return FindBoundaryCopies(graph, node_device, [&](int node, int) { return node_device[node]; });
}

std::vector<BoundaryCopy> FindBoundaryCopies(const engine::Graph& graph,
                                             absl::Span<const std::string> node_device,
                                             const ReaderDeviceFn& reader_device) {
  std::vector<BoundaryCopy> out;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const engine::Value& value = graph.values[v];
    if (value.initializer != nullptr) continue;
    std::string from;
    if (value.producer >= 0) {
      from = node_device[value.producer];
    } else if (value.is_graph_input) {
      from = "host";
    } else {
      continue;
    }
    // Readers on other devices, grouped by device (ordered for a stable result).
    std::map<std::string, std::pair<int, int>> readers;  // device -> (first, last)
    for (const auto& [node, input_index] : value.consumers) {
      const std::string to = reader_device(node, input_index);
      if (to.empty() || to == from || (from == "host" && IsHostDevice(to))) continue;
      auto [it, inserted] = readers.emplace(to, std::make_pair(node, node));
      if (!inserted) {
        it->second.first = std::min(it->second.first, node);
        it->second.second = std::max(it->second.second, node);
      }
    }
    const std::optional<uint64_t> bytes = StaticValueBytes(value);
    for (const auto& [to, range] : readers) {
      BoundaryCopy c;
      c.value = static_cast<int>(v);
      c.value_name = value.name;
      c.from = from;
      c.to = to;
      c.bytes = bytes.value_or(0);
      c.bytes_known = bytes.has_value();
      c.first_reader = range.first;
      c.last_reader = range.second;
      out.push_back(std::move(c));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const BoundaryCopy& a, const BoundaryCopy& b) {
    return a.first_reader != b.first_reader ? a.first_reader < b.first_reader : a.value < b.value;
  });
  return out;
}

}  // namespace inferd::partition

// Boundary copies: the values a partitioned graph must move between devices. A value produced
// on device A and read by nodes on device B != A needs one copy to B, made before B's first
// reader and kept until B's last; one copy per (value, B), however many nodes of B read it.
// Graph inputs live in the caller's host memory: host devices (cpu:N) borrow them, other devices
// (cuda:N) need an upload (from = "host"). Weights are not copies: each device holds the
// initializers its nodes read (ResourceAccountant counts them there).
// Pure function; thread-safe.
#ifndef INFERD_PARTITION_BOUNDARY_COPIES_H_
#define INFERD_PARTITION_BOUNDARY_COPIES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "engine/graph.h"

namespace inferd::partition {

struct BoundaryCopy {
  int value = -1;  // index in graph.values
  std::string value_name;
  std::string from;    // producer's device, or "host" for a graph input
  std::string to;      // reader's device
  uint64_t bytes = 0;  // from the static shape; 0 when unknown
  bool bytes_known = false;
  int first_reader = -1;  // node index of the first node on `to` that reads it: copy before it
  int last_reader = -1;   // node index of the last node on `to` that reads it
};

// `node_device[i]` is the device of graph.nodes[i]. Sorted by first_reader, then value.
std::vector<BoundaryCopy> FindBoundaryCopies(const engine::Graph& graph,
                                             absl::Span<const std::string> node_device);

// The device whose memory node `node` reads its input `input_index` from (consumer index, as in
// Value::consumers): its own device, the host device for an input its kernel reads on the host,
// or "" for an input it reads wherever the value is (a copy node).
using ReaderDeviceFn = std::function<std::string(int node, int input_index)>;

// As above, with the reading device of each input from `reader_device`.
std::vector<BoundaryCopy> FindBoundaryCopies(const engine::Graph& graph,
                                             absl::Span<const std::string> node_device,
                                             const ReaderDeviceFn& reader_device);

}  // namespace inferd::partition

#endif  // INFERD_PARTITION_BOUNDARY_COPIES_H_

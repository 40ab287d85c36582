// KernelIoOf: what a kernel is told about a value of the graph at creation (its KernelIoInfo), the
// one place the execution plan, constant folding and the partitioner's workspace estimates read
// it from; NodeIoOf the same for all of a node's inputs and outputs, and FindNodeKernel the one
// way they look a node's KernelDef up on a device kind.
#ifndef INFERD_ENGINE_KERNEL_IO_H_
#define INFERD_ENGINE_KERNEL_IO_H_

#include <initializer_list>
#include <vector>

#include "engine/graph.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

// Name, type, kind, shape, and its data when it is a weight, of value `v` of `g`. Absent
// (present = false) when v < 0 (an omitted optional).
KernelIoInfo KernelIoOf(const Graph& g, int v);

// A node's inputs and outputs as its kernel sees them at creation, and their types (what a
// registry matches on).
struct NodeIo {
  std::vector<DataType> in_types, out_types;
  std::vector<KernelIoInfo> ins, outs;
};
NodeIo NodeIoOf(const Graph& g, const Node& node);

// The definition of the kernel that runs `node` (with inputs and outputs `io`) on a device of
// kind `device`: the first of `registries` that has one (null entries are skipped), else nullptr.
const KernelDef* FindNodeKernel(std::initializer_list<const KernelRegistry*> registries,
                                const Node& node, const NodeIo& io, DeviceKind device);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KERNEL_IO_H_

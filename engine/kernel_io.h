// KernelIoOf: what a kernel is told about a value of the graph at creation (its KernelIoInfo), the
// one place the execution plan, constant folding and the partitioner's workspace estimates read
// it from.
#ifndef INFERD_ENGINE_KERNEL_IO_H_
#define INFERD_ENGINE_KERNEL_IO_H_

#include "engine/graph.h"
#include "engine/kernel.h"

namespace inferd::engine {

// Name, type, kind, shape, and its data when it is a weight, of value `v` of `g`. Absent
// (present = false) when v < 0 (an omitted optional).
KernelIoInfo KernelIoOf(const Graph& g, int v);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_KERNEL_IO_H_

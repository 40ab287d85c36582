// Loop and Scan: control-flow kernels the engine provides itself (beside If, device_copies.h).
// Their bodies are subgraph plans run through SubgraphRunner::RunSubgraphWith: each iteration
// binds the iteration's inputs as views, and the body's outputs come back as execution-arena
// buffers that become the next iteration's inputs without a copy. docs/control-flow.md says
// what is supported and what is refused. Kernels are const and thread-safe.
#ifndef INFERD_ENGINE_CONTROL_FLOW_H_
#define INFERD_ENGINE_CONTROL_FLOW_H_

#include "absl/status/status.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

// Registers Loop (opset 1+) and Scan (opset 9+; opset 8 is refused at creation) into `registry`.
absl::Status RegisterControlFlowKernels(KernelRegistry& registry);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CONTROL_FLOW_H_

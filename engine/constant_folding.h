// Constant folding at load: values that are the same in every run are computed once, when the
// session is made, and become weights (owned by the session's DerivedWeights), so the nodes that
// made them no longer run per request. One pass over the graph in topological order, so a value
// folded early makes its readers foldable in the same pass:
//   - Shape(x) (with start / end), Size(x), and Gather(Shape(x), constant indices) become int64
//     weights when every dim they read is known in the graph's value info: with a symbolic batch
//     dim, Shape(x)[1:] or Gather(Shape(x), 2) folds, Shape(x) itself does not;
//   - a node of the default ONNX domain whose inputs are all weights is run once by its CPU
//     kernel on host tensors when its outputs are small (options.max_output_bytes in all) and it
//     is deterministic (not RandomX, Bernoulli, Multinomial or Dropout, no subgraph); Identity
//     of a weight reads the weight itself, without a copy. QuantizeLinear / DequantizeLinear
//     (and DynamicQuantizeLinear) are left to the QDQ fusion, which needs to see them.
// A folded value keeps its value index and name (its readers need no change). Not folded: a
// graph output, a value read inside a subgraph (If / Loop / Scan bodies find outer values by
// name), a string, sequence or optional. A Shape left without readers by the folds is dropped.
// A node whose kernel refuses it, or whose outputs are larger than the limit, stays as it was:
// the run then reports what it reports today. The pass changes no result; it runs with or
// without the fusions, before them (so that Pad -> Conv sees constant pads).
//
// Example:
//   DerivedWeights derived;  // must outlive every kernel made from `graph`
//   absl::StatusOr<int> removed = FoldConstants(graph, registry, derived);
#ifndef INFERD_ENGINE_CONSTANT_FOLDING_H_
#define INFERD_ENGINE_CONSTANT_FOLDING_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/derived_weights.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

struct ConstantFoldingOptions {
  // The most bytes a folded node's outputs may take together.
  uint64_t max_output_bytes = 64 * 1024;
  // The most host memory a kernel run at load may take for its temporaries and workspaces.
  uint64_t max_scratch_bytes = 64 << 20;
};

// Folds what it can in `graph` (top level; subgraphs are not changed). Returns how many nodes
// were removed. Errors only where the graph is broken (a cycle); a node that cannot be folded is
// left in place.
absl::StatusOr<int> FoldConstants(Graph& graph, const KernelRegistry& registry,
                                  DerivedWeights& derived,
                                  const ConstantFoldingOptions& options = {});

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_CONSTANT_FOLDING_H_

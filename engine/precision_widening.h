// Precision widening: a load-time graph pass that runs the float16 / bfloat16 compute of a model
// in float32 (docs/half-precision.md). Nodes whose half-precision types have no kernel, but
// whose float32 version has one, are widened: their half inputs are read through float32 twins
// and their half outputs are written as float32 twins. Regions grow through ops that have both
// kernels (data movement, elementwise) when every half input already has a float32 twin, so a
// Conv -> Relu -> Reshape -> Gemm chain is one float32 region with casts only at its edges.
//   - half weights read by widened nodes are converted once, here, into float32 weights owned by
//     a DerivedWeights store (their bytes are the memory cost of the path);
//   - a Cast(to=float) is inserted where a widened node reads a half value made outside the
//     region (graph input, outer-scope value, a node that stays half), once per value;
//   - a Cast back to the declared type is inserted where a twin's half value is still needed
//     (graph outputs keep their declared types; readers outside the region; If nodes);
//   - If branches are widened the same way, each on its own (their outputs keep their types).
// Cast, CastLike, nodes with a dtype attribute ("to", "dtype") and nodes with subgraphs are never
// widened. Kernel lookups are for the CPU. Not thread-safe; run once per session graph.
//
// Example:
//   DerivedWeights weights;  // must outlive every kernel made from `graph`
//   absl::StatusOr<WideningReport> r = WidenHalfPrecision(graph, registry, weights);
#ifndef INFERD_ENGINE_PRECISION_WIDENING_H_
#define INFERD_ENGINE_PRECISION_WIDENING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/derived_weights.h"
#include "engine/graph.h"
#include "engine/half_bits.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"

namespace inferd::engine {

struct WideningReport {
  int widened_nodes = 0;                // nodes now computing in float32 (subgraphs included)
  int half_nodes = 0;                   // nodes that still read or write half values natively
  int casts_to_float = 0;               // inserted at region entries
  int casts_to_half = 0;                // inserted at region exits
  int converted_weights = 0;            // half weights given a float32 twin
  uint64_t converted_weight_bytes = 0;  // their float32 bytes (extra memory held by the session)
  // Half weights a widened node reads as they are (KernelDef::half_weight_inputs: MatMul's and
  // Gemm's B), and their bytes: no float32 copy is made of them.
  int half_weights = 0;
  uint64_t half_weight_bytes = 0;
  bool any_half() const { return widened_nodes + half_nodes > 0; }
  // "widened 12 nodes to float32 (3 casts in, 1 out; 5 weights, 40960 bytes); 2 half nodes
  // native", or "no float16/bfloat16 compute".
  std::string Summary() const;
};

// Rewrites `graph` (sorted, edges built) in place; converted weights go to `weights`. With
// `keep_half_weights` off, every half weight a widened node reads is converted (the float32
// products then run on prepacked float32 weights: more memory, the faster path for large batches).
absl::StatusOr<WideningReport> WidenHalfPrecision(Graph& graph, const KernelRegistry& registry,
                                                  DerivedWeights& weights,
                                                  bool keep_half_weights = true);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_PRECISION_WIDENING_H_

// Helpers shared by the load-time graph rewrites (engine/rewrites.cc, engine/qdq_fusion.cc,
// engine/lowerings.cc): pattern tests on the graph IR, fused-node construction and the
// replacement of matched nodes. Internal to //engine.
#ifndef INFERD_ENGINE_REWRITE_UTIL_H_
#define INFERD_ENGINE_REWRITE_UTIL_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/graph.h"
#include "engine/tensor.h"

namespace inferd::engine::rewrite {

// The single node reading `value`, or -1 (none, several, or a graph output).
int SoleConsumer(const Graph& g, int value);

bool IsOnnxOp(const Node& n, absl::string_view op);

// A com.inferd node `op` named "<first>/<suffix>", writing `second`'s outputs, on `first`'s
// device with its metadata (inputs and attributes left to the caller).
Node Fused(const Node& first, const Node& second, absl::string_view op, absl::string_view suffix);

// Drops the nodes with keep[i] false and puts each replacement (position, fused node) where its
// first node was; then re-sorts and checks the graph.
absl::Status Replace(Graph& g, const std::vector<bool>& keep,
                     std::vector<std::pair<size_t, Node>>& replacements);

// The attribute `name` of `n`, or nullptr.
const onnx::AttributeProto* FindAttribute(const Node& n, absl::string_view name);
float FloatAttribute(const Node& n, absl::string_view name, float fallback);
int64_t IntAttribute(const Node& n, absl::string_view name, int64_t fallback);

// Equal ranks and, dim by dim, equal known values or the same symbol. Two values share a symbol
// where the model declares it (ONNX: one name, one size) or where load-time inference derived
// them equal (it names unknown dims "unk__N" and carries a name only through ops that keep the
// dim), so an elementwise op on them does not broadcast.
bool SameShape(const ShapeInfo& a, const ShapeInfo& b);

// Per value, whether a node reads it inside a subgraph (one of its implicit inputs).
std::vector<bool> ImplicitlyRead(const Graph& g);

// The layout passes' narrowing (blocked_layouts.cc, int8_channels_last.cc): drops values from
// `set` until, for every value left, producer_accepts(value) and, for each of its readers,
// reader_accepts(node, input slot) hold (both may look at `set`). Edges must be current.
void NarrowToFixedPoint(const Graph& g, std::vector<bool>& set,
                        const std::function<bool(int value)>& producer_accepts,
                        const std::function<bool(int node, int slot)>& reader_accepts);

// Sets int attribute `name` of `n` to `v` (adding it where absent).
void SetIntAttribute(Node& n, const char* name, int64_t v);

// A float32 weight of exactly `n` elements, or nullptr.
const Tensor* FloatWeight(const Graph& g, int value, int64_t n);

// The other input of two-input node `n` than `value`, or -1 when `value` is not one of them.
int OtherInput(const Node& n, int value);

// Adds a weight value holding `t` (owned elsewhere, e.g. DerivedWeights), named `name` or, when
// that is taken, "<name>_<k>"; returns its index.
int AddWeight(Graph& g, const std::string& name, const Tensor* t);

}  // namespace inferd::engine::rewrite

#endif  // INFERD_ENGINE_REWRITE_UTIL_H_

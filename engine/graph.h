// Graph IR: the model's computation as nodes and values, built once at load from the ONNX graph
// and then rewritten (fusions) and annotated (device assignment) before the execution plan is
// made. Values are identified by index; a node refers to its inputs and outputs by value index
// (-1 for an absent optional input or output). Plain data; thread-compatible; after a session
// is created its graph is only read.
#ifndef INFERD_ENGINE_GRAPH_H_
#define INFERD_ENGINE_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/data_type.h"
#include "engine/shape.h"
#include "engine/tensor.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {

class Graph;

struct Value {
  std::string name;
  DataType type = DataType::kUndefined;  // a sequence's or optional's: its element type
  ValueKind kind = ValueKind::kTensor;
  ShapeInfo shape;    // a sequence's or optional's: unknown
  int producer = -1;  // node index; -1 for graph inputs and initializers
  int producer_slot = -1;
  std::vector<std::pair<int, int>> consumers;  // (node index, input index)
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool outer_scope = false;             // a subgraph's view of a value of an enclosing graph
  const Tensor* initializer = nullptr;  // weights: a borrowed view owned by the Model
  // A weight's copy uploaded to a device the host cannot read ("cuda:0", engine/device_copies.h);
  // empty: host memory.
  std::string resident_device;
};

struct Node {
  std::string name;  // unique in the graph; generated as "<op_type>_<k>" when the model has none
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  int opset = 0;       // the model's opset for `domain`
  std::vector<int> inputs;
  std::vector<int> outputs;
  // Outer-scope values read inside this node's subgraphs (If branches): they must be computed
  // before the node runs and stay alive until it has run. Consumer input index = inputs.size()+k.
  std::vector<int> implicit_inputs;
  std::vector<onnx::AttributeProto> attributes;
  std::map<std::string, std::string> metadata;  // node metadata_props, e.g. "layer_ann"
  std::string device;  // assigned device ("cpu:0", "cpu:1", "cuda:0"); empty before partitioning
  // Graph attributes (If's then_branch / else_branch) as IR, by attribute name. Immutable.
  std::map<std::string, std::shared_ptr<const Graph>> subgraphs;
};

class Graph {
 public:
  std::vector<Node> nodes;
  std::vector<Value> values;
  std::vector<int> inputs;   // graph inputs fed by the caller (initializers excluded)
  std::vector<int> outputs;  // declared graph outputs, in order

  // Value index by name, or -1.
  int FindValue(absl::string_view name) const;
  // Adds a value (names must be unique) and returns its index.
  int AddValue(Value v);
  // Renames value `v` (the new name must be free).
  void RenameValue(int v, std::string name);
  // Recomputes every value's producer and consumers from the nodes' input / output lists.
  void RebuildEdges();
  // Orders `nodes` so that every node comes after the producers of its inputs. Stable for
  // already sorted graphs. FAILED_PRECONDITION naming a node on the cycle if there is one.
  absl::Status TopologicalSort();
  // Drops nodes marked for removal by `keep[i] == false` and rebuilds the edges.
  void RemoveNodes(const std::vector<bool>& keep);
  // Checks the IR's own invariants (edges consistent, single producer, inputs defined before
  // use); INTERNAL with a description when broken. For tests and after rewrites.
  absl::Status Validate() const;

 private:
  std::unordered_map<std::string, int> by_name_;
};

// Rewrites name a fused node after the node it replaces: "<original>/<Fusion>" (for example
// "/m/layers.0/mm/MatMulAddFusion", engine/rewrites.h), so that name-based partition rules and
// the partition of an unfused graph still find it. FusedNodeName makes such a name;
// OriginalNodeName maps one back: the name up to its last '/' ("/m/layers.0/mm"), or "" when it
// has none. Any name with a '/' has a candidate original; callers look it up among the nodes
// they know and use it only when the node's own name is not among them.
std::string FusedNodeName(absl::string_view original, absl::string_view fusion_suffix);
absl::string_view OriginalNodeName(absl::string_view name);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_GRAPH_H_

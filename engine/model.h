// Model: a loaded ONNX model: the parsed and checked ModelProto, its weights (viewed or mapped,
// never copied into arenas), and the graph IR with types and shapes from ONNX shape inference.
// Immutable after Load; shared by every session of the model (thread-safe to read).
//
// Loading: parse (libonnx protobuf), check (onnx::checker), apply fixed input shapes, infer
// shapes (with data propagation), fold Constant nodes into weights, build the IR, and sort it
// topologically. Malformed, truncated or hostile files give an INVALID_ARGUMENT (or NOT_FOUND /
// UNIMPLEMENTED) status with a message naming what is wrong; nothing here aborts.
//
// Example:
//   ModelLoadOptions opts;
//   opts.fixed_input_shapes["input_ids"] = {1, 128};
//   absl::StatusOr<std::shared_ptr<const Model>> m = Model::Load("/models/bert/model.onnx", opts);
#ifndef INFERD_ENGINE_MODEL_H_
#define INFERD_ENGINE_MODEL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/graph.h"
#include "engine/onnx_schemas.h"
#include "engine/weights.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {

struct ModelLoadOptions {
  // Concrete shapes for graph inputs with dynamic dims, applied before shape inference, so that
  // every shape can become known at load (and the static memory plan applies).
  std::map<std::string, std::vector<int64_t>> fixed_input_shapes;
  // Accepted opsets of the default ONNX domain: libonnx 1.12 knows up to 17, inferd registers
  // the schemas of 18 to 21 (engine/onnx_schemas.h); 22 only added bfloat16 to operators' types.
  // Each node needs a kernel for its version.
  int min_opset = 1;
  int max_opset = kMaxOnnxOpset;
};

class Model {
 public:
  static absl::StatusOr<std::shared_ptr<const Model>> Load(const std::string& path,
                                                           const ModelLoadOptions& options = {});
  // From serialized bytes; external data is resolved against `model_dir` ("" forbids it).
  static absl::StatusOr<std::shared_ptr<const Model>> Parse(absl::string_view bytes,
                                                            const std::string& model_dir,
                                                            const ModelLoadOptions& options = {});

  const Graph& graph() const { return graph_; }
  const std::string& path() const { return path_; }
  int64_t ir_version() const { return proto_->ir_version(); }
  const std::string& producer_name() const { return proto_->producer_name(); }
  // Opset imported for `domain` ("" / "ai.onnx" = default domain), or 0.
  int opset(absl::string_view domain) const;
  const std::map<std::string, int>& opsets() const { return opsets_; }
  const WeightStore& weights() const { return weights_; }

 private:
  explicit Model(std::string model_dir) : weights_(std::move(model_dir)) {}
  absl::Status Build(const ModelLoadOptions& options);
  // The IR of `g`; `outer` is the enclosing graph of a subgraph (null for the main graph).
  absl::Status BuildGraph(const onnx::GraphProto& g, const Graph* outer, Graph* out);
  // BuildGraph's steps: weights (initializers; Constant nodes), nodes, subgraphs. `where` names
  // the graph in messages.
  absl::Status AddInitializers(const onnx::GraphProto& g, const std::string& where, Graph& graph);
  absl::Status FoldConstant(const onnx::NodeProto& np, const std::string& where, Graph& graph);
  absl::Status AddNodes(const onnx::GraphProto& g, const std::string& where, Graph& graph);
  absl::Status BuildSubgraphs(const onnx::GraphProto& g, Graph& graph);

  std::string path_;
  std::unique_ptr<onnx::ModelProto> proto_;  // owns the bytes that weights view
  std::deque<onnx::TensorProto> folded_;     // Constant nodes turned into weights
  std::map<std::string, int> opsets_;
  WeightStore weights_;
  Graph graph_;
};

// Shape information of an ONNX TypeProto (tensor types only).
ShapeInfo ShapeInfoFromType(const onnx::TypeProto& type);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_MODEL_H_

// Test helpers for partition/: fake kernel definitions with a chosen workspace estimate, and a
// hand-built graph IR whose costs are easy to compute by hand. Tests only.
#ifndef INFERD_PARTITION_TESTING_TEST_UTIL_H_
#define INFERD_PARTITION_TESTING_TEST_UTIL_H_

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"
#include "engine/tensor.h"

namespace inferd::partition::testing {

// A kernel for (default domain, `op`, any opset and type) on `device_type`, never instantiated;
// its workspace estimate returns `estimate` bytes, or there is none.
inline engine::KernelDef FakeDef(const std::string& op, const std::string& device_type,
                                 std::optional<size_t> estimate) {
  engine::KernelDef def;
  def.op_type = op;
  def.device_type = device_type;
  def.create = [](const engine::KernelInfo&) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
    return absl::UnimplementedError("fake kernel");
  };
  if (estimate) {
    const size_t bytes = *estimate;
    def.estimate_workspace = [bytes](const engine::KernelInfo&) -> absl::StatusOr<size_t> {
      return bytes;
    };
  }
  return def;
}

// Builds an engine::Graph directly. Values are float32; a dim of -1 is unknown. Weights are
// views with no data (only their size matters here); the builder owns them, so it must outlive
// the graph it returns by reference.
class GraphBuilder {
 public:
  GraphBuilder& Input(const std::string& name, const std::vector<int64_t>& dims) {
    engine::Value v = MakeValue(name, dims);
    v.is_graph_input = true;
    graph_.inputs.push_back(graph_.AddValue(std::move(v)));
    return *this;
  }
  GraphBuilder& Weight(const std::string& name, const std::vector<int64_t>& dims) {
    engine::Value v = MakeValue(name, dims);
    weights_.push_back(
        engine::Tensor::Borrowed(engine::DataType::kFloat32, engine::Shape(dims), nullptr));
    v.initializer = &weights_.back();
    graph_.AddValue(std::move(v));
    return *this;
  }
  // Adds a node reading `inputs` and making `outputs`, each of shape `out_dims`; returns its
  // index.
  int Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
           const std::vector<std::string>& outputs, const std::vector<int64_t>& out_dims) {
    engine::Node n;
    n.name = name;
    n.op_type = op;
    n.opset = 17;
    for (const std::string& in : inputs) n.inputs.push_back(graph_.FindValue(in));
    for (const std::string& out : outputs) {
      n.outputs.push_back(graph_.AddValue(MakeValue(out, out_dims)));
    }
    graph_.nodes.push_back(std::move(n));
    return static_cast<int>(graph_.nodes.size()) - 1;
  }
  GraphBuilder& Output(const std::string& name) {
    const int v = graph_.FindValue(name);
    graph_.values[v].is_graph_output = true;
    graph_.outputs.push_back(v);
    return *this;
  }
  engine::Graph& graph() {
    graph_.RebuildEdges();
    return graph_;
  }

 private:
  static engine::Value MakeValue(const std::string& name, const std::vector<int64_t>& dims) {
    engine::Value v;
    v.name = name;
    v.type = engine::DataType::kFloat32;
    v.shape.rank_known = true;
    for (int64_t d : dims) {
      engine::DimInfo di;
      di.value = d;
      v.shape.dims.push_back(di);
    }
    return v;
  }
  engine::Graph graph_;
  std::deque<engine::Tensor> weights_;
};

}  // namespace inferd::partition::testing

#endif  // INFERD_PARTITION_TESTING_TEST_UTIL_H_

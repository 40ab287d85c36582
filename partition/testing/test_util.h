// Test helpers for partition/: a fake workspace estimator whose kernels have a chosen workspace
// estimate, and a hand-built graph IR whose costs are easy to compute by hand. Tests only.
#ifndef INFERD_PARTITION_TESTING_TEST_UTIL_H_
#define INFERD_PARTITION_TESTING_TEST_UTIL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/graph.h"
#include "engine/tensor.h"
#include "engine/workspace_estimate.h"
#include "partition/device.h"
#include "partition/plan_report.h"
#include "partition/resource_accountant.h"

namespace inferd::partition::testing {

// A kernel for (`op`, any domain, opset and type) on `device_type` ("cpu", "cuda"); its
// workspace estimate is `estimate` bytes, or there is none (nullopt: the 1.5x heuristic).
struct FakeKernel {
  std::string op;
  std::string device_type;
  std::optional<uint64_t> estimate;
};

inline FakeKernel FakeDef(const std::string& op, const std::string& device_type,
                          std::optional<uint64_t> estimate) {
  return FakeKernel{op, device_type, estimate};
}

// Estimates from the fake kernels registered, by (op, device type); nullopt for any other node.
class FakeEstimator : public engine::WorkspaceEstimator {
 public:
  absl::Status Register(const FakeKernel& k) {
    if (!kernels_.emplace(std::make_pair(k.op, k.device_type), k.estimate).second) {
      return absl::AlreadyExistsError(absl::StrCat(k.op, " on ", k.device_type, " twice"));
    }
    return absl::OkStatus();
  }
  std::optional<uint64_t> EstimateWorkspace(const engine::Graph& graph, int node,
                                            absl::string_view device) const override {
    auto it = kernels_.find({graph.nodes[node].op_type, DeviceType(device)});
    if (it == kernels_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, std::optional<uint64_t>> kernels_;
};

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

// Costs of every node on its device, in graph order, as the partitioner accounts them.
inline PlanInputs Inputs(const engine::Graph& g, const testing::FakeEstimator& registry,
                         const std::vector<DeviceSpec>& devices,
                         const std::vector<std::string>& dev) {
  PlanInputs in;
  in.graph = &g;
  in.devices = devices;
  in.fallback_device = "cpu:0";
  in.mode = "test";
  in.node_device = dev;
  std::vector<std::unique_ptr<ResourceAccountant>> accts;
  for (const DeviceSpec& d : devices) {
    accts.push_back(std::make_unique<ResourceAccountant>(g, registry, d.name, d.budget_bytes));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (size_t d = 0; d < devices.size(); ++d) {
      if (devices[d].name != dev[i]) continue;
      in.node_costs.push_back(accts[d]->AddPending(static_cast<int>(i)));
      accts[d]->CommitPending();
    }
  }
  return in;
}

}  // namespace inferd::partition::testing

#endif  // INFERD_PARTITION_TESTING_TEST_UTIL_H_

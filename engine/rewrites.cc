#include "engine/rewrites.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::engine {
namespace {

// The single node reading `value`, or -1 (none, several, or a graph output).
int SoleConsumer(const Graph& g, int value) {
  const Value& v = g.values[value];
  if (v.is_graph_output || v.consumers.size() != 1) return -1;
  return v.consumers[0].first;
}

bool IsOnnxOp(const Node& n, absl::string_view op) { return n.domain.empty() && n.op_type == op; }

// True if `bias` is a weight whose elements all lie along the last dim and number `n`.
bool IsLastDimBias(const Value& bias, int64_t n) {
  if (bias.initializer == nullptr || bias.type != DataType::kFloat32) return false;
  const Shape& s = bias.initializer->shape();
  if (s.rank() == 0 || s[s.rank() - 1] != n) return false;
  return s.NumElements() == n;
}

Node Fused(const Node& first, const Node& second, absl::string_view op, absl::string_view suffix) {
  Node f;
  f.name = FusedNodeName(first.name, suffix);
  f.op_type = std::string(op);
  f.domain = kInferdDomain;
  f.opset = 1;
  f.outputs = second.outputs;
  f.metadata = first.metadata;
  f.device = first.device;
  return f;
}

}  // namespace

absl::StatusOr<int> ApplyFusions(Graph& g, const KernelRegistry& registry) {
  const bool matmul_add = registry.HasOp(kInferdDomain, "FusedMatMul");
  const bool conv_relu = registry.HasOp(kInferdDomain, "FusedConv");
  g.RebuildEdges();
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<std::pair<size_t, Node>> replacements;  // (position of the first node, fused node)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& first = g.nodes[i];
    if (!keep[i] || first.outputs.size() != 1 || first.outputs[0] < 0) continue;
    const int next = SoleConsumer(g, first.outputs[0]);
    if (next < 0 || !keep[next] || g.nodes[next].device != first.device) continue;
    const Node& second = g.nodes[next];
    if (matmul_add && IsOnnxOp(first, "MatMul") && IsOnnxOp(second, "Add") &&
        first.inputs.size() == 2 && second.inputs.size() == 2) {
      const Value& mid = g.values[first.outputs[0]];
      if (mid.type != DataType::kFloat32 || !mid.shape.rank_known || mid.shape.dims.size() < 2) {
        continue;
      }
      const DimInfo& last = mid.shape.dims.back();
      const int bias = second.inputs[0] == first.outputs[0] ? second.inputs[1] : second.inputs[0];
      if (!last.known() || bias < 0 || !IsLastDimBias(g.values[bias], last.value)) continue;
      Node f = Fused(first, second, "FusedMatMul", kMatMulAddSuffix);
      f.inputs = {first.inputs[0], first.inputs[1], bias};
      replacements.emplace_back(i, std::move(f));
      keep[i] = keep[next] = false;
    } else if (conv_relu && IsOnnxOp(first, "Conv") && IsOnnxOp(second, "Relu") &&
               g.values[first.outputs[0]].type == DataType::kFloat32) {
      Node f = Fused(first, second, "FusedConv", kConvReluSuffix);
      f.inputs = first.inputs;
      f.attributes = first.attributes;
      onnx::AttributeProto act;
      act.set_name("activation");
      act.set_type(onnx::AttributeProto::STRING);
      act.set_s("Relu");
      f.attributes.push_back(std::move(act));
      replacements.emplace_back(i, std::move(f));
      keep[i] = keep[next] = false;
    }
  }
  if (replacements.empty()) return 0;
  std::vector<Node> nodes;
  size_t r = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (r < replacements.size() && replacements[r].first == i) {
      nodes.push_back(std::move(replacements[r++].second));
    }
    if (keep[i]) nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  INFERD_RETURN_IF_ERROR(g.TopologicalSort());
  INFERD_RETURN_IF_ERROR(g.Validate());
  return static_cast<int>(replacements.size());
}

}  // namespace inferd::engine

#include "engine/device_copies.h"

#include <cassert>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/control_flow.h"
#include "engine/copy.h"
#include "partition/boundary_copies.h"

namespace inferd::engine {
namespace {

// Copies its input into a buffer of the device it runs on (host to host: one memcpy, counted).
class DeviceCopyKernel final : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr) return absl::InvalidArgumentError("DeviceCopy without input");
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, in->dtype(), in->shape()));
    CopyPayload(out->raw_mutable_data(), in->raw_data(), in->bytes());
    return absl::OkStatus();
  }
};

// If: runs then_branch or else_branch; the branch's outputs become the node's outputs.
class IfKernel final : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* cond = ctx.input(0);
    if (cond == nullptr || cond->NumElements() != 1 || cond->dtype() != DataType::kBool) {
      return absl::InvalidArgumentError("the condition must be a single bool");
    }
    SubgraphRunner* runner = ctx.subgraphs();
    if (runner == nullptr) return absl::InternalError("If without subgraph plans");
    return runner->RunSubgraph(cond->data<uint8_t>()[0] != 0 ? "then_branch" : "else_branch");
  }
};

template <typename K>
KernelDef EngineDef(const char* domain, const char* op, int since) {
  KernelDef def;
  def.domain = domain;
  def.op_type = op;
  def.since_version = since;
  def.device_type = "cpu";
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<K>();
  };
  return def;
}

}  // namespace

const KernelRegistry& EngineKernels() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status st = r->Register(EngineDef<DeviceCopyKernel>(kInferdDomain, kDeviceCopyOp, 1));
    st.Update(r->Register(EngineDef<IfKernel>(kOnnxDomain, "If", 1)));
    st.Update(RegisterControlFlowKernels(*r));
    assert(st.ok());
    return r;
  }();
  return *registry;
}

absl::StatusOr<int> InsertDeviceCopies(Graph& g) {
  g.RebuildEdges();
  std::vector<std::string> node_device;
  for (const Node& n : g.nodes) node_device.push_back(n.device);
  const std::vector<partition::BoundaryCopy> copies = partition::FindBoundaryCopies(g, node_device);
  std::map<std::pair<int, std::string>, int> copy_of;  // (value, device) -> the copy's value
  std::vector<std::pair<int, Node>> copy_nodes;        // (first reader, copy node)
  for (const partition::BoundaryCopy& c : copies) {
    if (c.from == "host") {
      return absl::UnimplementedError(absl::StrCat("input '", c.value_name, "' would have to be ",
                                                   "uploaded to ", c.to,
                                                   ", which this build cannot do"));
    }
    const Value& v = g.values[c.value];
    Value copy;
    copy.name = absl::StrCat(v.name, "/copy_to_", c.to);
    copy.type = v.type;
    copy.shape = v.shape;
    if (g.FindValue(copy.name) >= 0) {
      return absl::InternalError(absl::StrCat("value name '", copy.name, "' is taken"));
    }
    const int out = g.AddValue(std::move(copy));
    Node node;
    node.name = g.values[out].name;
    node.op_type = kDeviceCopyOp;
    node.domain = kInferdDomain;
    node.opset = 1;
    node.inputs = {c.value};
    node.outputs = {out};
    node.device = c.to;
    copy_nodes.emplace_back(c.first_reader, std::move(node));
    copy_of[{c.value, c.to}] = out;
  }
  // Each copy just before its first reader (the copies are sorted by first reader), so that it
  // lives no longer than it must and the order is the one the partitioner planned.
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + copy_nodes.size());
  size_t next_copy = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    while (next_copy < copy_nodes.size() && copy_nodes[next_copy].first == static_cast<int>(i)) {
      nodes.push_back(std::move(copy_nodes[next_copy++].second));
    }
    nodes.push_back(std::move(g.nodes[i]));
  }
  g.nodes = std::move(nodes);
  for (Node& n : g.nodes) {
    if (n.op_type == kDeviceCopyOp && n.domain == kInferdDomain) continue;
    auto rewire = [&](int& input) {
      if (input < 0) return;
      auto it = copy_of.find({input, n.device});
      if (it != copy_of.end()) input = it->second;
    };
    for (int& input : n.inputs) rewire(input);
    for (int& input : n.implicit_inputs) rewire(input);
  }
  INFERD_RETURN_IF_ERROR(g.TopologicalSort());
  INFERD_RETURN_IF_ERROR(g.Validate());
  return static_cast<int>(copies.size());
}

}  // namespace inferd::engine

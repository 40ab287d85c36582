#include "engine/device_copies.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/control_flow.h"
#include "engine/copy.h"
#include "engine/device_runtime.h"
#include "engine/kernel_io.h"
#include "partition/boundary_copies.h"
#include "partition/device.h"

namespace inferd::engine {
namespace {

// Copies its input into a buffer of the device it runs on, through the run's streams: host to
// host with one memcpy; host to device in this device's stream order; device to host by the
// source device's stream, which is then synchronized, since the host reads the bytes next.
class DeviceCopyKernel final : public OpKernel {
 public:
  absl::Status Compute(KernelContext& ctx) const override {
    const Tensor* in = ctx.input(0);
    if (in == nullptr) return absl::InvalidArgumentError("DeviceCopy without input");
    DeviceStream* from = ctx.input_stream(0);
    DeviceStream* to = ctx.device_stream();
    if (in->is_string()) {  // heap strings (docs/strings.md): host devices only
      if (from != nullptr || to != nullptr) {
        return absl::UnimplementedError("string tensors live on the host only");
      }
      return ctx.SetOutput(0, Tensor::StringsCopy(*in, in->shape()));
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * out, ctx.MakeOutputTensor(0, in->dtype(), in->shape()));
    const size_t bytes = in->bytes();
    if (bytes == 0) return absl::OkStatus();
    if (from == nullptr && to == nullptr) {
      CopyPayload(out->raw_mutable_data(), in->raw_data(), bytes);
      return absl::OkStatus();
    }
    if (from == nullptr) return to->CopyToDevice(out->raw_mutable_data(), in->raw_data(), bytes);
    if (to == from) return to->CopyOnDevice(out->raw_mutable_data(), in->raw_data(), bytes);
    if (to != nullptr) {
      return absl::UnimplementedError("a copy between two devices the host cannot read");
    }
    INFERD_RETURN_IF_ERROR(from->CopyToHost(out->raw_mutable_data(), in->raw_data(), bytes));
    return from->Synchronize();
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
KernelDef EngineDef(const char* domain, const char* op, int since, DeviceKind device = "cpu") {
  KernelDef def;
  def.domain = domain;
  def.op_type = op;
  def.since_version = since;
  def.device_type = device;
  def.create = [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<OpKernel>> {
    return std::make_unique<K>();
  };
  return def;
}

bool IsCopyNode(const Node& n) { return n.op_type == kDeviceCopyOp && n.domain == kInferdDomain; }

// A DeviceCopy of `value` (named `value_name`) into `out`, on `device`.
Node CopyNode(const std::string& value_name, int value, int out, const std::string& device) {
  Node node;
  node.name = absl::StrCat(value_name, "/copy_to_", device);
  node.op_type = kDeviceCopyOp;
  node.domain = kInferdDomain;
  node.opset = 1;
  node.inputs = {value};
  node.outputs = {out};
  node.device = device;
  return node;
}

}  // namespace

const KernelRegistry& EngineKernels() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status st = r->Register(EngineDef<DeviceCopyKernel>(kInferdDomain, kDeviceCopyOp, 1));
    st.Update(r->Register(
        EngineDef<DeviceCopyKernel>(kInferdDomain, kDeviceCopyOp, 1, DeviceKind::kCuda)));
    st.Update(r->Register(EngineDef<IfKernel>(kOnnxDomain, "If", 1)));
    st.Update(RegisterControlFlowKernels(*r));
    assert(st.ok());
    return r;
  }();
  return *registry;
}

namespace {

// Whether `n` reads nothing of its inputs but their shapes (by the ONNX definition of its op).
bool ReadsShapeOnly(const Node& n) {
  return (n.domain.empty() || n.domain == kOnnxDomain) &&
         (n.op_type == "Shape" || n.op_type == "Size");
}

// The inputs the kernel of `n` reads on the host: its KernelDef::host_inputs on a device the host
// cannot read; none on host devices, nor without a kernel (the plan refuses such a node later).
std::vector<int> HostInputs(const Graph& g, const Node& n, const KernelRegistry& registry) {
  if (n.device.empty() || partition::IsHostDevice(n.device)) return {};
  const KernelDef* def = FindNodeKernel({&EngineKernels(), &registry}, n, NodeIoOf(g, n),
                                        partition::DeviceType(n.device));
  return def == nullptr ? std::vector<int>() : def->host_inputs;
}

}  // namespace

absl::StatusOr<DeviceCopies> InsertDeviceCopies(Graph& g, const KernelRegistry& registry,
                                                const std::string& host_device) {
  g.RebuildEdges();
  DeviceCopies result;
  const size_t original_nodes = g.nodes.size();
  // pass 1: graph outputs made where the host cannot read them: renamed there, copied back
  // under their own name by a copy on the host device, placed right after their producer.
  std::map<int, int> output_copy;      // device value -> host value with the output's name
  std::vector<int> output_copy_after;  // by appended copy node: its producer's index
  for (int& out : g.outputs) {
    if (g.values[out].producer < 0) continue;
    const int producer = g.values[out].producer;
    const std::string device = g.nodes[producer].device;
    if (partition::IsHostDevice(device)) continue;
    if (auto it = output_copy.find(out); it != output_copy.end()) {  // an output listed twice
      out = it->second;
      continue;
    }
    const std::string name = g.values[out].name;
    const std::string renamed = absl::StrCat(name, "/on_", device);
    if (g.FindValue(renamed) >= 0) {
      return absl::InternalError(absl::StrCat("value name '", renamed, "' is taken"));
    }
    g.RenameValue(out, renamed);
    g.values[out].is_graph_output = false;
    Value host;
    host.name = name;
    host.type = g.values[out].type;
    host.kind = g.values[out].kind;
    host.shape = g.values[out].shape;
    host.is_graph_output = true;
    const int host_value = g.AddValue(std::move(host));
    // Readers on the host device read the copy (no second copy of the same bytes).
    for (Node& n : g.nodes) {
      if (n.device != host_device) continue;
      for (int& input : n.inputs) {
        if (input == out) input = host_value;
      }
    }
    g.nodes.push_back(CopyNode(name, out, host_value, host_device));
    output_copy_after.push_back(producer);
    output_copy[out] = host_value;
    out = host_value;
    ++result.output_copies;
  }
  g.RebuildEdges();
  // Which memory each node input is read from.
  std::vector<std::vector<int>> host_inputs(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) host_inputs[i] = HostInputs(g, g.nodes[i], registry);
  const partition::ReaderDeviceFn reader_device = [&](int node, int input) -> std::string {
    const Node& n = g.nodes[node];
    if (IsCopyNode(n)) return "";  // reads its input wherever it is
    // Shape and Size read their input's shape, which the host knows wherever the data is.
    if (ReadsShapeOnly(n)) return "";
    if (std::find(host_inputs[node].begin(), host_inputs[node].end(), input) !=
        host_inputs[node].end()) {
      return host_device;
    }
    return n.device;
  };
  // pass 2: weights read where the host cannot read them: one uploaded copy per device.
  std::map<std::pair<int, std::string>, int> uploaded;  // (weight, device) -> device value
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      const int w = g.nodes[i].inputs[k];
      if (w < 0 || g.values[w].initializer == nullptr || !g.values[w].resident_device.empty()) {
        continue;
      }
      const std::string device = reader_device(static_cast<int>(i), static_cast<int>(k));
      if (device.empty() || partition::IsHostDevice(device)) continue;
      auto [it, inserted] = uploaded.emplace(std::make_pair(w, device), -1);
      if (inserted) {
        Value copy = g.values[w];
        copy.name = absl::StrCat(g.values[w].name, "/on_", device);
        copy.consumers.clear();
        copy.resident_device = device;
        if (g.FindValue(copy.name) >= 0) {
          return absl::InternalError(absl::StrCat("value name '", copy.name, "' is taken"));
        }
        it->second = g.AddValue(std::move(copy));
        result.uploads.push_back(WeightUpload{w, it->second, device});
      }
      g.nodes[i].inputs[k] = it->second;
    }
  }
  g.RebuildEdges();
  // pass 3: values read on another device than the one that made them.
  std::vector<std::string> node_device;
  for (const Node& n : g.nodes) node_device.push_back(n.device);
  const std::vector<partition::BoundaryCopy> copies =
      partition::FindBoundaryCopies(g, node_device, reader_device);
  std::map<std::pair<int, std::string>, int> copy_of;  // (value, device) -> the copy's value
  std::vector<std::pair<int, Node>> copy_nodes;        // (first reader, copy node)
  for (const partition::BoundaryCopy& c : copies) {
    if (c.from != "host" && !partition::IsHostDevice(c.from) && !partition::IsHostDevice(c.to)) {
      return absl::UnimplementedError(absl::StrCat(
          "value '", c.value_name, "' is made on ", c.from, " and read on ", c.to,
          ": copies between two GPUs are not supported; give both parts to one GPU, or put a "
          "host device between them"));
    }
    const Value& v = g.values[c.value];
    Value copy;
    copy.name = absl::StrCat(v.name, "/copy_to_", c.to);
    copy.type = v.type;
    copy.kind = v.kind;
    copy.shape = v.shape;
    if (g.FindValue(copy.name) >= 0) {
      return absl::InternalError(absl::StrCat("value name '", copy.name, "' is taken"));
    }
    const int out = g.AddValue(std::move(copy));
    copy_nodes.emplace_back(c.first_reader, CopyNode(g.values[c.value].name, c.value, out, c.to));
    copy_of[{c.value, c.to}] = out;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (IsCopyNode(n)) continue;
    auto rewire = [&](int& input, int index) {
      if (input < 0) return;
      auto it = copy_of.find({input, reader_device(static_cast<int>(i), index)});
      if (it != copy_of.end()) input = it->second;
    };
    for (size_t k = 0; k < n.inputs.size(); ++k) rewire(n.inputs[k], static_cast<int>(k));
    for (size_t k = 0; k < n.implicit_inputs.size(); ++k) {
      rewire(n.implicit_inputs[k], static_cast<int>(n.inputs.size() + k));
    }
  }
  // Each boundary copy just before its first reader (the copies are sorted by first reader), so
  // that it lives no longer than it must and the order is the one the partitioner planned; each
  // output copy right after its producer.
  std::vector<std::vector<Node>> after(original_nodes);
  for (size_t k = 0; k < output_copy_after.size(); ++k) {
    after[output_copy_after[k]].push_back(std::move(g.nodes[original_nodes + k]));
  }
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + copy_nodes.size());
  size_t next_copy = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    while (next_copy < copy_nodes.size() && copy_nodes[next_copy].first == static_cast<int>(i)) {
      nodes.push_back(std::move(copy_nodes[next_copy++].second));
    }
    if (i >= original_nodes) continue;  // an output copy, placed after its producer
    nodes.push_back(std::move(g.nodes[i]));
    for (Node& n : after[i]) nodes.push_back(std::move(n));
  }
  while (next_copy < copy_nodes.size()) nodes.push_back(std::move(copy_nodes[next_copy++].second));
  g.nodes = std::move(nodes);
  INFERD_RETURN_IF_ERROR(g.TopologicalSort());
  INFERD_RETURN_IF_ERROR(g.Validate());
  result.copies = static_cast<int>(copies.size());
  return result;
}

}  // namespace inferd::engine

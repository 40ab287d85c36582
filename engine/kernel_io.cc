#include "engine/kernel_io.h"

namespace inferd::engine {

KernelIoInfo KernelIoOf(const Graph& g, int v) {
  KernelIoInfo io;
  if (v < 0) return io;
  const Value& val = g.values[v];
  io.name = val.name;
  io.present = true;
  io.type = val.type;
  io.kind = val.kind;
  io.shape = val.shape;
  io.constant = val.initializer;
  return io;
}

NodeIo NodeIoOf(const Graph& g, const Node& node) {
  NodeIo io;
  for (int v : node.inputs) {
    io.ins.push_back(KernelIoOf(g, v));
    io.in_types.push_back(io.ins.back().type);
  }
  for (int v : node.outputs) {
    io.outs.push_back(KernelIoOf(g, v));
    io.out_types.push_back(io.outs.back().type);
  }
  return io;
}

const KernelDef* FindNodeKernel(std::initializer_list<const KernelRegistry*> registries,
                                const Node& node, const NodeIo& io, DeviceKind device) {
  for (const KernelRegistry* r : registries) {
    if (r == nullptr) continue;
    const KernelDef* def =
        r->Find(node.domain, node.op_type, node.opset, device, io.in_types, io.out_types);
    if (def != nullptr) return def;
  }
  return nullptr;
}

}  // namespace inferd::engine

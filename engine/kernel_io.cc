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

}  // namespace inferd::engine

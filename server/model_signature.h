// ModelSignature: what a client sees of a model: its name and version, and the names, element
// types and shapes (with unknown dims) of the inputs it feeds and the outputs it can ask for.
// Taken once from the Session at load; plain value type, immutable afterwards (thread-safe to
// read).
#ifndef INFERD_SERVER_MODEL_SIGNATURE_H_
#define INFERD_SERVER_MODEL_SIGNATURE_H_

#include <string>
#include <vector>

#include "engine/data_type.h"
#include "engine/session.h"
#include "engine/shape.h"

namespace inferd::server {

struct TensorSpec {
  std::string name;
  engine::DataType type = engine::DataType::kUndefined;
  engine::ShapeInfo shape;
};

struct ModelSignature {
  std::string name;
  std::string version;
  std::vector<TensorSpec> inputs;   // in graph order
  std::vector<TensorSpec> outputs;  // in graph order

  static ModelSignature FromSession(const engine::Session& session, std::string name,
                                    std::string version) {
    ModelSignature s;
    s.name = std::move(name);
    s.version = std::move(version);
    for (const engine::Value* v : session.inputs())
      s.inputs.push_back({v->name, v->type, v->shape});
    for (const engine::Value* v : session.outputs()) {
      s.outputs.push_back({v->name, v->type, v->shape});
    }
    return s;
  }
};

}  // namespace inferd::server

#endif  // INFERD_SERVER_MODEL_SIGNATURE_H_

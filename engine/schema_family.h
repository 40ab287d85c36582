// One family of operator schemas that inferd adds to libonnx's global schema registry: libonnx
// 1.12 stops at opset 17 and knows none of ONNX Runtime's com.microsoft operators, so the loader
// registers the ones inferd runs (engine/schemas.h lists the families). A family's file defines
// its schemas in one function; the family runs it once per process, on first use, and keeps the
// names it added ("domain:Op-version", sorted; the default domain is the empty string) for docs
// and tests.
//
// Thread-safety: Register and Names may be called from any thread; libonnx's registry is only
// read once a family has registered.
#ifndef INFERD_ENGINE_SCHEMA_FAMILY_H_
#define INFERD_ENGINE_SCHEMA_FAMILY_H_

#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "onnx/defs/schema.h"

namespace inferd::engine {

class SchemaFamily {
 public:
  using Define = void (*)();

  // `define` builds the family's schemas (with New) and adds them (with Add). `source` (the
  // defining file, e.g. "engine/quant_schemas.cc") goes into each schema's doc string, so that a
  // checker message about the op says where it came from.
  SchemaFamily(const char* source, Define define) : source_(source), define_(define) {}
  SchemaFamily(const SchemaFamily&) = delete;
  SchemaFamily& operator=(const SchemaFamily&) = delete;

  // Runs the family's definition once per process.
  void Register();

  // Every schema the family added, "domain:Op-version", sorted. Registers first.
  std::vector<std::string> Names();

  // A new schema `name` of `domain` since `version`, documented as "<name> (<what>), registered
  // by inferd (<source>)".
  onnx::OpSchema New(absl::string_view name, const char* domain, int version,
                     absl::string_view what) const;

  // Adds `schema` to libonnx's registry and records its name.
  void Add(onnx::OpSchema&& schema);

  // Makes com.microsoft known to libonnx (versions 1 to 1: ONNX Runtime's contrib operators are
  // all version 1) unless another family did already.
  static void EnsureMicrosoftDomain();

 private:
  const char* const source_;
  const Define define_;
  std::once_flag once_;
  std::vector<std::string> names_;  // written only inside once_
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_SCHEMA_FAMILY_H_

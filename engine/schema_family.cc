#include "engine/schema_family.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/domain.h"

namespace inferd::engine {

void SchemaFamily::Register() {
  std::call_once(once_, [this] {
    define_();
    std::sort(names_.begin(), names_.end());
  });
}

std::vector<std::string> SchemaFamily::Names() {
  Register();
  return names_;
}

onnx::OpSchema SchemaFamily::New(absl::string_view name, const char* domain, int version,
                                 absl::string_view what) const {
  onnx::OpSchema s;
  s.SetName(std::string(name)).SetDomain(domain).SinceVersion(version);
  s.SetDoc(absl::StrCat(name, " (", what, "), registered by inferd (", source_, ")"));
  return s;
}

void SchemaFamily::Add(onnx::OpSchema&& schema) {
  names_.push_back(absl::StrCat(schema.domain(), ":", schema.Name(), "-", schema.SinceVersion()));
  onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(schema);
}

void SchemaFamily::EnsureMicrosoftDomain() {
  // AddDomainToVersion asserts in libonnx's header that the domain is new (the families that
  // call this are built with NDEBUG, engine/BUILD.bazel), so ask first. The loader registers
  // the families one after another (engine/schemas.cc), so the check and the add do not race.
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  if (ranges.Map().count(kMicrosoftDomain) == 0) ranges.AddDomainToVersion(kMicrosoftDomain, 1, 1);
}

}  // namespace inferd::engine

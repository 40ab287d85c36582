#include "engine/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inferd::engine {
namespace {

bool TypesIntersect(const std::vector<DataType>& a, const std::vector<DataType>& b) {
  if (a.empty() || b.empty()) return true;
  for (DataType t : a) {
    if (std::find(b.begin(), b.end(), t) != b.end()) return true;
  }
  return false;
}

DataType KeyType(const KernelDef& d, absl::Span<const DataType> inputs,
                 absl::Span<const DataType> outputs) {
  if (d.type_input >= 0) {
    return d.type_input < static_cast<int>(inputs.size()) ? inputs[d.type_input]
                                                          : DataType::kUndefined;
  }
  return outputs.empty() ? DataType::kUndefined : outputs[0];
}

bool Accepts(const KernelDef& d, int opset, absl::string_view device_type, DataType type) {
  if (opset < d.since_version || opset > d.end_version) return false;
  if (d.device_type != device_type) return false;
  return d.types.empty() || std::find(d.types.begin(), d.types.end(), type) != d.types.end();
}

std::string DomainLabel(absl::string_view domain) {
  return domain.empty() ? "ai.onnx" : std::string(domain);
}

}  // namespace

absl::Status KernelRegistry::Register(KernelDef def) {
  def.domain = NormalizeDomain(def.domain);
  if (!def.create) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", def.op_type, " has no factory"));
  }
  auto& list = defs_[Key(def.domain, def.op_type)];
  for (const KernelDef& other : list) {
    const bool opsets_overlap =
        def.since_version <= other.end_version && other.since_version <= def.end_version;
    if (opsets_overlap && other.device_type == def.device_type &&
        TypesIntersect(other.types, def.types)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "kernel ", DomainLabel(def.domain), "::", def.op_type, " for ", def.device_type,
          " opsets ", def.since_version, "-", def.end_version, " overlaps one already registered"));
    }
  }
  list.push_back(std::move(def));
  return absl::OkStatus();
}

const KernelDef* KernelRegistry::Find(absl::string_view domain, absl::string_view op_type,
                                      int opset, absl::string_view device_type,
                                      absl::Span<const DataType> input_types,
                                      absl::Span<const DataType> output_types) const {
  auto it = defs_.find(Key(NormalizeDomain(domain), std::string(op_type)));
  if (it == defs_.end()) return nullptr;
  for (const KernelDef& d : it->second) {
    if (Accepts(d, opset, device_type, KeyType(d, input_types, output_types))) return &d;
  }
  return nullptr;
}

absl::Status KernelRegistry::Explain(absl::string_view domain, absl::string_view op_type, int opset,
                                     absl::string_view device_type,
                                     absl::Span<const DataType> input_types,
                                     absl::Span<const DataType> output_types,
                                     absl::string_view node_name) const {
  const std::string where = absl::StrCat("node '", node_name, "': operator ", DomainLabel(domain),
                                         "::", op_type, " (opset ", opset, ")");
  auto it = defs_.find(Key(NormalizeDomain(domain), std::string(op_type)));
  if (it == defs_.end()) {
    return absl::UnimplementedError(
        absl::StrCat(where, " is not supported by inferd (no kernel for this operator)"));
  }
  std::vector<std::string> versions, types;
  DataType type = DataType::kUndefined;
  bool device_seen = false;
  for (const KernelDef& d : it->second) {
    if (d.device_type != device_type) continue;
    device_seen = true;
    versions.push_back(d.end_version == INT_MAX
                           ? absl::StrCat(d.since_version, "+")
                           : absl::StrCat(d.since_version, "-", d.end_version));
    if (opset >= d.since_version && opset <= d.end_version) {
      type = KeyType(d, input_types, output_types);
      for (DataType t : d.types) types.push_back(DataTypeName(t));
    }
  }
  if (!device_seen) {
    return absl::UnimplementedError(
        absl::StrCat(where, " has no kernel for device type '", device_type, "'"));
  }
  if (types.empty()) {
    return absl::UnimplementedError(
        absl::StrCat(where, " is supported for opsets ", absl::StrJoin(versions, ", "), " only"));
  }
  return absl::UnimplementedError(absl::StrCat(where, " does not support element type ",
                                               DataTypeName(type),
                                               " (supported: ", absl::StrJoin(types, ", "), ")"));
}

bool KernelRegistry::HasOp(absl::string_view domain, absl::string_view op_type) const {
  return defs_.count(Key(NormalizeDomain(domain), std::string(op_type))) > 0;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::Ops() const {
  std::vector<std::pair<std::string, std::string>> ops;
  for (const auto& [key, list] : defs_) ops.push_back(key);
  return ops;
}

size_t KernelRegistry::size() const {
  size_t n = 0;
  for (const auto& [key, list] : defs_) n += list.size();
  return n;
}

}  // namespace inferd::engine

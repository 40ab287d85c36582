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

bool Accepts(const KernelDef& d, int opset, DataType type) {
  if (opset < d.since_version || opset > d.end_version) return false;
  return d.types.empty() || std::find(d.types.begin(), d.types.end(), type) != d.types.end();
}

std::string DomainLabel(absl::string_view domain) {
  return domain.empty() ? "ai.onnx" : std::string(domain);
}

std::string OpsetLabel(const KernelDef& d) {
  return d.end_version == INT_MAX ? absl::StrCat(d.since_version, "+")
                                  : absl::StrCat(d.since_version, "-", d.end_version);
}

std::vector<std::string> TypeNames(const KernelDef& d) {
  std::vector<std::string> names;
  for (DataType t : d.types) names.push_back(DataTypeName(t));
  return names;
}

}  // namespace

DeviceKind::DeviceKind(absl::string_view name) {
  if (name == "cpu") {
    value_ = kCpu;
  } else if (name == "cuda") {
    value_ = kCuda;
  } else {
    value_ = kInvalid;
  }
}

absl::string_view DeviceKind::name() const {
  switch (value_) {
    case kCpu:
      return "cpu";
    case kCuda:
      return "cuda";
    case kInvalid:
      break;
  }
  return "invalid";
}

absl::Status KernelRegistry::Register(KernelDef def) {
  def.domain = NormalizeDomain(def.domain);
  if (!def.create) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", def.op_type, " has no factory"));
  }
  if (!def.device_type.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", def.op_type, " has an invalid device type (expected cpu or cuda)"));
  }
  auto& list = defs_[Key{def.domain, def.op_type, def.device_type}];
  for (const KernelDef& other : list) {
    const bool opsets_overlap =
        def.since_version <= other.end_version && other.since_version <= def.end_version;
    if (opsets_overlap && TypesIntersect(other.types, def.types)) {
      return absl::AlreadyExistsError(absl::StrCat(
          "kernel ", DomainLabel(def.domain), "::", def.op_type, " for ", def.device_type.name(),
          " opsets ", def.since_version, "-", def.end_version, " overlaps one already registered"));
    }
  }
  list.push_back(std::move(def));
  return absl::OkStatus();
}

const KernelDef* KernelRegistry::Find(absl::string_view domain, absl::string_view op_type,
                                      int opset, DeviceKind device_type,
                                      absl::Span<const DataType> input_types,
                                      absl::Span<const DataType> output_types) const {
  auto it = defs_.find(Key{NormalizeDomain(domain), std::string(op_type), device_type});
  if (it == defs_.end()) return nullptr;
  for (const KernelDef& d : it->second) {
    if (Accepts(d, opset, KeyType(d, input_types, output_types))) return &d;
  }
  return nullptr;
}

absl::Status KernelRegistry::Explain(absl::string_view domain, absl::string_view op_type, int opset,
                                     DeviceKind device_type, absl::Span<const DataType> input_types,
                                     absl::Span<const DataType> output_types,
                                     absl::string_view node_name) const {
  const std::string where = absl::StrCat("node '", node_name, "': operator ", DomainLabel(domain),
                                         "::", op_type, " (opset ", opset, ")");
  if (!HasOp(domain, op_type)) {
    return absl::UnimplementedError(
        absl::StrCat(where, " is not supported by inferd (no kernel for this operator)"));
  }
  auto it = defs_.find(Key{NormalizeDomain(domain), std::string(op_type), device_type});
  if (it == defs_.end()) {
    return absl::UnimplementedError(
        absl::StrCat(where, " has no kernel for device type '", device_type.name(), "'"));
  }
  std::vector<std::string> versions, types;
  DataType type = DataType::kUndefined;
  for (const KernelDef& d : it->second) {
    versions.push_back(OpsetLabel(d));
    if (opset >= d.since_version && opset <= d.end_version) {
      type = KeyType(d, input_types, output_types);
      for (DataType t : d.types) types.push_back(DataTypeName(t));
    }
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
  const Key first{NormalizeDomain(domain), std::string(op_type), DeviceKind(DeviceKind::kCpu)};
  auto it = defs_.lower_bound(first);
  return it != defs_.end() && it->first.domain == first.domain && it->first.op == first.op;
}

std::vector<std::pair<std::string, std::string>> KernelRegistry::Ops() const {
  std::vector<std::pair<std::string, std::string>> ops;
  for (const auto& [key, list] : defs_) {
    if (ops.empty() || ops.back().first != key.domain || ops.back().second != key.op) {
      ops.emplace_back(key.domain, key.op);
    }
  }
  return ops;
}

std::vector<const KernelDef*> KernelRegistry::Defs() const {
  std::vector<const KernelDef*> all;
  for (const auto& [key, list] : defs_) {
    const size_t first = all.size();
    for (const KernelDef& d : list) all.push_back(&d);
    // Within one (domain, op, device): by opset range, then by types (registration order is not
    // part of the listing's contract).
    std::sort(all.begin() + first, all.end(), [](const KernelDef* a, const KernelDef* b) {
      if (a->since_version != b->since_version) return a->since_version < b->since_version;
      if (a->end_version != b->end_version) return a->end_version < b->end_version;
      return a->types < b->types;
    });
  }
  return all;
}

size_t KernelRegistry::size() const {
  size_t n = 0;
  for (const auto& [key, list] : defs_) n += list.size();
  return n;
}

std::string FormatKernelTable(const KernelRegistry& registry) {
  std::vector<std::vector<std::string>> rows = {{"DOMAIN", "OP", "OPSETS", "DEVICE", "TYPES"}};
  for (const KernelDef* d : registry.Defs()) {
    std::string types = d->types.empty() ? "any" : absl::StrJoin(TypeNames(*d), ", ");
    if (d->type_input < 0) absl::StrAppend(&types, " (on output 0)");
    if (d->type_input > 0) absl::StrAppend(&types, " (on input ", d->type_input, ")");
    rows.push_back({DomainLabel(d->domain), d->op_type, OpsetLabel(*d),
                    std::string(d->device_type.name()), std::move(types)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c + 1 < row.size(); ++c) {
      absl::StrAppend(&out, row[c], std::string(width[c] - row[c].size() + 2, ' '));
    }
    absl::StrAppend(&out, row.back(), "\n");
  }
  return out;
}

std::string FormatKernelJson(const KernelRegistry& registry) {
  // Names are ONNX identifiers and type names (no quotes, backslashes or control characters), so
  // they are written as they are.
  auto quoted = [](absl::string_view s) { return absl::StrCat("\"", s, "\""); };
  std::vector<std::string> objects;
  for (const KernelDef* d : registry.Defs()) {
    std::vector<std::string> types;
    for (const std::string& t : TypeNames(*d)) types.push_back(quoted(t));
    objects.push_back(absl::StrCat(
        "{\"domain\": ", quoted(DomainLabel(d->domain)), ", \"op\": ", quoted(d->op_type),
        ", \"since_version\": ", d->since_version,
        ", \"end_version\": ", d->end_version == INT_MAX ? "null" : absl::StrCat(d->end_version),
        ", \"device\": ", quoted(d->device_type.name()), ", \"types\": [",
        absl::StrJoin(types, ", "), "], \"type_input\": ", d->type_input, "}"));
  }
  if (objects.empty()) return "[]\n";
  return absl::StrCat("[\n  ", absl::StrJoin(objects, ",\n  "), "\n]\n");
}

}  // namespace inferd::engine

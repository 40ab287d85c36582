#include "server/kserve_types.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inferd::server {
namespace {

using engine::DataType;

struct Entry {
  const char* name;
  DataType type;
};

constexpr Entry kTypes[] = {
    {"BOOL", DataType::kBool},     {"UINT8", DataType::kUint8},   {"UINT16", DataType::kUint16},
    {"UINT32", DataType::kUint32}, {"UINT64", DataType::kUint64}, {"INT8", DataType::kInt8},
    {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},   {"INT64", DataType::kInt64},
    {"FP16", DataType::kFloat16},  {"BF16", DataType::kBFloat16}, {"FP32", DataType::kFloat32},
    {"FP64", DataType::kFloat64},  {"BYTES", DataType::kString},
};

}  // namespace

std::optional<DataType> DataTypeFromKServe(absl::string_view name) {
  for (const Entry& e : kTypes) {
    if (name == e.name) return e.type;
  }
  return std::nullopt;
}

const char* KServeDataTypeName(DataType type) {
  for (const Entry& e : kTypes) {
    if (type == e.type) return e.name;
  }
  return "INVALID";
}

const char* KServeDataTypeList() {
  return "BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, BF16, FP32, "
         "FP64, BYTES";
}

std::vector<int64_t> KServeShape(const engine::ShapeInfo& info) {
  std::vector<int64_t> dims;
  if (!info.rank_known) return dims;
  for (const engine::DimInfo& d : info.dims) dims.push_back(d.known() ? d.value : -1);
  return dims;
}

}  // namespace inferd::server

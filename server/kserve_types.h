// KServe v2 datatype strings ("FP32", "INT64", ...) and their engine element types, and shape
// text for messages. Pure functions; thread-safe.
#ifndef INFERD_SERVER_KSERVE_TYPES_H_
#define INFERD_SERVER_KSERVE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "engine/data_type.h"
#include "engine/shape.h"

namespace inferd::server {

// "FP32" -> kFloat32, "BYTES" -> kString, ...; nullopt for anything else (case-sensitive).
std::optional<engine::DataType> DataTypeFromKServe(absl::string_view name);
// kFloat32 -> "FP32", kString -> "BYTES"; "INVALID" for kUndefined.
const char* KServeDataTypeName(engine::DataType type);
// "BOOL, UINT8, ..., BYTES", for messages.
const char* KServeDataTypeList();

// "[1,3,224,224]"; for shapes as received (any int64, even negative).
std::string DimsToString(absl::Span<const int64_t> dims);
// The KServe shape of a model's tensor: known dims as themselves, unknown dims as -1; an unknown
// rank gives an empty shape.
std::vector<int64_t> KServeShape(const engine::ShapeInfo& info);

}  // namespace inferd::server

#endif  // INFERD_SERVER_KSERVE_TYPES_H_

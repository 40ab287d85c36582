// KServe v2 datatype strings ("FP32", "INT64", ...) and their engine element types, and the text
// of client-sent values in error messages. Pure functions; thread-safe.
//
// Every value a client sent that an error message echoes is bounded here: a client controls its
// size, and an unbounded echo turns a rank-100000 shape into a 200 KB message, which the client's
// default 4 MiB-or-less limits then report as a confusing RESOURCE_EXHAUSTED.
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

// The KServe shape of a model's tensor: known dims as themselves, unknown dims as -1; an unknown
// rank gives an empty shape.
std::vector<int64_t> KServeShape(const engine::ShapeInfo& info);

}  // namespace inferd::server

#endif  // INFERD_SERVER_KSERVE_TYPES_H_

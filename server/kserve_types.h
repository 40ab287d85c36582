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

// At most this many dims of a shape, and this many bytes of a name, appear in a message; a whole
// message is cut to kMaxMessageBytes.
inline constexpr size_t kMaxEchoedDims = 8;
inline constexpr size_t kMaxEchoedNameBytes = 64;
inline constexpr size_t kMaxMessageBytes = 2048;

// "[1,3,224,224]"; for shapes as received (any int64, even negative). A shape of more than
// kMaxEchoedDims dims shows its first ones: "[1,1,1,1,1,1,1,1,... (rank 100000)]".
std::string DimsToString(absl::Span<const int64_t> dims);
// A client-sent name for a message, quoted: 'x'. Bytes outside printable ASCII (and ' and \)
// are C-escaped (\n, \x00); a name longer than kMaxEchoedNameBytes shows its first bytes:
// 'aaaa...'... (100000 bytes).
std::string QuoteName(absl::string_view name);
// `message` if it has at most kMaxMessageBytes, else its first bytes and "... (N bytes in all)"
// (cut at a UTF-8 character boundary).
std::string BoundMessage(absl::string_view message);
// The KServe shape of a model's tensor: known dims as themselves, unknown dims as -1; an unknown
// rank gives an empty shape.
std::vector<int64_t> KServeShape(const engine::ShapeInfo& info);

}  // namespace inferd::server

#endif  // INFERD_SERVER_KSERVE_TYPES_H_

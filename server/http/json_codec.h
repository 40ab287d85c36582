// The JSON side of inferd's KServe v2 / Triton HTTP front end, without any HTTP: the /infer
// request body (JSON tensors and Triton's binary tensor data extension) into an InferRequest, an
// InferResult into the response's JSON header plus the binary outputs to send after it, and
// protobuf messages (Triton's ModelConfig, ModelStatistics) as JSON with numbers as JSON numbers.
//
// Request body: a JSON header, followed (when the Inference-Header-Content-Length header is
// given) by the binary data of every input with `parameters.binary_data_size`, in input order.
//   {"id": "1", "parameters": {"binary_data_output": true, "timeout": 1000000},
//    "inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [[1, 2, 3, 4]]},
//               {"name": "y", "datatype": "FP16", "shape": [2],
//                "parameters": {"binary_data_size": 4}}],
//    "outputs": [{"name": "probs", "parameters": {"binary_data": true}}]}
// `data` is flat or nested (row-major), numbers for the numeric types, true/false for BOOL,
// strings for BYTES; FP16 and BF16 only travel as binary data. Every input becomes one raw view
// of InferRequest::FromParts: binary data is borrowed in place from the body (the body is the
// request's keepalive), JSON data is converted into a buffer the keepalive also holds.
//
// Response: the JSON header {"model_name", "model_version", "id", "outputs": [...]}; a binary
// output has `parameters.binary_data_size` and its bytes follow the header in output order
// (straight from the output's IOLease: nothing is copied), a JSON output has a flat `data`.
//
// Pure functions; thread-safe.
#ifndef INFERD_SERVER_HTTP_JSON_CODEC_H_
#define INFERD_SERVER_HTTP_JSON_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/infer_job.h"
#include "server/request_reader.h"

namespace inferd::server::http {

// How deep a request's JSON may nest (objects and arrays): a tensor of rank 32 fits.
inline constexpr int kMaxJsonDepth = 40;

// An /infer request, ready for SubmitInfer.
struct ParsedInfer {
  std::unique_ptr<InferRequest> request;
  // Per output name asked for: whether it goes as binary data; outputs not named use
  // default_binary (the request's `binary_data_output`, else false).
  std::vector<std::pair<std::string, bool>> output_binary;
  bool default_binary = false;
  // Triton's `timeout` parameter (microseconds), if given.
  std::optional<absl::Duration> timeout;
};

// Parses the body of POST /v2/models/<model>[/versions/<version>]/infer. `header_length`: the
// Inference-Header-Content-Length (nullopt: the whole body is JSON). INVALID_ARGUMENT with a
// message a client can act on for anything malformed.
absl::StatusOr<ParsedInfer> ParseInferRequest(absl::string_view model, absl::string_view version,
                                              std::shared_ptr<const std::string> body,
                                              std::optional<uint64_t> header_length);

// The response to send: the JSON header, then `binary` (views into the result's leases).
struct EncodedInfer {
  std::string json;
  std::vector<absl::Span<const uint8_t>> binary;
  uint64_t binary_bytes = 0;
};

// Encodes `result` as `parsed` asked (binary or JSON per output). The views in `binary` point into
// result.outputs' leases: keep `result` alive while they are sent. INVALID_ARGUMENT when an output
// cannot be written as JSON (BYTES whose length prefixes do not add up).
absl::StatusOr<EncodedInfer> EncodeInferResponse(const InferResult& result,
                                                 const ParsedInfer& parsed);

// `message` as JSON: proto field names, every singular field (defaults too, like Triton's
// config JSON), repeated fields as arrays, maps as objects, enums by name, 64-bit integers as
// JSON numbers (perf_analyzer and tritonclient read them with rapidjson's GetInt64/GetUint64).
std::string ProtoToJson(const google::protobuf::Message& message);

// {"error": "<message>"}.
std::string ErrorJson(absl::string_view message);

// Whether `json` nests deeper than `max_depth` (strings are skipped, so brackets in strings do
// not count).
bool NestsDeeperThan(absl::string_view json, int max_depth);

// The HTTP status Triton answers for an absl status code (OK: 200).
int HttpStatusOf(absl::StatusCode code);

}  // namespace inferd::server::http

#endif  // INFERD_SERVER_HTTP_JSON_CODEC_H_

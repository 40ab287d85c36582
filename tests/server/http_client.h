// Client-side helpers for the HTTP/REST end-to-end tests: a plain HTTP/1.1 exchange over a
// socket (no library between the test and the bytes), the /infer body of a gRPC request in
// Triton's binary tensor data format, and the /infer response read back as a
// ModelInferResponse (so infer_client.h's CheckOutputs can compare it to the references).
//
// Thread-compatible.
#ifndef INFERD_TESTS_SERVER_HTTP_CLIENT_H_
#define INFERD_TESTS_SERVER_HTTP_CLIENT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/inference.pb.h"

namespace inferd::testing {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// Connects to 127.0.0.1:`port`, sends one request (Connection: close) and reads the reply to the
// end.
absl::StatusOr<HttpReply> HttpCall(
    int port, const std::string& method, const std::string& path, const std::string& body = "",
    const std::vector<std::pair<std::string, std::string>>& headers = {});

// A whole HTTP/1.1 reply (status line, headers, body up to the end of `bytes`).
absl::StatusOr<HttpReply> ParseHttpReply(const std::string& bytes);

// The raw HTTP request bytes (for tests that send them on a socket of their own).
std::string HttpRequestBytes(const std::string& method, const std::string& path,
                             const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& headers);

// The body of an /infer request with `request`'s inputs as binary data (raw_input_contents), and
// the JSON header's length; `binary_outputs`: ask for every output as binary data.
std::pair<std::string, size_t> BinaryInferBody(const inference::ModelInferRequest& request,
                                               bool binary_outputs);

// The /infer response as a ModelInferResponse: binary outputs and FP32 JSON outputs become
// raw_output_contents.
absl::StatusOr<inference::ModelInferResponse> ParseInferReply(const HttpReply& reply);

}  // namespace inferd::testing

#endif  // INFERD_TESTS_SERVER_HTTP_CLIENT_H_

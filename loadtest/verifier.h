// Verifier: checks every ModelInfer response the load generator receives, without copying the
// outputs (they are compared as views of gRPC's receive slices, see wire.h).
//
// Always: the response parses; one raw_output_contents entry per output; each entry's size is the
// output's element count times its datatype's size; when the model's metadata is known, each
// output exists there with the same datatype and rank, and fixed dims match; when outputs were
// requested by name, exactly those came back. Then, by mode:
//   kFirst      the first OK response to each request template becomes that template's reference;
//               later responses must match it (names, datatypes, shapes, bytes; floats within
//               rtol/atol when a tolerance is set, else bit for bit).
//   kEcho       output k equals input k of the request (datatype, shape, bytes): an echo server,
//               or an Identity model.
//   kReference  each output named in the references equals the .npy data (floats within
//               rtol/atol); only with a single request template.
//   kNone       the checks above only.
//
// Thread-safe: Check may run on many threads at once.
#ifndef INFERD_LOADTEST_VERIFIER_H_
#define INFERD_LOADTEST_VERIFIER_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/npy.h"
#include "loadtest/request_builder.h"
#include "loadtest/wire.h"
#include "proto/inference.pb.h"

namespace inferd::loadtest {

enum class VerifyMode { kNone, kFirst, kEcho, kReference };
absl::StatusOr<VerifyMode> ParseVerifyMode(const std::string& text);
const char* VerifyModeName(VerifyMode mode);

struct VerifierOptions {
  VerifyMode mode = VerifyMode::kFirst;
  double rtol = 0;  // |got - want| <= atol + rtol * |want|; both 0: exact bytes
  double atol = 0;
  std::vector<TensorSpec> model_outputs;  // from ModelMetadata (-1 = any); empty: unknown
  std::vector<std::string> requested_outputs;
  std::map<std::string, NpyArray> references;  // kReference: output name -> expected
};

class Verifier {
 public:
  // `templates` must outlive the verifier.
  Verifier(VerifierOptions options, const std::vector<RequestTemplate>& templates);
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  // Checks a response to templates[index]: OK, or DATA_LOSS saying what differs.
  absl::Status Check(size_t index, const grpc::ByteBuffer& response);

 private:
  struct Output {
    std::string name;
    std::string datatype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
  };
  using Outputs = std::vector<Output>;

  // kFirst: keeps the first response to templates[index]; compares later ones with it.
  absl::Status CheckAgainstFirst(size_t index, const SplitMessage& m,
                                 const inference::ModelInferResponse& header);

  // Constant after construction.
  const VerifierOptions options_;
  const std::vector<RequestTemplate>& templates_;

  std::mutex mu_;
  // Protected by mu_: kFirst's reference per template (null until the first OK response).
  std::vector<std::shared_ptr<const Outputs>> first_;
};

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_VERIFIER_H_

// Requests for the load generator: input tensors (random, zeros, a constant, or a .npy file) and
// the ModelInfer wire bytes built from them ONCE, so that sending a request copies nothing: the
// ByteBuffer holds a serialized header slice, then per input a tiny tag+length slice and a slice
// referencing the input's bytes (a ByteBuffer copy only takes references).
//
// Example:
//   TensorSpec spec{"x", "FP32", {1, 64}};
//   absl::StatusOr<InputTensor> x = MakeInput(spec, *ParseInputSource("random"), /*seed=*/1);
//   absl::StatusOr<RequestTemplate> r = BuildRequest({"mlp", "", {}}, {*std::move(x)});
//   grpc::ByteBuffer wire = r->wire;  // per call
//
// Thread-compatible; a built RequestTemplate is immutable and may be read by any thread.
#ifndef INFERD_LOADTEST_REQUEST_BUILDER_H_
#define INFERD_LOADTEST_REQUEST_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace inferd::loadtest {

struct TensorSpec {
  std::string name;
  std::string datatype;        // KServe name: "FP32", "INT64", ...
  std::vector<int64_t> shape;  // concrete (no -1) once a request is built
};

// Bytes per element of a KServe datatype; 0 for BYTES and unknown names.
size_t DataTypeSize(absl::string_view datatype);
// The KServe datatype of a NumPy descr ("<f4" -> "FP32"), or "" when there is none.
std::string DataTypeOfNpy(absl::string_view descr);
int64_t ElementCount(const std::vector<int64_t>& shape);
std::string ShapeString(const std::vector<int64_t>& shape);  // "[1,3,224,224]"
// "1,3,224,224" (also "" for a scalar) -> dims; INVALID_ARGUMENT on anything else.
absl::StatusOr<std::vector<int64_t>> ParseDims(absl::string_view text);

struct InputSource {
  enum class Kind { kRandom, kZeros, kConst, kNpy };
  Kind kind = Kind::kRandom;
  double value = 0;  // kConst
  std::string path;  // kNpy
};
// "random", "zeros", "const:1.5", "npy:/path/x.npy".
absl::StatusOr<InputSource> ParseInputSource(absl::string_view text);

struct InputTensor {
  TensorSpec spec;
  grpc::Slice data;  // row-major bytes, ElementCount * DataTypeSize
};

// Makes the bytes of one input. Random values: floats uniform in [-1, 1), integers uniform in
// [0, int_max), booleans 0/1, all from `seed`. For kNpy the file's dtype must match
// spec.datatype, and its shape replaces spec.shape when spec.shape is empty.
absl::StatusOr<InputTensor> MakeInput(const TensorSpec& spec, const InputSource& source,
                                      uint64_t seed, int64_t int_max = 64);

struct RequestOptions {
  std::string model;
  std::string version;
  std::vector<std::string> outputs;  // requested outputs; empty: all
};

struct RequestTemplate {
  std::vector<InputTensor> inputs;
  grpc::ByteBuffer wire;
  uint64_t wire_bytes = 0;     // the whole message
  uint64_t payload_bytes = 0;  // the raw_input_contents only
  std::string label;           // "x[1,64]", for reports
};

absl::StatusOr<RequestTemplate> BuildRequest(const RequestOptions& options,
                                             std::vector<InputTensor> inputs);

}  // namespace inferd::loadtest

#endif  // INFERD_LOADTEST_REQUEST_BUILDER_H_

// Test data in the ONNX backend-test layout: a model directory holding
// test_data_set_<k>/input_<i>.pb and output_<i>.pb (serialized TensorProtos, in graph input /
// output order), and the comparison of outputs with them (rtol / atol for floating point, exact
// otherwise). Used by engine tests, the conformance runner and inferctl.
#ifndef INFERD_ENGINE_TEST_DATA_SET_H_
#define INFERD_ENGINE_TEST_DATA_SET_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/data_type.h"
#include "engine/shape.h"
#include "engine/tensor.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {

// A tensor, or (kind kSequence / kOptional, from a SequenceProto / OptionalProto file) a sequence
// of tensors or an optional: then `items` are the sequence's tensors or the optional's one value
// (none when empty), and `type` is the element type where the data shows it.
struct NamedData {
  std::string name;  // the TensorProto's name (may be empty in old test data)
  DataType type = DataType::kUndefined;
  Shape shape;
  std::vector<unsigned char> bytes;  // none for strings
  std::vector<std::string> strings;  // a string tensor's elements
  ValueKind kind = ValueKind::kTensor;
  std::vector<NamedData> items;
};

struct TestDataSet {
  std::string dir;
  std::vector<NamedData> inputs;
  std::vector<NamedData> outputs;
};

// A TensorProto's data (string_data for a string tensor).
absl::StatusOr<NamedData> FromTensorProto(const onnx::TensorProto& proto);
// Reads one serialized TensorProto file.
absl::StatusOr<NamedData> ReadTensorProtoFile(const std::string& path);
// Reads one serialized TensorProto, SequenceProto or OptionalProto file, as `kind` says (the
// files do not say which they hold: the model's declared input / output types do).
absl::StatusOr<NamedData> ReadValueProtoFile(const std::string& path, ValueKind kind);
// Every test_data_set_* directory under `model_dir`, sorted. Input i / output i is read as
// `input_kinds[i]` / `output_kinds[i]` (a tensor where the list is shorter).
absl::StatusOr<std::vector<TestDataSet>> ReadTestDataSets(
    const std::string& model_dir, const std::vector<ValueKind>& input_kinds = {},
    const std::vector<ValueKind>& output_kinds = {});

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Integer elements must be equal, or within atol when atol >= 1 (whole quantization steps).
// Strings: `data` points at shape's count of std::strings, `bytes` is that count times
// sizeof(std::string); they must be equal.
// OK when `actual` (type, shape, bytes) matches `expected`; otherwise INVALID_ARGUMENT saying
// where ("output 'y': element 17: got 0.51, expected 0.5 (|diff| 0.01 > tol 0.0005)").
absl::Status CompareData(const NamedData& expected, DataType type, const Shape& shape,
                         const void* data, size_t bytes, const Tolerance& tol);
// The same for a sequence or optional: same kind, same number of items, each item compared as
// above ("output 'y': tensor 2: ...").
absl::Status CompareItems(const NamedData& expected, ValueKind kind,
                          const std::vector<NamedData>& actual, const Tolerance& tol);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_TEST_DATA_SET_H_

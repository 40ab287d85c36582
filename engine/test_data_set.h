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

namespace inferd::engine {

struct NamedData {
  std::string name;  // the TensorProto's name (may be empty in old test data)
  DataType type = DataType::kUndefined;
  Shape shape;
  std::vector<unsigned char> bytes;
};

struct TestDataSet {
  std::string dir;
  std::vector<NamedData> inputs;
  std::vector<NamedData> outputs;
};

// Reads one serialized TensorProto file.
absl::StatusOr<NamedData> ReadTensorProtoFile(const std::string& path);
// Every test_data_set_* directory under `model_dir`, sorted.
absl::StatusOr<std::vector<TestDataSet>> ReadTestDataSets(const std::string& model_dir);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// Integer elements must be equal, or within atol when atol >= 1 (whole quantization steps).
// OK when `actual` (type, shape, bytes) matches `expected`; otherwise INVALID_ARGUMENT saying
// where ("output 'y': element 17: got 0.51, expected 0.5 (|diff| 0.01 > tol 0.0005)").
absl::Status CompareData(const NamedData& expected, DataType type, const Shape& shape,
                         const void* data, size_t bytes, const Tolerance& tol);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_TEST_DATA_SET_H_

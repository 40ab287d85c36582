#include "engine/test_data_set.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/half_bits.h"
#include "engine/weights.h"
#include "onnx/onnx_pb.h"

namespace inferd::engine {
namespace {

std::vector<std::string> ListDir(const std::string& dir, absl::string_view prefix) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (absl::StartsWith(e->d_name, prefix)) names.push_back(e->d_name);
    }
    closedir(d);
  }
  // input_2 before input_10.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return names;
}

template <typename T>
double At(const void* p, size_t i) {
  return static_cast<double>(static_cast<const T*>(p)[i]);
}

double Element(DataType t, const void* p, size_t i) {
  switch (t) {
    case DataType::kFloat32:
      return At<float>(p, i);
    case DataType::kFloat64:
      return At<double>(p, i);
    case DataType::kInt8:
      return At<int8_t>(p, i);
    case DataType::kUint8:
      return At<uint8_t>(p, i);
    case DataType::kInt16:
      return At<int16_t>(p, i);
    case DataType::kUint16:
      return At<uint16_t>(p, i);
    case DataType::kInt32:
      return At<int32_t>(p, i);
    case DataType::kUint32:
      return At<uint32_t>(p, i);
    case DataType::kInt64:
      return At<int64_t>(p, i);
    case DataType::kUint64:
      return At<uint64_t>(p, i);
    case DataType::kBool:
      return At<uint8_t>(p, i) != 0;
    case DataType::kFloat16:
      return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16:
      return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
    default:
      return 0;
  }
}

}  // namespace

absl::StatusOr<NamedData> ReadTensorProtoFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(ss.str())) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a TensorProto"));
  }
  NamedData d;
  d.name = proto.name();
  INFERD_ASSIGN_OR_RETURN(d.bytes, TensorProtoBytes(proto, &d.type, &d.shape));
  return d;
}

absl::StatusOr<std::vector<TestDataSet>> ReadTestDataSets(const std::string& model_dir) {
  std::vector<TestDataSet> sets;
  for (const std::string& name : ListDir(model_dir, "test_data_set_")) {
    TestDataSet set;
    set.dir = absl::StrCat(model_dir, "/", name);
    for (const std::string& f : ListDir(set.dir, "input_")) {
      INFERD_ASSIGN_OR_RETURN(NamedData d, ReadTensorProtoFile(absl::StrCat(set.dir, "/", f)));
      set.inputs.push_back(std::move(d));
    }
    for (const std::string& f : ListDir(set.dir, "output_")) {
      INFERD_ASSIGN_OR_RETURN(NamedData d, ReadTensorProtoFile(absl::StrCat(set.dir, "/", f)));
      set.outputs.push_back(std::move(d));
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

absl::Status CompareData(const NamedData& expected, DataType type, const Shape& shape,
                         const void* data, size_t bytes, const Tolerance& tol) {
  const std::string what = absl::StrCat("output '", expected.name, "'");
  if (type != expected.type) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": got ", DataTypeName(type),
                                                   ", expected ", DataTypeName(expected.type)));
  }
  if (shape != expected.shape) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": got shape ", shape.ToString(),
                                                   ", expected ", expected.shape.ToString()));
  }
  if (bytes != expected.bytes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": got ", bytes, " bytes, expected ", expected.bytes.size()));
  }
  const size_t n = ElementSize(type) == 0 ? 0 : bytes / ElementSize(type);
  // float16 / bfloat16 are compared as floats, within the tolerance (they were compared bit for
  // bit, which failed results one rounding away from the reference).
  const bool floating = type == DataType::kFloat32 || type == DataType::kFloat64 ||
                        type == DataType::kFloat16 || type == DataType::kBFloat16;
  if (!floating && ElementSize(type) != 0) {
    for (size_t i = 0; i < n; ++i) {
      const double a = Element(type, data, i), e = Element(type, expected.bytes.data(), i);
      // Integers are exact unless the tolerance allows whole steps (atol >= 1: quantized
      // outputs whose reference rounds half steps another way, tests/ort_cases/quant).
      if (a != e && !(tol.atol >= 1.0 && std::fabs(a - e) <= tol.atol)) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": element ", i, ": got ", a, ", expected ", e));
      }
    }
    return absl::OkStatus();
  }
  if (!floating) {
    return std::memcmp(data, expected.bytes.data(), bytes) == 0
               ? absl::OkStatus()
               : absl::InvalidArgumentError(absl::StrCat(what, ": bytes differ"));
  }
  for (size_t i = 0; i < n; ++i) {
    const double a = Element(type, data, i), e = Element(type, expected.bytes.data(), i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::isinf(e) && a == e) continue;
    const double limit = tol.atol + tol.rtol * std::fabs(e);
    if (!(std::fabs(a - e) <= limit)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": element ", i, ": got ", a,
                                                     ", expected ", e, " (|diff| ",
                                                     std::fabs(a - e), " > tol ", limit, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace inferd::engine

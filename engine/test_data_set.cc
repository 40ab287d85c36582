#include "engine/test_data_set.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/float8.h"
#include "engine/half_bits.h"
#include "engine/weights.h"
#include "onnx/onnx-data_pb.h"
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
    case DataType::kInt4:  // one per byte, sign-extended
      return At<int8_t>(p, i);
    case DataType::kUint8:
    case DataType::kUint4:
      return At<uint8_t>(p, i);
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return Float8ToFloat(static_cast<const uint8_t*>(p)[i], t);
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
  return FromTensorProto(proto);
}

absl::StatusOr<NamedData> FromTensorProto(const onnx::TensorProto& proto) {
  NamedData d;
  d.name = proto.name();
  if (proto.data_type() == onnx::TensorProto::STRING) {
    d.type = DataType::kString;
    INFERD_ASSIGN_OR_RETURN(d.strings, TensorProtoStrings(proto, &d.shape));
    return d;
  }
  INFERD_ASSIGN_OR_RETURN(d.bytes, TensorProtoBytes(proto, &d.type, &d.shape));
  return d;
}

namespace {

absl::StatusOr<NamedData> FromSequenceProto(const onnx::SequenceProto& proto,
                                            const std::string& path) {
  NamedData d;
  d.name = proto.name();
  d.kind = ValueKind::kSequence;
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      proto.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return absl::UnimplementedError(
        absl::StrCat("'", path, "': only sequences of tensors are supported"));
  }
  for (const onnx::TensorProto& t : proto.tensor_values()) {
    INFERD_ASSIGN_OR_RETURN(NamedData item, FromTensorProto(t));
    if (d.type == DataType::kUndefined) d.type = item.type;
    d.items.push_back(std::move(item));
  }
  return d;
}

}  // namespace

absl::StatusOr<NamedData> ReadValueProtoFile(const std::string& path, ValueKind kind) {
  if (kind == ValueKind::kTensor) return ReadTensorProtoFile(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << f.rdbuf();
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(ss.str())) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a SequenceProto"));
    }
    return FromSequenceProto(proto, path);
  }
  onnx::OptionalProto proto;
  if (!proto.ParseFromString(ss.str())) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an OptionalProto"));
  }
  NamedData d;
  d.name = proto.name();
  d.kind = ValueKind::kOptional;
  if (proto.has_tensor_value()) {
    INFERD_ASSIGN_OR_RETURN(NamedData item, FromTensorProto(proto.tensor_value()));
    d.type = item.type;
    d.items.push_back(std::move(item));
  } else if (proto.has_sequence_value()) {
    INFERD_ASSIGN_OR_RETURN(NamedData item, FromSequenceProto(proto.sequence_value(), path));
    d.type = item.type;
    d.items.push_back(std::move(item));
  } else if (proto.elem_type() != onnx::OptionalProto::TENSOR &&
             proto.elem_type() != onnx::OptionalProto::SEQUENCE &&
             proto.elem_type() != onnx::OptionalProto::UNDEFINED) {
    return absl::UnimplementedError(
        absl::StrCat("'", path, "': only optional tensors and sequences are supported"));
  }
  return d;
}

absl::StatusOr<std::vector<TestDataSet>> ReadTestDataSets(
    const std::string& model_dir, const std::vector<ValueKind>& input_kinds,
    const std::vector<ValueKind>& output_kinds) {
  auto kind_of = [](const std::vector<ValueKind>& kinds, size_t i) {
    return i < kinds.size() ? kinds[i] : ValueKind::kTensor;
  };
  std::vector<TestDataSet> sets;
  for (const std::string& name : ListDir(model_dir, "test_data_set_")) {
    TestDataSet set;
    set.dir = absl::StrCat(model_dir, "/", name);
    for (const std::string& f : ListDir(set.dir, "input_")) {
      INFERD_ASSIGN_OR_RETURN(NamedData d,
                              ReadValueProtoFile(absl::StrCat(set.dir, "/", f),
                                                 kind_of(input_kinds, set.inputs.size())));
      set.inputs.push_back(std::move(d));
    }
    for (const std::string& f : ListDir(set.dir, "output_")) {
      INFERD_ASSIGN_OR_RETURN(NamedData d,
                              ReadValueProtoFile(absl::StrCat(set.dir, "/", f),
                                                 kind_of(output_kinds, set.outputs.size())));
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
  if (type == DataType::kString) {
    const auto* got = static_cast<const std::string*>(data);
    const size_t count = bytes / sizeof(std::string);
    if (count != expected.strings.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": got ", count, " strings, expected ", expected.strings.size()));
    }
    for (size_t i = 0; i < count; ++i) {
      if (got[i] != expected.strings[i]) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": element ", i, ": got \"",
                                                       absl::CEscape(got[i]), "\", expected \"",
                                                       absl::CEscape(expected.strings[i]), "\""));
      }
    }
    return absl::OkStatus();
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
      // float8 is compared exactly, as a value (a cast to it has one right answer); NaN equals
      // NaN whatever its bits.
      if (std::isnan(a) && std::isnan(e)) continue;
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

absl::Status CompareItems(const NamedData& expected, ValueKind kind,
                          const std::vector<NamedData>& actual, const Tolerance& tol) {
  const std::string what = absl::StrCat("output '", expected.name, "'");
  if (kind != expected.kind) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": got ", ValueKindName(kind),
                                                   ", expected ", ValueKindName(expected.kind)));
  }
  if (actual.size() != expected.items.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": got ", actual.size(), " items, expected ", expected.items.size()));
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    NamedData want = expected.items[i];
    want.name = absl::StrCat(expected.name, "' item '", i);
    const NamedData& got = actual[i];
    absl::Status st = got.kind == ValueKind::kTensor && want.kind == ValueKind::kTensor
                          ? (got.type == DataType::kString
                                 ? CompareData(want, got.type, got.shape, got.strings.data(),
                                               got.strings.size() * sizeof(std::string), tol)
                                 : CompareData(want, got.type, got.shape, got.bytes.data(),
                                               got.bytes.size(), tol))
                          : CompareItems(want, got.kind, got.items, tol);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace inferd::engine

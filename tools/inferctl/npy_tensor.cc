#include "tools/inferctl/npy_tensor.h"

#include "absl/strings/str_cat.h"

namespace inferd::tools {

using engine::DataType;

std::string NpyDtype(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "<f4";
    case DataType::kFloat64:
      return "<f8";
    case DataType::kFloat16:
      return "<f2";
    case DataType::kInt8:
      return "|i1";
    case DataType::kUint8:
      return "|u1";
    case DataType::kInt16:
      return "<i2";
    case DataType::kUint16:
      return "<u2";
    case DataType::kInt32:
      return "<i4";
    case DataType::kUint32:
      return "<u4";
    case DataType::kInt64:
      return "<i8";
    case DataType::kUint64:
      return "<u8";
    case DataType::kBool:
      return "|b1";
    default:
      return "";
  }
}

absl::StatusOr<DataType> DataTypeOfNpy(const std::string& dtype) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kInt8,
                     DataType::kUint8, DataType::kInt16, DataType::kUint16, DataType::kInt32,
                     DataType::kUint32, DataType::kInt64, DataType::kUint64, DataType::kBool}) {
    const std::string d = NpyDtype(t);
    if (dtype == d || (dtype.size() == 3 && d.size() == 3 && dtype.substr(1) == d.substr(1) &&
                       (dtype[0] == '<' || dtype[0] == '|' || dtype[0] == '='))) {
      return t;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(".npy dtype '", dtype, "' is not supported"));
}

}  // namespace inferd::tools

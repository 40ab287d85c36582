// Element types of tensors. Values equal ONNX's TensorProto.DataType, so conversion is a cast.
// Pure functions; thread-safe.
#ifndef INFERD_ENGINE_DATA_TYPE_H_
#define INFERD_ENGINE_DATA_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace inferd::engine {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
  // 8-bit floats (ONNX opset 19; engine/float8.h converts them): e4m3 / e5m2 exponent and
  // mantissa bits, FN: no infinity, UZ: no negative zero (0x80 is the only NaN).
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  // 4-bit integers (opset 21): packed two per byte in ONNX files, one per byte (sign-extended
  // for int4) inside inferd; the loaders unpack them.
  kUint4 = 21,
  kInt4 = 22,
};

// Bytes per element; 0 for kUndefined and kString (not a fixed-size type).
size_t ElementSize(DataType t);
// "float32", "int64", ... for messages.
const char* DataTypeName(DataType t);
// True for the values listed above.
bool IsKnownDataType(int32_t onnx_type);
// The four 8-bit float types.
bool IsFloat8(DataType t);

// C++ type <-> DataType.
template <typename T>
struct DataTypeOf;
template <>
struct DataTypeOf<float> {
  static constexpr DataType value = DataType::kFloat32;
};
template <>
struct DataTypeOf<double> {
  static constexpr DataType value = DataType::kFloat64;
};
template <>
struct DataTypeOf<int8_t> {
  static constexpr DataType value = DataType::kInt8;
};
template <>
struct DataTypeOf<uint8_t> {
  static constexpr DataType value = DataType::kUint8;
};
template <>
struct DataTypeOf<int16_t> {
  static constexpr DataType value = DataType::kInt16;
};
template <>
struct DataTypeOf<uint16_t> {
  static constexpr DataType value = DataType::kUint16;
};
template <>
struct DataTypeOf<int32_t> {
  static constexpr DataType value = DataType::kInt32;
};
template <>
struct DataTypeOf<uint32_t> {
  static constexpr DataType value = DataType::kUint32;
};
template <>
struct DataTypeOf<int64_t> {
  static constexpr DataType value = DataType::kInt64;
};
template <>
struct DataTypeOf<uint64_t> {
  static constexpr DataType value = DataType::kUint64;
};
template <>
struct DataTypeOf<bool> {
  static constexpr DataType value = DataType::kBool;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DATA_TYPE_H_

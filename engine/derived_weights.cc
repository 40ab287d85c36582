#include "engine/derived_weights.h"

#include <cstring>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/half_bits.h"

namespace inferd::engine {

namespace {
constexpr std::align_val_t kAlignment{64};
}  // namespace

void DerivedWeights::AlignedFree::operator()(void* p) const { ::operator delete(p, kAlignment); }

absl::StatusOr<const Tensor*> DerivedWeights::NewTensor(DataType type, const Shape& shape,
                                                        void** data) {
  const size_t element = ElementSize(type);
  if (element == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a derived weight cannot hold ", DataTypeName(type), " elements"));
  }
  const std::optional<int64_t> n = CheckedNumElements(shape.dims(), element);
  if (!n) {
    return absl::InvalidArgumentError(
        absl::StrCat("a derived weight of shape ", ShapeForMessage(shape.dims()), " is too large"));
  }
  const size_t bytes = static_cast<size_t>(*n) * element;  // fits: CheckedNumElements
  void* buffer = ::operator new(bytes > 0 ? bytes : 1, kAlignment);
  std::memset(buffer, 0, bytes > 0 ? bytes : 1);
  buffers_.emplace_back(buffer);
  *data = buffer;
  tensors_.push_back(Tensor::Borrowed(type, shape, buffer));
  bytes_ = SaturatingAdd<uint64_t>(bytes_, bytes);
  return &tensors_.back();
}

absl::StatusOr<const Tensor*> DerivedWeights::NewFloat32(const Shape& shape, float** data) {
  void* raw = nullptr;
  INFERD_ASSIGN_OR_RETURN(const Tensor* t, NewTensor(DataType::kFloat32, shape, &raw));
  *data = static_cast<float*>(raw);
  return t;
}

absl::StatusOr<const Tensor*> DerivedWeights::Widen(const Tensor& half) {
  const DataType t = half.dtype();
  if (t != DataType::kFloat16 && t != DataType::kBFloat16) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot widen a ", DataTypeName(t), " weight to float32"));
  }
  float* out = nullptr;
  INFERD_ASSIGN_OR_RETURN(const Tensor* wide, NewFloat32(half.shape(), &out));
  const auto* src = half.data<uint16_t>();
  for (int64_t i = 0; i < half.NumElements(); ++i) {
    out[i] = t == DataType::kFloat16 ? HalfBitsToFloat(src[i]) : BFloat16BitsToFloat(src[i]);
  }
  return wide;
}

}  // namespace inferd::engine

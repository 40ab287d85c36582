#include "engine/derived_weights.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/checked_math.h"
#include "base/status_macros.h"
#include "engine/half_bits.h"

namespace inferd::engine {

absl::StatusOr<const Tensor*> DerivedWeights::NewFloat32(const Shape& shape, float** data) {
  const int64_t n = shape.NumElements();
  const std::optional<uint64_t> bytes =
      n < 0 ? std::nullopt : CheckedMul<uint64_t>(static_cast<uint64_t>(n), sizeof(float));
  if (!bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a derived weight of shape ", shape.ToString(), " is too large"));
  }
  auto buffer = std::make_unique<float[]>(n > 0 ? static_cast<size_t>(n) : 1);  // zeroed
  *data = buffer.get();
  tensors_.push_back(Tensor::Borrowed(DataType::kFloat32, shape, buffer.get()));
  buffers_.push_back(std::move(buffer));
  bytes_ = SaturatingAdd<uint64_t>(bytes_, *bytes);
  return &tensors_.back();
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

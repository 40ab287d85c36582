// DerivedWeights: the weights a session makes at load from the model's own, owned by the session
// beside the mapped model file: float32 copies of float16 / bfloat16 weights (precision
// widening, docs/half-precision.md), convolution weights with a BatchNormalization folded in
// (engine/rewrites.h) and the values constant folding computes (engine/constant_folding.h). Graph
// values point at them as at any weight (Value::initializer); their bytes are memory the session
// holds beyond the model file, and the load reports them.
//
// Tensor addresses are stable for the store's lifetime. Not thread-safe: filled at load, read
// afterwards.
#ifndef INFERD_ENGINE_DERIVED_WEIGHTS_H_
#define INFERD_ENGINE_DERIVED_WEIGHTS_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/shape.h"
#include "engine/tensor.h"

namespace inferd::engine {

class DerivedWeights {
 public:
  DerivedWeights() = default;
  DerivedWeights(const DerivedWeights&) = delete;
  DerivedWeights& operator=(const DerivedWeights&) = delete;

  // A float32 copy of `half` (float16 or bfloat16); INVALID_ARGUMENT for another type.
  absl::StatusOr<const Tensor*> Widen(const Tensor& half);

  // A new float32 weight of `shape`, zero-filled; the caller writes it through *data before any
  // kernel reads it. INVALID_ARGUMENT when its size overflows.
  absl::StatusOr<const Tensor*> NewFloat32(const Shape& shape, float** data);
  // The same for any fixed-size element type (64-byte aligned); INVALID_ARGUMENT for strings or
  // kUndefined, and when the size overflows.
  absl::StatusOr<const Tensor*> NewTensor(DataType type, const Shape& shape, void** data);

  uint64_t bytes() const { return bytes_; }
  size_t count() const { return tensors_.size(); }

 private:
  std::deque<Tensor> tensors_;
  struct AlignedFree {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, AlignedFree>> buffers_;
  uint64_t bytes_ = 0;
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_DERIVED_WEIGHTS_H_

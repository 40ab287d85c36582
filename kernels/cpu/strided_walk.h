// StridedWalk: the offsets of a row-major walk over a multi-index (dims) whose steps move an
// offset by per-dimension strides, without a division per step (one per start). Used by the
// reduction and Einsum kernels to walk the "other" dimensions around a contiguous inner loop.
// Value type; thread-compatible (each thread walks its own copy).
//
// Example:
//   StridedWalk walk(dims, strides, /*start=*/begin);
//   for (int64_t i = begin; i < end; ++i, walk.Next()) Process(base + walk.offset());
#ifndef INFERD_KERNELS_CPU_STRIDED_WALK_H_
#define INFERD_KERNELS_CPU_STRIDED_WALK_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"

namespace inferd::kernels::cpu {

using Dims = absl::InlinedVector<int64_t, 8>;

class StridedWalk {
 public:
  // Positioned at flat index `start` of the row-major order over `dims` (every dim > 0).
  StridedWalk(const Dims& dims, const Dims& strides, int64_t start = 0)
      : dims_(dims), strides_(strides), index_(dims.size(), 0) {
    for (size_t i = dims.size(); i-- > 0;) {
      index_[i] = start % dims[i];
      start /= dims[i];
      offset_ += index_[i] * strides[i];
    }
  }

  int64_t offset() const { return offset_; }

  // Advances one position (wraps to the start after the last).
  void Next() {
    for (size_t i = dims_.size(); i-- > 0;) {
      offset_ += strides_[i];
      if (++index_[i] < dims_[i]) return;
      offset_ -= index_[i] * strides_[i];
      index_[i] = 0;
    }
  }

 private:
  const Dims& dims_;
  const Dims& strides_;
  Dims index_;
  int64_t offset_ = 0;
};

// Product of `dims` (1 when empty).
inline int64_t Product(const Dims& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_STRIDED_WALK_H_

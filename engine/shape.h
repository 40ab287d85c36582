// Shape: the dimensions of a concrete tensor (every dim >= 0). ShapeInfo: what is known about a
// value's shape before a run (rank may be unknown; dims may be unknown or symbolic).
// Value types; thread-compatible.
#ifndef INFERD_ENGINE_SHAPE_H_
#define INFERD_ENGINE_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace inferd::engine {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}

  size_t rank() const { return dims_.size(); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  absl::Span<const int64_t> dims() const { return dims_; }
  void push_back(int64_t d) { dims_.push_back(d); }
  void resize(size_t n, int64_t fill = 1) { dims_.resize(n, fill); }
  // Product of the dims (1 for a scalar). Assumes it fits (validated where shapes come in).
  int64_t NumElements() const;
  // Product of dims [begin, end).
  int64_t SizeFrom(size_t begin) const { return SizeBetween(begin, rank()); }
  int64_t SizeBetween(size_t begin, size_t end) const;
  std::string ToString() const;  // "[1,3,224,224]"

  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  absl::InlinedVector<int64_t, 6> dims_;
};

// Element count of `dims` if every dim is >= 0 and the product and its size in bytes of
// `element_size` fit in int64; nullopt otherwise (hostile shapes).
std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims, size_t element_size);

struct DimInfo {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // e.g. "batch" when symbolic
  bool known() const { return value >= 0; }
};

struct ShapeInfo {
  bool rank_known = false;
  std::vector<DimInfo> dims;

  static ShapeInfo Unknown() { return ShapeInfo{}; }
  static ShapeInfo FromShape(const Shape& s);
  bool IsStatic() const;  // rank and every dim known
  std::optional<Shape> ToShape() const;
  // True if `s` is compatible (same rank, equal where known).
  bool Matches(const Shape& s) const;
  std::string ToString() const;  // "[batch,3,224,224]", "[?,3]" or "unknown"
};

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_SHAPE_H_

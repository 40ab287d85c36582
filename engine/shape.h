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
#include "absl/status/status.h"
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
  // Product of the dims (1 for a scalar). Shapes from models, configs, requests and kernels are
  // checked against the bounds below where they come in (CheckShapeBounds, CheckedNumElements),
  // so for those every product fits; an unchecked shape whose product does not fit gives
  // INT64_MAX (saturated, never undefined behaviour).
  int64_t NumElements() const;
  // Product of dims [begin, end) (saturated like NumElements).
  int64_t SizeFrom(size_t begin) const { return SizeBetween(begin, rank()); }
  int64_t SizeBetween(size_t begin, size_t end) const;
  std::string ToString() const;  // "[1,3,224,224]"

  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return !(*this == o); }

 private:
  absl::InlinedVector<int64_t, 6> dims_;
};

// Bounds on every tensor shape the engine accepts (from a model, fixed_input_shapes /
// max_input_shapes, a request, or a kernel's output):
// - rank <= kMaxShapeRank: ONNX sets no limit, real models stay under 10 and oneDNN takes at
//   most 12 dims; 64 leaves room for any real model while keeping a hostile rank-100000 shape
//   (and messages that print it) small.
// - each dim <= kMaxDim (2^31 - 1): oneDNN 2.6 keeps M, N and K of its brgemm matmul in 32-bit
//   ints, so a dim of 2^32 becomes 0 and primitive creation divides by it (SIGFPE: the [2^34, 64]
//   MLP of issue 12), and 2^32 + 1 silently becomes 1. Our kernels index with int64.
// - bytes <= kMaxTensorBytes (2^47, 128 TiB): the x86-64 user address space; no buffer larger
//   can exist, and with every value under it sums of values, planner offsets and budget costs
//   stay far from 64-bit overflow (they are checked as well).
// The product of the non-zero dims is bounded too (see CheckedProduct), so every partial product
// a kernel forms (strides, SizeBetween) fits.
inline constexpr size_t kMaxShapeRank = 64;
inline constexpr int64_t kMaxDim = 2147483647;
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 47;

// OK when `dims` is within the bounds above for elements of `element_size` bytes (0 counts as 1:
// an unknown type). Dims < 0 are unknown (ShapeInfo's -1) and skipped, so a partly known shape
// is checked on what is known. The error says which bound is broken, and by what, but not whose
// shape it is: the caller adds that.
absl::Status CheckShapeBounds(absl::Span<const int64_t> dims, size_t element_size);

// Element count of `dims` if every dim is >= 0 and the shape is within the bounds above (so its
// size in bytes of `element_size` fits as well); nullopt otherwise (hostile shapes).
std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims, size_t element_size);

// `dims` for messages, from a model, a config or a request (any int64, even negative):
// "[1,3,224,224]"; a shape of more than kMaxDimsInMessage dims shows its first 8 and its rank:
// "[1,1,1,1,1,1,1,1,... (rank 100000)]", so that a hostile rank never makes a long message.
inline constexpr size_t kMaxDimsInMessage = 16;
std::string ShapeForMessage(absl::Span<const int64_t> dims);

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

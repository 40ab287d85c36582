#include "engine/shape.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/checked_math.h"

namespace inferd::engine {

int64_t Shape::NumElements() const { return SizeBetween(0, rank()); }

int64_t Shape::SizeBetween(size_t begin, size_t end) const {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims_.size(); ++i) {
    std::optional<int64_t> next = CheckedMul<int64_t>(n, dims_[i]);
    if (!next) return std::numeric_limits<int64_t>::max();
    n = *next;
  }
  return n;
}

std::string Shape::ToString() const { return absl::StrCat("[", absl::StrJoin(dims_, ","), "]"); }

absl::Status CheckShapeBounds(absl::Span<const int64_t> dims, size_t element_size) {
  if (dims.size() > kMaxShapeRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", dims.size(), " is above the limit of ", kMaxShapeRank, " dims"));
  }
  std::optional<int64_t> known = 1;  // product of the known non-zero dims; nullopt: overflow
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > kMaxDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim ", i, " is ", dims[i], ", above the limit of ", kMaxDim,
                       " per dim (oneDNN keeps matrix dims in 32-bit integers)"));
    }
    if (dims[i] > 0 && known) known = CheckedMul<int64_t>(*known, dims[i]);
  }
  const int64_t element = static_cast<int64_t>(std::max<size_t>(element_size, 1));
  std::optional<int64_t> bytes = known ? CheckedMul<int64_t>(*known, element) : std::nullopt;
  if (!bytes || *bytes > kMaxTensorBytes) {
    return absl::InvalidArgumentError(absl::StrCat("its size is above the limit of ",
                                                   kMaxTensorBytes,
                                                   " bytes (2^47, the x86-64 address "
                                                   "space) per tensor"));
  }
  return absl::OkStatus();
}

std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims, size_t element_size) {
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
  }
  if (!CheckShapeBounds(dims, element_size).ok()) return std::nullopt;
  return CheckedProduct(dims);
}

std::string ShapeForMessage(absl::Span<const int64_t> dims) {
  if (dims.size() <= kMaxDimsInMessage) return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
  return absl::StrCat("[", absl::StrJoin(dims.subspan(0, 8), ","), ",... (rank ", dims.size(),
                      ")]");
}

ShapeInfo ShapeInfo::FromShape(const Shape& s) {
  ShapeInfo info;
  info.rank_known = true;
  for (int64_t d : s.dims()) info.dims.push_back(DimInfo{d, ""});
  return info;
}

bool ShapeInfo::IsStatic() const {
  if (!rank_known) return false;
  for (const DimInfo& d : dims) {
    if (!d.known()) return false;
  }
  return true;
}

std::optional<Shape> ShapeInfo::ToShape() const {
  if (!IsStatic()) return std::nullopt;
  Shape s;
  for (const DimInfo& d : dims) s.push_back(d.value);
  return s;
}

bool ShapeInfo::Matches(const Shape& s) const {
  if (!rank_known) return true;
  if (dims.size() != s.rank()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].known() && dims[i].value != s[i]) return false;
  }
  return true;
}

std::string ShapeInfo::ToString() const {
  if (!rank_known) return "unknown";
  std::vector<std::string> parts;
  for (const DimInfo& d : dims) {
    parts.push_back(d.known() ? absl::StrCat(d.value) : (d.symbol.empty() ? "?" : d.symbol));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace inferd::engine

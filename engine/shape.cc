#include "engine/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inferd::engine {

int64_t Shape::NumElements() const { return SizeBetween(0, rank()); }

int64_t Shape::SizeBetween(size_t begin, size_t end) const {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims_.size(); ++i) n *= dims_[i];
  return n;
}

std::string Shape::ToString() const { return absl::StrCat("[", absl::StrJoin(dims_, ","), "]"); }

std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims, size_t element_size) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > INT64_MAX / d) return std::nullopt;
    n *= d;
  }
  if (element_size > 1 && n > INT64_MAX / static_cast<int64_t>(element_size)) return std::nullopt;
  return n;
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

#include "kernels/cpu/movement_util.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu/float16.h"

namespace inferd::kernels::cpu {

using engine::DataType;
using engine::Tensor;

namespace {

template <typename T>
T Load(const Tensor& t) {
  T v;
  std::memcpy(&v, t.raw_data(), sizeof(T));
  return v;
}

// The first element of a tensor of one of NumericTypes or bool, converted to Out.
template <typename Out>
bool LoadNumericScalar(const Tensor& t, Out* out) {
  if (t.dtype() == DataType::kBool) {
    *out = static_cast<Out>(Load<uint8_t>(t) != 0);
    return true;
  }
  return Visit(NumericTypes{}, t.dtype(),
               [&](auto tag) { *out = static_cast<Out>(Load<typename decltype(tag)::type>(t)); });
}

// dst[i][j] = src[i * s2 + j * s1] for a dense [n2, l1] block: memcpy per line (s1 == 1), a
// fill (s1 == 0), or a strided gather whose inner loop runs along the longer side.
template <typename T>
void CopyBlock(const T* src, T* dst, int64_t n2, int64_t s2, int64_t l1, int64_t s1) {
  if (s1 == 1) {
    for (int64_t i = 0; i < n2; ++i) {
      std::memcpy(dst + i * l1, src + i * s2, static_cast<size_t>(l1) * sizeof(T));
    }
  } else if (s1 == 0) {
    for (int64_t i = 0; i < n2; ++i) FillN(dst + i * l1, l1, src[i * s2]);
  } else if (l1 >= 8 || n2 <= l1) {
    for (int64_t i = 0; i < n2; ++i) {
      const T* s = src + i * s2;
      T* d = dst + i * l1;
      for (int64_t j = 0; j < l1; ++j) d[j] = s[j * s1];
    }
  } else {  // short lines (e.g. DepthToSpace's block columns): walk down the block instead
    for (int64_t j = 0; j < l1; ++j) {
      const T* s = src + j * s1;
      for (int64_t i = 0; i < n2; ++i) dst[i * l1 + j] = s[i * s2];
    }
  }
}

}  // namespace

absl::Status ReadIndexVector(const Tensor& t, absl::string_view what, const NodeLabel& node,
                             Dims* out) {
  if (t.shape().rank() > 1) {
    return node.InvalidArgument(
        absl::StrCat(what, " must be 1-D, got shape ", t.shape().ToString()));
  }
  const int64_t n = t.NumElements();
  out->resize(n);
  if (t.dtype() == DataType::kInt64) {
    if (n > 0) std::memcpy(out->data(), t.raw_data(), n * sizeof(int64_t));
  } else if (t.dtype() == DataType::kInt32) {
    const int32_t* v = t.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) (*out)[i] = v[i];
  } else {
    return node.InvalidArgument(absl::StrCat(
        what, " has element type ", engine::DataTypeName(t.dtype()), ", expected int32 or int64"));
  }
  return absl::OkStatus();
}

bool ReadScalarAsDouble(const Tensor& t, double* out) {
  if (t.NumElements() < 1) return false;
  if (LoadNumericScalar(t, out)) return true;
  return Visit(TypeList<Float16, BFloat16>{}, t.dtype(),
               [&](auto tag) { *out = Load<typename decltype(tag)::type>(t).ToFloat(); });
}

bool ReadScalarAsInt64(const Tensor& t, int64_t* out) {
  if (t.NumElements() < 1) return false;
  if (LoadNumericScalar(t, out)) return true;
  double d;  // float16, bfloat16
  if (!ReadScalarAsDouble(t, &d)) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

absl::Status UnsupportedType(DataType type, const NodeLabel& node) {
  return node.Unimplemented(
      absl::StrCat("element type ", engine::DataTypeName(type), " is not supported"));
}

Dims StridesOf(const engine::Shape& shape) {
  Dims st(shape.rank(), 1);
  for (size_t i = shape.rank(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

void ParallelMemcpy(void* dst, const void* src, size_t bytes, engine::ThreadPool& pool) {
  if (bytes == 0) return;
  const int64_t chunks = static_cast<int64_t>((bytes + kMoveGrainBytes - 1) / kMoveGrainBytes);
  pool.ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    const size_t from = static_cast<size_t>(begin) * kMoveGrainBytes;
    const size_t to = std::min(bytes, static_cast<size_t>(end) * kMoveGrainBytes);
    std::memcpy(static_cast<unsigned char*>(dst) + from,
                static_cast<const unsigned char*>(src) + from, to - from);
  });
}

void StridedCopy(const void* src, void* dst, size_t elem, absl::Span<const int64_t> dims,
                 absl::Span<const int64_t> strides, int64_t offset, engine::ThreadPool& pool) {
  // pass 1: drop dims of size 1; merge a dim into the one before it when both walk the source
  // contiguously relative to each other (outer stride == inner stride * inner size).
  Dims md, ms;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) return;
    if (dims[d] == 1) continue;
    if (!md.empty() && ms.back() == strides[d] * dims[d]) {
      md.back() *= dims[d];
      ms.back() = strides[d];
    } else {
      md.push_back(dims[d]);
      ms.push_back(strides[d]);
    }
  }
  while (md.size() < 2) {  // at least one [lines, line] block
    md.insert(md.begin(), 1);
    ms.insert(ms.begin(), 0);
  }
  // pass 2: the last two merged dims form blocks of l2 lines of l1 elements; the dims before
  // them advance an odometer. Work is split by lines, so one large block still spreads across
  // threads.
  const size_t rank = md.size(), outer = rank - 2;
  const int64_t l1 = md[rank - 1], s1 = ms[rank - 1], l2 = md[rank - 2], s2 = ms[rank - 2];
  int64_t lines = l2;
  for (size_t d = 0; d < outer; ++d) lines *= md[d];
  const int64_t line_bytes = l1 * static_cast<int64_t>(elem);
  if (lines == 1 && s1 == 1) {  // one contiguous run
    ParallelMemcpy(dst, static_cast<const unsigned char*>(src) + offset * elem, line_bytes, pool);
    return;
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(src) + offset;
    T* out = static_cast<T*>(dst);
    pool.ParallelFor(lines,
                     std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(line_bytes, 1)),
                     [&](int64_t begin, int64_t end) {
                       Dims index(outer, 0);
                       int64_t off = 0, rest = begin / l2, i2 = begin % l2;
                       for (size_t d = outer; d-- > 0;) {
                         index[d] = rest % md[d];
                         rest /= md[d];
                         off += index[d] * ms[d];
                       }
                       for (int64_t line = begin; line < end;) {
                         const int64_t n2 = std::min(l2 - i2, end - line);
                         CopyBlock(in + off + i2 * s2, out + line * l1, n2, s2, l1, s1);
                         line += n2;
                         i2 = 0;
                         for (size_t d = outer; d-- > 0;) {  // odometer
                           off += ms[d];
                           if (++index[d] < md[d]) break;
                           off -= index[d] * ms[d];
                           index[d] = 0;
                         }
                       }
                     });
  };
  if (!WithElementSize(elem, run)) {
    // Odd element sizes: copy element by element.
    const auto* in = static_cast<const unsigned char*>(src);
    auto* out = static_cast<unsigned char*>(dst);
    Dims index(rank, 0);
    const int64_t total = lines * l1;
    int64_t off = offset;
    for (int64_t i = 0; i < total; ++i) {
      std::memcpy(out + i * elem, in + off * elem, elem);
      for (size_t d = rank; d-- > 0;) {
        off += ms[d];
        if (++index[d] < md[d]) break;
        off -= index[d] * ms[d];
        index[d] = 0;
      }
    }
  }
}

absl::Status ResolveSlice(const engine::Shape& in, const Dims& starts, const Dims& ends,
                          const Dims& axes, const Dims& steps, const NodeLabel& node, Dims* start,
                          Dims* step, Dims* len) {
  const int64_t rank = static_cast<int64_t>(in.rank());
  const size_t n = starts.size();
  if (ends.size() != n || (!axes.empty() && axes.size() != n) ||
      (!steps.empty() && steps.size() != n)) {
    return node.InvalidArgument(absl::StrCat("starts (", n, "), ends (", ends.size(), "), axes (",
                                             axes.size(), ") and steps (", steps.size(),
                                             ") must have the same length"));
  }
  absl::InlinedVector<bool, 8> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    INFERD_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank, node, "axes entry"));
    if (seen[axis]) return node.InvalidArgument(absl::StrCat("axis ", axis, " is repeated"));
    seen[axis] = true;
    const int64_t dim = in[axis];
    const int64_t st = steps.empty() ? 1 : steps[i];
    if (st == 0) return node.InvalidArgument(absl::StrCat("step for axis ", axis, " is 0"));
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count = 0;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      if (e > s) count = (e - s - 1) / st + 1;
    } else if (dim > 0) {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      const int64_t back =
          st == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -st;
      if (s > e) count = (s - e - 1) / back + 1;
    }
    (*start)[axis] = count > 0 ? s : 0;
    (*step)[axis] = count > 1 ? st : 1;  // a single index needs no stride
    (*len)[axis] = count;
  }
  return absl::OkStatus();
}

absl::Status SplitSizes(int axis, int64_t dim, int n, int64_t num_outputs, const NodeLabel& node,
                        Dims* split) {
  if (split->empty() && num_outputs > 0) {
    // Opset 18: equal parts of ceil(dim / n), the last one what remains.
    const int64_t part = (dim + n - 1) / n;
    if (num_outputs != n || (n > 1 && part * (n - 1) >= dim)) {
      return node.InvalidArgument(absl::StrCat("num_outputs ", num_outputs,
                                               " cannot split dimension ", axis, " of size ", dim,
                                               " into the node's ", n, " outputs"));
    }
    split->assign(n, part);
    split->back() = dim - part * (n - 1);
  }
  if (split->empty()) {
    if (dim % n != 0) {
      return node.InvalidArgument(absl::StrCat("dimension ", axis, " of size ", dim,
                                               " cannot be split into ", n, " equal parts"));
    }
    split->assign(n, dim / n);
  }
  int64_t total = 0;
  for (int64_t s : *split) total += s;
  if (static_cast<int>(split->size()) != n || total != dim ||
      std::any_of(split->begin(), split->end(), [](int64_t s) { return s < 0; })) {
    return node.InvalidArgument(absl::StrCat("split [", absl::StrJoin(*split, ","),
                                             "] does not cut dimension ", axis, " of size ", dim,
                                             " into ", n, " outputs"));
  }
  return absl::OkStatus();
}

}  // namespace inferd::kernels::cpu

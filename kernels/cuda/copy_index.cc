#include "kernels/cuda/copy_index.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::kernels::cuda {

absl::StatusOr<StridedCopyIndex> MakeStridedCopy(absl::Span<const int64_t> dims,
                                                 absl::Span<const int64_t> src_strides,
                                                 absl::Span<const int64_t> dst_strides,
                                                 int64_t src_offset, int64_t dst_offset) {
  StridedCopyIndex index;
  index.src_offset = src_offset;
  index.dst_offset = dst_offset;
  index.count = 1;
  for (int64_t d : dims) index.count *= d;
  if (index.count == 0) return index;
  // Drop dims of size 1; merge a dim into the one before it when both sides step across the
  // boundary as across one dim (outer stride == inner stride * inner size).
  std::vector<int64_t> md, ms, mt;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!md.empty() && ms.back() == src_strides[d] * dims[d] &&
        mt.back() == dst_strides[d] * dims[d]) {
      md.back() *= dims[d];
      ms.back() = src_strides[d];
      mt.back() = dst_strides[d];
      continue;
    }
    md.push_back(dims[d]);
    ms.push_back(src_strides[d]);
    mt.push_back(dst_strides[d]);
  }
  if (md.size() > static_cast<size_t>(kMaxCopyRank)) {
    return absl::UnimplementedError(absl::StrCat(
        "a copy over ", md.size(), " dimensions; the CUDA kernel walks at most ", kMaxCopyRank));
  }
  index.rank = static_cast<int>(md.size());
  for (size_t d = 0; d < md.size(); ++d) {
    index.dims[d] = md[d];
    index.src_strides[d] = ms[d];
    index.dst_strides[d] = mt[d];
  }
  return index;
}

absl::StatusOr<StridedCopyIndex> MakeDenseCopy(const engine::Shape& shape,
                                               absl::Span<const int64_t> src_strides,
                                               int64_t src_offset) {
  std::vector<int64_t> dense(shape.rank());
  int64_t next = 1;
  for (size_t d = shape.rank(); d-- > 0;) {
    dense[d] = next;
    next *= shape[d];
  }
  return MakeStridedCopy(shape.dims(), src_strides, dense, src_offset, 0);
}

absl::StatusOr<PadIndex> MakePadIndex(const engine::Shape& in, absl::Span<const int64_t> pads,
                                      const engine::Shape& out, PadFill fill) {
  PadIndex index;
  index.fill = fill;
  index.count = out.NumElements();
  if (index.count == 0) return index;
  const size_t rank = in.rank();
  std::vector<int64_t> in_dims, out_dims, begins;
  std::vector<bool> padded;
  for (size_t d = 0; d < rank; ++d) {
    const bool p = pads[d] != 0 || pads[rank + d] != 0;
    if (!p && !padded.empty() && !padded.back()) {  // in[d] == out[d]: one dim with the last
      in_dims.back() *= in[d];
      out_dims.back() *= out[d];
      continue;
    }
    in_dims.push_back(in[d]);
    out_dims.push_back(out[d]);
    begins.push_back(pads[d]);
    padded.push_back(p);
  }
  if (in_dims.size() > static_cast<size_t>(kMaxPadRank)) {
    return absl::UnimplementedError(absl::StrCat(
        "a pad of ", in_dims.size(), " dims after merging (at most ", kMaxPadRank, ")"));
  }
  index.rank = static_cast<int>(in_dims.size());
  int64_t stride = 1;
  for (int d = index.rank - 1; d >= 0; --d) {
    index.in_dims[d] = in_dims[d];
    index.out_dims[d] = out_dims[d];
    index.begin[d] = begins[d];
    index.in_strides[d] = stride;
    stride *= in_dims[d];
  }
  return index;
}

}  // namespace inferd::kernels::cuda

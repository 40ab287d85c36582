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

}  // namespace inferd::kernels::cuda

#include "kernels/cuda/broadcast_index.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace inferd::kernels::cuda {

absl::StatusOr<BroadcastIndex> MakeBroadcastIndex(const engine::Shape& a, const engine::Shape& b,
                                                  engine::Shape& out) {
  // pass 1: the output shape, right-aligned.
  const size_t rank = a.rank() > b.rank() ? a.rank() : b.rank();
  std::vector<int64_t> da(rank, 1), db(rank, 1), dout(rank, 1);
  for (size_t i = 0; i < a.rank(); ++i) da[rank - a.rank() + i] = a[i];
  for (size_t i = 0; i < b.rank(); ++i) db[rank - b.rank() + i] = b[i];
  for (size_t d = 0; d < rank; ++d) {
    if (da[d] != db[d] && da[d] != 1 && db[d] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", a.ToString(), " and ", b.ToString(), " do not broadcast"));
    }
    dout[d] = da[d] == 1 ? db[d] : da[d];
  }
  out = engine::Shape(absl::MakeConstSpan(dout));

  // pass 2: each operand's contiguous strides, 0 where it repeats.
  std::vector<int64_t> sa(rank), sb(rank);
  int64_t na = 1, nb = 1;
  for (size_t d = rank; d-- > 0;) {
    sa[d] = da[d] == 1 ? 0 : na;
    sb[d] = db[d] == 1 ? 0 : nb;
    na *= da[d];
    nb *= db[d];
  }

  // pass 3: drop size-1 dimensions and merge a dimension into the next inner one when both
  // operands step across the boundary as across one dimension.
  std::vector<int64_t> md, ma, mb;
  for (size_t d = 0; d < rank; ++d) {
    if (dout[d] == 1) continue;
    if (!md.empty() && ma.back() == sa[d] * dout[d] && mb.back() == sb[d] * dout[d]) {
      md.back() *= dout[d];
      ma.back() = sa[d];
      mb.back() = sb[d];
      continue;
    }
    md.push_back(dout[d]);
    ma.push_back(sa[d]);
    mb.push_back(sb[d]);
  }
  if (md.size() > static_cast<size_t>(kMaxBroadcastRank)) {
    return absl::UnimplementedError(
        absl::StrCat("shapes ", a.ToString(), " and ", b.ToString(), " broadcast over ", md.size(),
                     " dimensions; the CUDA kernel walks at most ", kMaxBroadcastRank));
  }
  BroadcastIndex index;
  index.rank = static_cast<int>(md.size());
  index.count = out.NumElements();
  for (size_t d = 0; d < md.size(); ++d) {
    index.out_dims[d] = md[d];
    index.a_strides[d] = ma[d];
    index.b_strides[d] = mb[d];
  }
  return index;
}

}  // namespace inferd::kernels::cuda

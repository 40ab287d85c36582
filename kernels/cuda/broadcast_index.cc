#include "kernels/cuda/broadcast_index.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace inferd::kernels::cuda {
namespace {

// The broadcast of any number of operands: merged output dims and each operand's strides.
struct Merged {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // per operand
};

std::string Describe(absl::Span<const engine::Shape* const> shapes) {
  return absl::StrJoin(shapes, " and ", [](std::string* out, const engine::Shape* s) {
    absl::StrAppend(out, s->ToString());
  });
}

absl::StatusOr<Merged> Broadcast(absl::Span<const engine::Shape* const> shapes, int max_rank,
                                 engine::Shape& out) {
  // pass 1: the output shape, right-aligned.
  size_t rank = 0;
  for (const engine::Shape* s : shapes) rank = s->rank() > rank ? s->rank() : rank;
  const size_t n = shapes.size();
  std::vector<std::vector<int64_t>> dims(n, std::vector<int64_t>(rank, 1));
  std::vector<int64_t> dout(rank, 1);
  for (size_t k = 0; k < n; ++k) {
    const engine::Shape& s = *shapes[k];
    for (size_t i = 0; i < s.rank(); ++i) dims[k][rank - s.rank() + i] = s[i];
  }
  for (size_t d = 0; d < rank; ++d) {
    for (size_t k = 0; k < n; ++k) {
      const int64_t v = dims[k][d];
      if (v == 1) continue;
      if (dout[d] != 1 && dout[d] != v) {
        return absl::InvalidArgumentError(
            absl::StrCat("shapes ", Describe(shapes), " do not broadcast"));
      }
      dout[d] = v;
    }
  }
  out = engine::Shape(absl::MakeConstSpan(dout));

  // pass 2: each operand's contiguous strides, 0 where it repeats.
  std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(rank));
  for (size_t k = 0; k < n; ++k) {
    int64_t next = 1;
    for (size_t d = rank; d-- > 0;) {
      strides[k][d] = dims[k][d] == 1 ? 0 : next;
      next *= dims[k][d];
    }
  }

  // pass 3: drop size-1 dimensions and merge a dimension into the next inner one when every
  // operand steps across the boundary as across one dimension.
  Merged m;
  m.strides.resize(n);
  for (size_t d = 0; d < rank; ++d) {
    if (dout[d] == 1) continue;
    bool merge = !m.dims.empty();
    for (size_t k = 0; merge && k < n; ++k) {
      merge = m.strides[k].back() == strides[k][d] * dout[d];
    }
    if (merge) {
      m.dims.back() *= dout[d];
      for (size_t k = 0; k < n; ++k) m.strides[k].back() = strides[k][d];
      continue;
    }
    m.dims.push_back(dout[d]);
    for (size_t k = 0; k < n; ++k) m.strides[k].push_back(strides[k][d]);
  }
  if (m.dims.size() > static_cast<size_t>(max_rank)) {
    return absl::UnimplementedError(
        absl::StrCat("shapes ", Describe(shapes), " broadcast over ", m.dims.size(),
                     " dimensions; the CUDA kernel walks at most ", max_rank));
  }
  return m;
}

}  // namespace

absl::StatusOr<BroadcastIndex> MakeBroadcastIndex(const engine::Shape& a, const engine::Shape& b,
                                                  engine::Shape& out) {
  const engine::Shape* shapes[] = {&a, &b};
  absl::StatusOr<Merged> m = Broadcast(shapes, kMaxBroadcastRank, out);
  if (!m.ok()) return m.status();
  BroadcastIndex index;
  index.rank = static_cast<int>(m->dims.size());
  index.count = out.NumElements();
  for (size_t d = 0; d < m->dims.size(); ++d) {
    index.out_dims[d] = m->dims[d];
    index.a_strides[d] = m->strides[0][d];
    index.b_strides[d] = m->strides[1][d];
  }
  return index;
}

absl::StatusOr<WhereIndex> MakeWhereIndex(const engine::Shape& condition, const engine::Shape& x,
                                          const engine::Shape& y, engine::Shape& out) {
  const engine::Shape* shapes[] = {&condition, &x, &y};
  absl::StatusOr<Merged> m = Broadcast(shapes, kMaxWhereRank, out);
  if (!m.ok()) return m.status();
  WhereIndex index;
  index.rank = static_cast<int>(m->dims.size());
  index.count = out.NumElements();
  for (size_t d = 0; d < m->dims.size(); ++d) {
    index.out_dims[d] = m->dims[d];
    index.c_strides[d] = m->strides[0][d];
    index.x_strides[d] = m->strides[1][d];
    index.y_strides[d] = m->strides[2][d];
  }
  return index;
}

}  // namespace inferd::kernels::cuda

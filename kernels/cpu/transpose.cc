// Transpose (perm attribute, default: reverse the dimensions), any fixed-size element type.
// Dimensions of size 1 are dropped and input dimensions that stay adjacent are merged first;
// then: an order-preserving permutation is an alias of the input (no copy); a permutation that
// keeps the last dimension copies contiguous rows; a swap of the last two dimensions (2-D, or
// batched, e.g. NCHW -> NHWC) is a tiled transpose; anything else gathers with strides. Own code,
// parallel over output rows or tiles.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_types.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using Dims = absl::InlinedVector<int64_t, 8>;

constexpr int64_t kGrainBytes = 64 * 1024;  // bytes per thread, at least
constexpr int64_t kTile = 32;               // tile edge of the 2-D transpose

// The permutation after dropping 1s and merging input dims that stay adjacent.
struct MergedTranspose {
  Dims dims;  // merged input dims
  Dims perm;  // output dim i is merged input dim perm[i]
};

MergedTranspose Merge(const Shape& in, absl::Span<const int64_t> perm) {
  // pass 1: drop dims of size 1, renumbering the rest.
  Dims index(in.rank(), -1), kept_dims, kept_perm;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (in[i] != 1) {
      index[i] = static_cast<int64_t>(kept_dims.size());
      kept_dims.push_back(in[i]);
    }
  }
  for (int64_t p : perm) {
    if (index[p] >= 0) kept_perm.push_back(index[p]);
  }
  // pass 2: merge runs of consecutive input dims that are also consecutive in the output.
  MergedTranspose m;
  Dims group_of(kept_dims.size(), -1);  // input dim -> merged group (by output position)
  Dims group_first;                     // first input dim of each group, in output order
  for (size_t i = 0; i < kept_perm.size(); ++i) {
    if (i > 0 && kept_perm[i] == kept_perm[i - 1] + 1) {
      group_of[kept_perm[i]] = group_of[kept_perm[i - 1]];
    } else {
      group_of[kept_perm[i]] = static_cast<int64_t>(group_first.size());
      group_first.push_back(kept_perm[i]);
    }
  }
  // Merged input dims in input order; the output lists groups in output order.
  Dims group_size(group_first.size(), 1), input_order;
  for (size_t d = 0; d < kept_dims.size(); ++d) {
    group_size[group_of[d]] *= kept_dims[d];
    if (d == 0 || group_of[d] != group_of[d - 1]) input_order.push_back(group_of[d]);
  }
  Dims position(group_first.size());  // group -> merged input index
  for (size_t i = 0; i < input_order.size(); ++i) position[input_order[i]] = i;
  for (int64_t g : input_order) m.dims.push_back(group_size[g]);
  for (size_t g = 0; g < group_first.size(); ++g) m.perm.push_back(position[g]);
  return m;
}

template <typename T>
void TransposeTiled(const T* in, T* out, int64_t batch, int64_t rows, int64_t cols,
                    engine::ThreadPool& pool) {
  // out[b][c][r] = in[b][r][c]; work item = (batch, row tile).
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t item_bytes = kTile * cols * static_cast<int64_t>(sizeof(T));
  pool.ParallelFor(batch * row_tiles, std::max<int64_t>(1, kGrainBytes / item_bytes),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t item = begin; item < end; ++item) {
                       const int64_t b = item / row_tiles, r0 = (item % row_tiles) * kTile;
                       const int64_t r1 = std::min(rows, r0 + kTile);
                       const T* src = in + b * rows * cols;
                       T* dst = out + b * rows * cols;
                       for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
                         const int64_t c1 = std::min(cols, c0 + kTile);
                         for (int64_t r = r0; r < r1; ++r) {
                           for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
                         }
                       }
                     }
                   });
}

// General case: each output row (last output dim) gathers with the input stride of that dim; a
// contiguous memcpy when the last dim is kept.
template <typename T>
void TransposeStrided(const T* in, T* out, const MergedTranspose& m, engine::ThreadPool& pool) {
  const size_t rank = m.dims.size();
  Dims in_strides(rank);
  for (size_t i = rank, s = 1; i-- > 0;) {
    in_strides[i] = static_cast<int64_t>(s);
    s *= m.dims[i];
  }
  Dims out_dims(rank), strides(rank);  // per output dim: size and input stride
  for (size_t i = 0; i < rank; ++i) {
    out_dims[i] = m.dims[m.perm[i]];
    strides[i] = in_strides[m.perm[i]];
  }
  const int64_t row_len = out_dims[rank - 1], row_stride = strides[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= out_dims[i];
  const int64_t row_bytes = row_len * static_cast<int64_t>(sizeof(T));
  pool.ParallelFor(rows, std::max<int64_t>(1, kGrainBytes / row_bytes),
                   [&](int64_t begin, int64_t end) {
                     Dims index(rank - 1);
                     int64_t offset = 0, rest = begin;
                     for (size_t d = rank - 1; d-- > 0;) {
                       index[d] = rest % out_dims[d];
                       rest /= out_dims[d];
                       offset += index[d] * strides[d];
                     }
                     for (int64_t r = begin; r < end; ++r) {
                       T* dst = out + r * row_len;
                       if (row_stride == 1) {
                         std::memcpy(dst, in + offset, row_bytes);
                       } else {
                         for (int64_t j = 0; j < row_len; ++j) dst[j] = in[offset + j * row_stride];
                       }
                       for (size_t d = rank - 1; d-- > 0;) {  // odometer
                         offset += strides[d];
                         if (++index[d] < out_dims[d]) break;
                         offset -= index[d] * strides[d];
                         index[d] = 0;
                       }
                     }
                   });
}

template <typename T>
void RunTranspose(const void* in, void* out, const MergedTranspose& m, engine::ThreadPool& pool) {
  const size_t rank = m.dims.size();
  const bool swap_last_two = rank >= 2 && m.perm[rank - 1] == static_cast<int64_t>(rank - 2) &&
                             m.perm[rank - 2] == static_cast<int64_t>(rank - 1) && [&] {
                               for (size_t i = 0; i + 2 < rank; ++i) {
                                 if (m.perm[i] != static_cast<int64_t>(i)) return false;
                               }
                               return true;
                             }();
  if (swap_last_two) {
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < rank; ++i) batch *= m.dims[i];
    TransposeTiled(static_cast<const T*>(in), static_cast<T*>(out), batch, m.dims[rank - 2],
                   m.dims[rank - 1], pool);
  } else {
    TransposeStrided(static_cast<const T*>(in), static_cast<T*>(out), m, pool);
  }
}

class TransposeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<TransposeKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<TransposeKernel>(new TransposeKernel(info));
  }

  std::vector<std::pair<int, int>> OutputAliases() const override {
    if (view_) return {{0, 0}};
    return {};
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    const Shape& in = x->shape();
    const Dims perm = PermFor(in.rank());
    INFERD_RETURN_IF_ERROR(CheckPerm(perm, in));
    Shape out_shape;
    for (int64_t p : perm) out_shape.push_back(in[p]);
    const MergedTranspose m = Merge(in, perm);
    bool order_kept = true;
    for (size_t i = 0; i < m.perm.size(); ++i) order_kept &= m.perm[i] == static_cast<int64_t>(i);
    if (order_kept || x->NumElements() == 0) {
      // Same bytes in the same order (or none): only the shape changes.
      return ctx.MakeOutputAlias(0, 0, out_shape).status();
    }
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    switch (elem) {
      case 1:
        RunTranspose<uint8_t>(x->raw_data(), y->raw_mutable_data(), m, ctx.threads());
        break;
      case 2:
        RunTranspose<uint16_t>(x->raw_data(), y->raw_mutable_data(), m, ctx.threads());
        break;
      case 4:
        RunTranspose<uint32_t>(x->raw_data(), y->raw_mutable_data(), m, ctx.threads());
        break;
      case 8:
        RunTranspose<uint64_t>(x->raw_data(), y->raw_mutable_data(), m, ctx.threads());
        break;
      default:
        return node_.Unimplemented(
            absl::StrCat("element type ", engine::DataTypeName(x->dtype()), " is not supported"));
    }
    return absl::OkStatus();
  }

 private:
  explicit TransposeKernel(const KernelInfo& info)
      : node_(info), has_perm_(info.HasAttribute("perm")), perm_(info.GetInts("perm")) {
    // With the input's shape known at load, a permutation that only moves dims of size 1 keeps
    // the bytes in place: the output is a view in every run.
    std::optional<Shape> in = info.input(0).shape.ToShape();
    if (in && CheckPerm(PermFor(in->rank()), *in).ok()) {
      const MergedTranspose m = Merge(*in, PermFor(in->rank()));
      bool order_kept = true;
      for (size_t i = 0; i < m.perm.size(); ++i) order_kept &= m.perm[i] == static_cast<int64_t>(i);
      view_ = order_kept || in->NumElements() == 0;
    }
  }

  Dims PermFor(size_t rank) const {  // inline storage: no allocation per run
    if (has_perm_) return Dims(perm_.begin(), perm_.end());
    Dims perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    return perm;
  }

  absl::Status CheckPerm(const Dims& perm, const Shape& in) const {
    absl::InlinedVector<bool, 8> seen(in.rank(), false);
    bool ok = perm.size() == in.rank();
    for (size_t i = 0; ok && i < perm.size(); ++i) {
      ok = perm[i] >= 0 && perm[i] < static_cast<int64_t>(in.rank()) && !seen[perm[i]];
      if (ok) seen[perm[i]] = true;
    }
    if (ok) return absl::OkStatus();
    return node_.InvalidArgument(absl::StrCat("perm [", absl::StrJoin(perm, ","),
                                              "] is not a permutation of the ", in.rank(),
                                              " dimensions of input ", in.ToString()));
  }

  const NodeLabel node_;
  const bool has_perm_;
  const std::vector<int64_t> perm_;
  bool view_ = false;  // known at load to be a view
};

}  // namespace

std::vector<engine::KernelDef> TransposeKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Transpose", 1, kMaxOpset, MovementTypes(),
                 FactoryOf<TransposeKernel>())};
}

}  // namespace inferd::kernels::cpu

// Pad, any fixed-size element type. Opsets 2-10: `pads` and `value` attributes; opset 11+: int64
// `pads` input and optional scalar `constant_value` input (0 when absent). pads =
// [begin_0, ..., begin_n-1, end_0, ..., end_n-1]; negative pads crop; opset 18+: the optional
// `axes` input (input 3) says which dims the pads are for (the others are not padded). Modes:
// constant, edge (repeat the border element), reflect (mirror without repeating the border; pads
// wider than the dimension reflect again, as numpy does), wrap (opset 19: circular).
// Trailing dimensions without padding are merged into one block; the output is then written row
// by row along the innermost padded dimension: the input part of a row is one memcpy, the pads
// are fills (constant) or block copies (edge, reflect). Parallel over rows.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/pad_args.h"
#include "kernels/cpu/registration.h"

namespace inferd::kernels::cpu {
namespace {

using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

// Index in [0, n) that output position `i` (relative to the input's start) reads; n > 0.
int64_t MapIndex(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == PadMode::kWrap) return (i % n + n) % n;
  if (mode == PadMode::kEdge || n == 1) return i < 0 ? 0 : n - 1;
  const int64_t period = 2 * (n - 1);  // reflect: ... 2 1 | 0 1 2 .. n-1 | n-2 ...
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - m;
}

// Fills `count` elements of `elem` bytes at dst with the pattern at `value`.
void Fill(unsigned char* dst, int64_t count, const unsigned char* value, size_t elem) {
  if (count <= 0) return;
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    FillN(reinterpret_cast<T*>(dst), count, v);
  };
  if (!WithElementSize(elem, fill)) {
    for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * elem, value, elem);
  }
}

class PadKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PadKernel>> Create(const KernelInfo& info) {
    INFERD_ASSIGN_OR_RETURN(PadArgs args, PadArgs::FromInfo(info));
    return std::unique_ptr<PadKernel>(new PadKernel(info, std::move(args)));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    const size_t elem = engine::ElementSize(x->dtype());
    if (elem == 0 || elem > 8) return UnsupportedType(x->dtype(), node_);
    INFERD_ASSIGN_OR_RETURN(const PadPlan plan, args_.Resolve(ctx, *x));
    const Dims& pads = plan.pads;
    const unsigned char* value = plan.value;
    const Shape& out_shape = plan.out_shape;
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
    if (y->NumElements() == 0) return absl::OkStatus();
    Run(*x, pads, value, elem, y, ctx.threads());
    return absl::OkStatus();
  }

 private:
  PadKernel(const KernelInfo& info, PadArgs args)
      : node_(info), args_(std::move(args)), mode_(args_.mode()) {}

  void Run(const Tensor& x, const Dims& pads, const unsigned char* value, size_t elem, Tensor* y,
           engine::ThreadPool& pool) const {
    const Shape& in = x.shape();
    const size_t rank = in.rank();
    // pass 1: merge the trailing unpadded dims into blocks; k = innermost padded dim.
    size_t k = rank;
    while (k > 0 && pads[k - 1] == 0 && pads[rank + k - 1] == 0) --k;
    if (k == 0) {  // nothing padded
      ParallelMemcpy(y->raw_mutable_data(), x.raw_data(), x.bytes(), pool);
      return;
    }
    --k;
    const size_t block = static_cast<size_t>(in.SizeFrom(k + 1)) * elem;
    const int64_t in_len = in[k], out_len = in_len + pads[k] + pads[rank + k];
    const int64_t before = pads[k];
    const Shape& out = y->shape();
    if (mode_ == PadMode::kConstant && in_len * static_cast<int64_t>(block) < kShortRowBytes &&
        std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p >= 0; })) {
      FillThenPlace(x, pads, k, block, value, elem, y, pool);
      return;
    }
    const Dims in_strides = StridesOf(in);  // elements
    int64_t rows = 1;
    for (size_t d = 0; d < k; ++d) rows *= out[d];
    const auto* src = static_cast<const unsigned char*>(x.raw_data());
    auto* dst = static_cast<unsigned char*>(y->raw_mutable_data());
    const int64_t row_bytes = out_len * static_cast<int64_t>(block);
    const int64_t block_elems = static_cast<int64_t>(block / elem);
    // pass 2: each output row along dim k; an odometer walks the output index of dims < k.
    pool.ParallelFor(rows, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(row_bytes, 1)),
                     [&](int64_t begin, int64_t end) {
                       Dims index(k, 0);
                       int64_t rest = begin;
                       for (size_t d = k; d-- > 0;) {
                         index[d] = rest % out[d];
                         rest /= out[d];
                       }
                       for (int64_t r = begin; r < end; ++r) {
                         unsigned char* row = dst + r * row_bytes;
                         // Source row: map each outer output index back to the input.
                         int64_t off = 0;
                         bool outside = false;
                         for (size_t d = 0; d < k; ++d) {
                           const int64_t o = index[d] - pads[d];
                           if (o < 0 || o >= in[d]) {
                             if (mode_ == PadMode::kConstant) {
                               outside = true;
                               break;
                             }
                             off += MapIndex(o, in[d], mode_) * in_strides[d];
                           } else {
                             off += o * in_strides[d];
                           }
                         }
                         if (outside) {
                           Fill(row, out_len * block_elems, value, elem);
                         } else {
                           WriteRow(src + off * elem, row, in_len, out_len, before, block,
                                    block_elems, value, elem);
                         }
                         for (size_t d = k; d-- > 0;) {  // odometer
                           if (++index[d] < out[d]) break;
                           index[d] = 0;
                         }
                       }
                     });
  }

  // Constant mode without cropping, short rows: the output filled with the value in one pass, then
  // each input row along dim k (in_len blocks) copied into its place. Per output row, as below, a
  // short row costs a memcpy and two fills; for long rows writing the output twice costs more.
  static constexpr int64_t kShortRowBytes = 256;
  void FillThenPlace(const Tensor& x, const Dims& pads, size_t k, size_t block,
                     const unsigned char* value, size_t elem, Tensor* y,
                     engine::ThreadPool& pool) const {
    const Shape& in = x.shape();
    const Shape& out = y->shape();
    auto* dst = static_cast<unsigned char*>(y->raw_mutable_data());
    const auto* src = static_cast<const unsigned char*>(x.raw_data());
    const int64_t total = y->NumElements();
    const int64_t chunk = std::max<int64_t>(1, kMoveGrainBytes / static_cast<int64_t>(elem));
    pool.ParallelFor(total, chunk, [&](int64_t begin, int64_t end) {
      Fill(dst + begin * static_cast<int64_t>(elem), end - begin, value, elem);
    });
    int64_t in_rows = 1;
    for (size_t d = 0; d < k; ++d) in_rows *= in[d];
    if (in_rows == 0 || in[k] == 0 || block == 0) return;
    const Dims out_strides = StridesOf(out);  // elements
    const int64_t row_bytes = in[k] * static_cast<int64_t>(block);
    pool.ParallelFor(
        in_rows, std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(row_bytes, 1)),
        [&](int64_t begin, int64_t end) {
          Dims index(k, 0);
          int64_t rest = begin;
          for (size_t d = k; d-- > 0;) {
            index[d] = rest % in[d];
            rest /= in[d];
          }
          for (int64_t r = begin; r < end; ++r) {
            int64_t off = pads[k] * out_strides[k];
            for (size_t d = 0; d < k; ++d) off += (index[d] + pads[d]) * out_strides[d];
            std::memcpy(dst + off * static_cast<int64_t>(elem), src + r * row_bytes, row_bytes);
            for (size_t d = k; d-- > 0;) {  // odometer over the input's dims < k
              if (++index[d] < in[d]) break;
              index[d] = 0;
            }
          }
        });
  }

  // One output row of out_len blocks from an input row of in_len blocks starting `before`
  // blocks in (negative: cropped).
  void WriteRow(const unsigned char* in, unsigned char* out, int64_t in_len, int64_t out_len,
                int64_t before, size_t block, int64_t block_elems, const unsigned char* value,
                size_t elem) const {
    const int64_t lo = std::clamp<int64_t>(before, 0, out_len);
    const int64_t hi = std::clamp<int64_t>(before + in_len, lo, out_len);
    if (hi > lo) std::memcpy(out + lo * block, in + (lo - before) * block, (hi - lo) * block);
    if (mode_ == PadMode::kConstant) {
      Fill(out, lo * block_elems, value, elem);
      Fill(out + hi * block, (out_len - hi) * block_elems, value, elem);
      return;
    }
    for (int64_t j = 0; j < lo; ++j) {
      std::memcpy(out + j * block, in + MapIndex(j - before, in_len, mode_) * block, block);
    }
    for (int64_t j = hi; j < out_len; ++j) {
      std::memcpy(out + j * block, in + MapIndex(j - before, in_len, mode_) * block, block);
    }
  }

  const NodeLabel node_;
  const PadArgs args_;
  const PadMode mode_;
};

}  // namespace

std::vector<engine::KernelDef> PadKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "Pad", 2, 10, types, FactoryOf<PadKernel>()),
          CpuDef(engine::kOnnxDomain, "Pad", 11, kMaxOpset, types, FactoryOf<PadKernel>())};
}

}  // namespace inferd::kernels::cpu

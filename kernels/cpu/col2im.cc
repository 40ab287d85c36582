// Col2Im (opset 18): the inverse of im2col. Input [N, C * prod(block_shape), L] holds, for each
// of the L sliding blocks of an image of `image_shape` (N-D), the C * prod(block_shape) values of
// the block; each value is added to the image position it came from (overlapping blocks sum).
// dilations, pads (begins then ends) and strides as in a convolution; L must equal the number of
// blocks they give. float32 and float64.
// How: one (n, c) image plane per work item, so no two threads write one position; each block
// element (block offset k, block index l) goes to one position or falls in the padding.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/type_dispatch.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

using Col2ImTypes = TypeList<float, double>;

// Per spatial dim: the image, block, stride, dilation, begin pad and number of block positions.
struct Geometry {
  Dims image, block, stride, dilation, pad_begin, blocks;
  int64_t block_volume = 1, block_count = 1, image_volume = 1;
};

class Col2ImKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<Col2ImKernel>> Create(const KernelInfo& info) {
    return std::unique_ptr<Col2ImKernel>(new Col2ImKernel(info));
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* image_t, RequiredInput(ctx, 1, node_));
    INFERD_ASSIGN_OR_RETURN(const Tensor* block_t, RequiredInput(ctx, 2, node_));
    Geometry g;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*image_t, "image_shape", node_, &g.image));
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*block_t, "block_shape", node_, &g.block));
    INFERD_RETURN_IF_ERROR(Plan(x->shape(), &g));
    const int64_t channels = x->shape()[1] / g.block_volume;
    Shape out{x->shape()[0], channels};
    for (int64_t d : g.image) out.push_back(d);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out));
    if (y->NumElements() == 0) return absl::OkStatus();
    return Dispatch(Col2ImTypes{}, x->dtype(), node_, [&](auto tag) {
      Run<typename decltype(tag)::type>(*x, g, *y, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  explicit Col2ImKernel(const KernelInfo& info)
      : node_(info),
        strides_(info.GetInts("strides")),
        dilations_(info.GetInts("dilations")),
        pads_(info.GetInts("pads")) {}

  absl::Status Plan(const Shape& in, Geometry* g) const {
    const size_t n = g->image.size();
    if (n == 0 || g->block.size() != n) {
      return node_.InvalidArgument(absl::StrCat("image_shape [", absl::StrJoin(g->image, ","),
                                                "] and block_shape [", absl::StrJoin(g->block, ","),
                                                "] must be non-empty and of equal length"));
    }
    auto value = [&](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
      return v.empty() ? fallback : v[i];
    };
    if ((!strides_.empty() && strides_.size() != n) ||
        (!dilations_.empty() && dilations_.size() != n) ||
        (!pads_.empty() && pads_.size() != 2 * n)) {
      return node_.InvalidArgument(
          absl::StrCat("strides and dilations need ", n, " values and pads ", 2 * n));
    }
    for (size_t i = 0; i < n; ++i) {
      g->stride.push_back(value(strides_, i, 1));
      g->dilation.push_back(value(dilations_, i, 1));
      g->pad_begin.push_back(value(pads_, i, 0));
      const int64_t pad_end = value(pads_, n + i, 0);
      const int64_t extent = (g->block[i] - 1) * g->dilation[i] + 1;
      if (g->block[i] < 1 || g->stride[i] < 1 || g->dilation[i] < 1 || g->image[i] < 0 ||
          g->pad_begin[i] < 0 || pad_end < 0) {
        return node_.InvalidArgument(
            "block_shape, strides and dilations must be >= 1, "
            "image_shape and pads >= 0");
      }
      const int64_t span = g->image[i] + g->pad_begin[i] + pad_end - extent;
      g->blocks.push_back(span < 0 ? 0 : span / g->stride[i] + 1);
      g->block_volume *= g->block[i];
      g->block_count *= g->blocks[i];
      g->image_volume *= g->image[i];
    }
    if (in.rank() != 3 || in[1] % g->block_volume != 0 || in[2] != g->block_count) {
      return node_.InvalidArgument(
          absl::StrCat("input ", in.ToString(), " must be [N, C * ", g->block_volume, ", ",
                       g->block_count, "] for image_shape [", absl::StrJoin(g->image, ","),
                       "] and block_shape [", absl::StrJoin(g->block, ","), "]"));
    }
    return absl::OkStatus();
  }

  template <typename T>
  void Run(const Tensor& x, const Geometry& g, Tensor& y, engine::ThreadPool& pool) const {
    const size_t n = g.image.size();
    const int64_t planes = y.shape()[0] * y.shape()[1];
    const T* src = x.data<T>();
    T* dst = y.mutable_data<T>();
    pool.ParallelFor(planes, 1, [&](int64_t begin, int64_t end) {
      Dims k(n), l(n);
      for (int64_t p = begin; p < end; ++p) {
        T* image = dst + p * g.image_volume;
        std::fill(image, image + g.image_volume, T(0));
        const T* cols = src + p * g.block_volume * g.block_count;
        std::fill(k.begin(), k.end(), 0);
        for (int64_t kk = 0; kk < g.block_volume; ++kk) {
          std::fill(l.begin(), l.end(), 0);
          const T* row = cols + kk * g.block_count;
          for (int64_t ll = 0; ll < g.block_count; ++ll) {
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < n && inside; ++d) {
              const int64_t pos = l[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
              inside = pos >= 0 && pos < g.image[d];
              offset = offset * g.image[d] + pos;
            }
            if (inside) image[offset] += row[ll];
            for (size_t d = n; d-- > 0;) {
              if (++l[d] < g.blocks[d]) break;
              l[d] = 0;
            }
          }
          for (size_t d = n; d-- > 0;) {
            if (++k[d] < g.block[d]) break;
            k[d] = 0;
          }
        }
      }
    });
  }

  const NodeLabel node_;
  const std::vector<int64_t> strides_, dilations_, pads_;
};

}  // namespace

std::vector<engine::KernelDef> Col2ImKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Col2Im", 18, kMaxOpset, TypesOf(Col2ImTypes{}),
                 FactoryOf<Col2ImKernel>())};
}

}  // namespace inferd::kernels::cpu

// Pooling, 1-D to 3-D, one oneDNN pooling primitive in plain NC[D][H]W layout per input shape:
//   MaxPool (kernel_shape, strides, pads, dilations, ceil_mode, auto_pad; float32, int8, uint8):
//     padding never wins the max. With the Indices output (opset 8+, storage_order) the pool
//     runs as plain loops instead (pool_indices.cc), since oneDNN does not report the argmax;
//     2-D float32 pools run in our own loops too (MaxPool2D), faster than oneDNN on plain NCHW.
//   AveragePool (count_include_pad, ceil_mode, auto_pad, pads, strides): oneDNN's
//     avg_include_padding divides by the whole kernel; where ceil_mode makes a last window hang
//     over the explicit padding, ONNX divides by the part inside input + pads, so those outputs
//     are rescaled after the primitive (PoolPlan::rescale).
//   GlobalAveragePool, GlobalMaxPool: the window is the whole spatial extent.
// With `blocked_input` (engine/blocked_layouts.h) x is channel-blocked: 2-D float MaxPool then
// writes y blocked, the global pools their [N, C, 1...] output, in our own loops. With
// `channels_last` (engine/int8_channels_last.h) an 8-bit 2-D MaxPool reads and writes NHWC bytes.
#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/max_pool_2d.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/pool_indices.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/shape_cache.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

bool IsGlobal(PoolKind k) { return k == PoolKind::kGlobalMax || k == PoolKind::kGlobalAverage; }
bool IsMax(PoolKind k) { return k == PoolKind::kMax || k == PoolKind::kGlobalMax; }

struct PoolAttributes {
  PoolKind kind = PoolKind::kMax;
  WindowAttributes window;  // unused by the global pools
  bool count_include_pad = false;
  int64_t storage_order = 0;  // Indices: 0 row-major, 1 column-major
  // x channel-blocked (engine/blocked_layouts.h): 2-D float MaxPool then writes y blocked too;
  // the global pools write their [N, C, 1...] output, the same bytes in either layout.
  bool blocked_input = false;
  // x and y channels-last (engine/int8_channels_last.h): 2-D 8-bit MaxPool only.
  bool channels_last = false;

  static absl::StatusOr<PoolAttributes> Read(const KernelInfo& info, PoolKind kind) {
    PoolAttributes a;
    a.kind = kind;
    // Set by the engine's pass (kBlockedInputAttr there).
    a.blocked_input = info.GetInt("blocked_input", 0) != 0;
    a.channels_last = info.GetInt("channels_last", 0) != 0;
    if (IsGlobal(kind)) return a;
    INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
    if (a.window.kernel_shape.empty()) {
      return info.Error("required attribute 'kernel_shape' is missing");
    }
    a.count_include_pad = info.GetInt("count_include_pad", 0) != 0;
    a.storage_order = info.GetInt("storage_order", 0);
    if (a.storage_order != 0 && a.storage_order != 1) {
      return info.Error(absl::StrCat("storage_order ", a.storage_order, " must be 0 or 1"));
    }
    return a;
  }
};

absl::StatusOr<dnnl::memory::data_type> DnnlType(DataType t, const NodeLabel& node) {
  switch (t) {
    case DataType::kFloat32:
      return dnnl::memory::data_type::f32;
    case DataType::kUint8:
      return dnnl::memory::data_type::u8;
    case DataType::kInt8:
      return dnnl::memory::data_type::s8;
    default:
      return node.Unimplemented(
          absl::StrCat("element type ", engine::DataTypeName(t), " is not supported"));
  }
}

// Everything built for one input shape. The planes (N x C) are split into parts that the
// kernel's intra-op threads run at once (single-threaded primitives, as MatMulPrimitive): the
// tensor is viewed as [1, N*C, spatial...] and each part pools a range of planes.
struct PoolPlan {
  struct Kind {  // one per distinct number of planes
    dnnl::pooling_v2_forward::primitive_desc pd;
    dnnl::pooling_v2_forward primitive;
    size_t scratchpad = 0;
    int64_t planes = 0;
  };
  struct Part {
    int kind = 0;
    int64_t src_offset = 0, dst_offset = 0;  // bytes
  };
  Shape out;
  WindowGeometry window;
  bool empty = false;  // empty output: nothing to run
  std::vector<Kind> kinds;
  std::vector<Part> parts;
  size_t region = 0;                     // scratchpad bytes per slot (parts running at once)
  size_t scratchpad_bytes = 0;           // region * slots
  std::unique_ptr<MemoryPool> memories;  // src, dst, scratchpad per part
  // Per spatial dim, per output index: kernel size / window size inside input + pads, for
  // AveragePool with count_include_pad whose ceil_mode windows overhang; empty when none does.
  std::vector<std::vector<float>> rescale;
};
enum PoolArg { kSrc, kDst, kScratchpad };

// 2-D MaxPool (float32, and the 8-bit tensors of quantized CNNs) runs in our own loops (MaxPool2D
// below), not through oneDNN: its plan holds the geometry only, with no primitive and no
// scratchpad.
bool UsesOwnMaxPool2D(PoolKind kind, DataType type, size_t rank) {
  return kind == PoolKind::kMax && rank == 4 &&
         (type == DataType::kFloat32 || type == DataType::kUint8 || type == DataType::kInt8);
}

// AveragePool with count_include_pad: per spatial dim and output position, kernel size / the
// positions inside the explicitly padded input (empty when every window is whole).
std::vector<std::vector<float>> IncludePadRescale(absl::Span<const int64_t> spatial,
                                                  const WindowGeometry& w) {
  bool any = false;
  std::vector<std::vector<float>> rescale(w.out.size());
  for (size_t i = 0; i < w.out.size(); ++i) {
    const int64_t limit = spatial[i] + w.pad_end[i];  // end of input + explicit pads
    for (int64_t o = 0; o < w.out[i]; ++o) {
      const int64_t start = o * w.strides[i] - w.pad_begin[i];
      const int64_t inside = std::min(start + w.kernel[i], limit) - start;
      rescale[i].push_back(static_cast<float>(w.kernel[i]) / static_cast<float>(inside));
      any = any || inside != w.kernel[i];
    }
  }
  if (!any) rescale.clear();
  return rescale;
}

dnnl::algorithm PoolAlgorithm(const PoolAttributes& attrs) {
  if (IsMax(attrs.kind)) return dnnl::algorithm::pooling_max;
  return attrs.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                 : dnnl::algorithm::pooling_avg_exclude_padding;
}

// The output shape, window and (unless the output is empty) primitive descriptor for input `x`.
absl::Status MakePoolPd(const PoolAttributes& attrs, const Shape& x, DataType type, int threads,
                        const NodeLabel& node, PoolPlan& plan) {
  if (x.rank() < 3 || x.rank() > 5) {
    return node.InvalidArgument(absl::StrCat("input has shape ", x.ToString(),
                                             " but a rank-3, -4 or -5 input (N,C,spatial...) is "
                                             "expected"));
  }
  absl::Span<const int64_t> spatial = x.dims().subspan(2);
  if (IsGlobal(attrs.kind)) {
    WindowAttributes global;
    INFERD_ASSIGN_OR_RETURN(plan.window, ComputeWindow(global, spatial, spatial, node));
  } else {
    INFERD_ASSIGN_OR_RETURN(plan.window,
                            ComputeWindow(attrs.window, spatial, attrs.window.kernel_shape, node));
  }
  const WindowGeometry& w = plan.window;
  plan.out = Shape{x[0], x[1]};
  for (int64_t d : w.out) plan.out.push_back(d);
  plan.empty = plan.out.NumElements() == 0 || x.NumElements() == 0;
  if (plan.empty) return absl::OkStatus();
  if (attrs.kind == PoolKind::kAverage && attrs.count_include_pad) {
    plan.rescale = IncludePadRescale(spatial, w);
  }
  if (UsesOwnMaxPool2D(attrs.kind, type, x.rank())) return absl::OkStatus();
  INFERD_ASSIGN_OR_RETURN(dnnl::memory::data_type dt, DnnlType(type, node));
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  // A pooled element costs about what 20 FLOPs of a matmul do (PartCount's unit).
  double kernel_size = 1;
  for (int64_t k : w.kernel) kernel_size *= static_cast<double>(k);
  const int64_t planes = x[0] * x[1];
  const int64_t count =
      PartCount(threads, 20.0 * static_cast<double>(plan.out.NumElements()) * kernel_size, planes);
  const int64_t in_plane = x.SizeFrom(2), out_plane = plan.out.SizeFrom(2);
  const int64_t element = static_cast<int64_t>(engine::ElementSize(type));
  return CatchDnnl(node, "creating the pooling", [&]() -> absl::Status {
    dnnl::memory::dims dilations;
    for (int64_t d : w.dilations) dilations.push_back(d - 1);  // oneDNN counts the gaps
    const dnnl::algorithm algorithm = PoolAlgorithm(attrs);
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    int64_t start = 0;
    size_t scratch = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t size = planes / count + (i < planes % count ? 1 : 0);
      int kind = -1;
      for (size_t k = 0; k < plan.kinds.size(); ++k) {
        if (plan.kinds[k].planes == size) kind = static_cast<int>(k);
      }
      if (kind < 0) {
        dnnl::memory::dims src_dims = ToDnnlDims(x.dims()), dst_dims = ToDnnlDims(plan.out.dims());
        src_dims[0] = dst_dims[0] = 1;
        src_dims[1] = dst_dims[1] = size;
        dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm,
                                            PlainDesc(src_dims, dt), PlainDesc(dst_dims, dt),
                                            ToDnnlDims(w.strides), ToDnnlDims(w.kernel), dilations,
                                            ToDnnlDims(w.pad_begin), ToDnnlDims(w.pad_end_floor));
        PoolPlan::Kind k;
        k.pd = dnnl::pooling_v2_forward::primitive_desc(desc, UserScratchpadAttr(), *eng);
        k.scratchpad = k.pd.scratchpad_desc().get_size();
        k.planes = size;
        kind = static_cast<int>(plan.kinds.size());
        plan.kinds.push_back(std::move(k));
      }
      PoolPlan::Part part;
      part.kind = kind;
      part.src_offset = start * in_plane * element;
      part.dst_offset = start * out_plane * element;
      scratch = std::max(scratch, (plan.kinds[kind].scratchpad + 63) / 64 * 64);
      plan.parts.push_back(part);
      start += size;
    }
    plan.region = scratch;
    plan.scratchpad_bytes =
        scratch * static_cast<size_t>(std::min<int64_t>(std::max(threads, 1), count));
    return absl::OkStatus();
  });
}

// Multiplies each output of a [N, C, spatial...] float tensor by the product of its positions'
// factors (only AveragePool's overhanging ceil_mode windows have factors other than 1).
void Rescale(const std::vector<std::vector<float>>& rescale, const Shape& out, float* y) {
  const size_t sp = rescale.size();
  int64_t dims[3] = {1, 1, 1};
  static const float kOne = 1.0f;
  const float* f[3] = {&kOne, &kOne, &kOne};
  for (size_t i = 0; i < sp; ++i) {
    dims[3 - sp + i] = out[2 + i];
    f[3 - sp + i] = rescale[i].data();
  }
  const int64_t planes = out[0] * out[1], plane = dims[0] * dims[1] * dims[2];
  for (int64_t d = 0; d < dims[0]; ++d) {
    for (int64_t h = 0; h < dims[1]; ++h) {
      for (int64_t w = 0; w < dims[2]; ++w) {
        const float s = f[0][sp == 3 ? d : 0] * f[1][sp >= 2 ? h : 0] * f[2][w];
        if (s == 1.0f) continue;
        const int64_t at = (d * dims[1] + h) * dims[2] + w;
        for (int64_t p = 0; p < planes; ++p) y[p * plane + at] *= s;
      }
    }
  }
}

// MaxPool over a channel-blocked 2-D float tensor ([N][C/B][H][W][B]): the same windows as
// MaxPool2D, each position a vector of B channels (kept in registers: B is a template
// argument). Block planes are split over the pool's threads.
template <int B>
void MaxPool2DBlocked(const float* x, float* y, int64_t block_planes, const Shape& in,
                      const Shape& out, const WindowGeometry& w, engine::ThreadPool& pool) {
  const int64_t H = in[2], W = in[3], OH = out[2], OW = out[3];
  const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1], ph = w.pad_begin[0], pw = w.pad_begin[1];
  pool.ParallelFor(block_planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, OH * OW)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t p = begin; p < end; ++p) {
                       const float* xp = x + p * H * W * B;
                       float* yp = y + p * OH * OW * B;
                       for (int64_t oh = 0; oh < OH; ++oh) {
                         for (int64_t ow = 0; ow < OW; ++ow) {
                           float m[B];
                           for (int b = 0; b < B; ++b)
                             m[b] = -std::numeric_limits<float>::infinity();
                           for (int64_t i = 0; i < kh; ++i) {
                             const int64_t h = oh * sh - ph + i * dh;
                             if (h < 0 || h >= H) continue;
                             for (int64_t j = 0; j < kw; ++j) {
                               const int64_t c = ow * sw - pw + j * dw;
                               if (c < 0 || c >= W) continue;
                               const float* v = xp + (h * W + c) * B;
#pragma omp simd
                               for (int b = 0; b < B; ++b) m[b] = std::max(m[b], v[b]);
                             }
                           }
                           std::copy(m, m + B, yp + (oh * OW + ow) * B);
                         }
                       }
                     }
                   });
}

// GlobalAveragePool / GlobalMaxPool over a channel-blocked float tensor ([N][C/B][spatial][B]):
// y is [N, C, 1...], plain (the same bytes as blocked).
void GlobalPoolBlocked(const float* x, float* y, int64_t block_planes, int64_t block,
                       int64_t spatial, bool max, engine::ThreadPool& pool) {
  pool.ParallelFor(block_planes, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, spatial)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t p = begin; p < end; ++p) {
                       const float* xp = x + p * spatial * block;
                       float* m = y + p * block;
                       std::fill(m, m + block,
                                 max ? -std::numeric_limits<float>::infinity() : 0.0f);
                       for (int64_t s = 0; s < spatial; ++s) {
                         const float* v = xp + s * block;
                         if (max) {
#pragma omp simd
                           for (int64_t b = 0; b < block; ++b) m[b] = std::max(m[b], v[b]);
                         } else {
#pragma omp simd
                           for (int64_t b = 0; b < block; ++b) m[b] += v[b];
                         }
                       }
                       if (!max) {
                         const float scale = 1.0f / static_cast<float>(spatial);
                         for (int64_t b = 0; b < block; ++b) m[b] *= scale;
                       }
                     }
                   });
}

class PoolKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<PoolKernel>> Create(const KernelInfo& info, PoolKind kind) {
    INFERD_ASSIGN_OR_RETURN(PoolAttributes attrs, PoolAttributes::Read(info, kind));
    auto k = std::unique_ptr<PoolKernel>(new PoolKernel(info, std::move(attrs)));
    if (k->indices_) return k;  // plain loops: nothing to build
    if (std::optional<Shape> x = StaticInputShape(info, 0)) {
      const Shape* refs[] = {&*x};
      INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const PoolPlan> plan, k->BuildPlan(*x));
      k->cache_.Pin(refs, k->threads_, std::move(plan));
    }
    return k;
  }

  static absl::StatusOr<size_t> EstimateWorkspace(const KernelInfo& info, PoolKind kind) {
    NodeLabel node(info);
    INFERD_ASSIGN_OR_RETURN(PoolAttributes attrs, PoolAttributes::Read(info, kind));
    if (kind == PoolKind::kMax && info.output(1).present) return size_t{0};
    std::optional<Shape> x = StaticInputShape(info, 0);
    if (!x) return node.InvalidArgument("input shape is not static");
    PoolPlan plan;
    INFERD_RETURN_IF_ERROR(
        MakePoolPd(attrs, *x, info.input(0).type, info.intra_op_threads(), node, plan));
    return plan.scratchpad_bytes;
  }

  absl::Status Compute(KernelContext& ctx) const override {
    INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
    INFERD_RETURN_IF_ERROR(CheckType(*x, type_, 0, node_));
    if (indices_) return ComputeWithIndices(ctx, *x);
    INFERD_ASSIGN_OR_RETURN(std::shared_ptr<const PoolPlan> plan, PlanFor(x->shape()));
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type_, plan->out));
    if (plan->empty) return absl::OkStatus();
    if (attrs_.blocked_input) return ComputeBlocked(ctx, *x, *plan, *y);
    if (UsesOwnMaxPool2D(attrs_.kind, type_, x->shape().rank())) {
      const int64_t planes = x->shape()[0] * x->shape()[1];
      if (attrs_.channels_last && type_ == DataType::kUint8) {
        MaxPool2DChannelsLast(x->data<uint8_t>(), y->mutable_data<uint8_t>(), x->shape(), plan->out,
                              plan->window, ctx.threads());
      } else if (attrs_.channels_last && type_ == DataType::kInt8) {
        MaxPool2DChannelsLast(x->data<int8_t>(), y->mutable_data<int8_t>(), x->shape(), plan->out,
                              plan->window, ctx.threads());
      } else if (attrs_.channels_last) {
        return node_.InvalidArgument("a channels-last x is pooled for 8-bit 2-D MaxPool only");
      } else if (type_ == DataType::kUint8) {
        MaxPool2D(x->data<uint8_t>(), y->mutable_data<uint8_t>(), planes, x->shape(), plan->out,
                  plan->window, ctx.threads());
      } else if (type_ == DataType::kInt8) {
        MaxPool2D(x->data<int8_t>(), y->mutable_data<int8_t>(), planes, x->shape(), plan->out,
                  plan->window, ctx.threads());
      } else {
        MaxPool2D(x->data<float>(), y->mutable_data<float>(), planes, x->shape(), plan->out,
                  plan->window, ctx.threads());
      }
      return absl::OkStatus();
    }
    INFERD_ASSIGN_OR_RETURN(void* scratchpad, ScratchpadFor(ctx, plan->scratchpad_bytes, node_));
    INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, plan->memories->Acquire(node_));
    const char* x_data = static_cast<const char*>(x->raw_data());
    char* y_data = static_cast<char*>(y->raw_mutable_data());
    const int count = static_cast<int>(plan->parts.size());
    for (int i = 0; i < count; ++i) {
      const PoolPlan::Part& part = plan->parts[i];
      INFERD_RETURN_IF_ERROR(mem.Bind(3 * i + kSrc, x_data + part.src_offset, node_));
      INFERD_RETURN_IF_ERROR(mem.Bind(3 * i + kDst, y_data + part.dst_offset, node_));
    }
    return RunParts(ctx.threads(), count, [&](int i, int slot) -> absl::Status {
      const PoolPlan::Part& part = plan->parts[i];
      const PoolPlan::Kind& kind = plan->kinds[part.kind];
      if (kind.scratchpad != 0) {
        INFERD_RETURN_IF_ERROR(mem.Bind(
            3 * i + kScratchpad, static_cast<char*>(scratchpad) + slot * plan->region, node_));
      }
      const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, mem[3 * i + kSrc]},
                                      {DNNL_ARG_DST, mem[3 * i + kDst]},
                                      {DNNL_ARG_SCRATCHPAD, mem[3 * i + kScratchpad]}};
      INFERD_RETURN_IF_ERROR(Execute(kind.primitive,
                                     absl::MakeConstSpan(args, kind.scratchpad != 0 ? 3 : 2), 1,
                                     node_, "running the pooling"));
      if (!plan->rescale.empty()) {
        Shape part_out = plan->out;
        part_out[0] = 1;
        part_out[1] = kind.planes;
        Rescale(plan->rescale, part_out, reinterpret_cast<float*>(y_data + part.dst_offset));
      }
      return absl::OkStatus();
    });
  }

  std::vector<engine::WorkspaceRequirement> DeclareWorkspaceRequirements(
      absl::Span<const Shape> input_shapes) const override {
    if (input_shapes.empty() || indices_) return {};
    absl::StatusOr<std::shared_ptr<const PoolPlan>> plan = PlanFor(input_shapes[0]);
    if (!plan.ok()) return {};  // Compute reports the error
    return ScratchpadRequirement((*plan)->scratchpad_bytes);
  }

 private:
  PoolKernel(const KernelInfo& info, PoolAttributes attrs)
      : node_(info),
        attrs_(std::move(attrs)),
        type_(info.input(0).type),
        indices_(attrs_.kind == PoolKind::kMax && info.output(1).present),
        threads_(info.intra_op_threads()) {}

  // A channel-blocked x: 2-D float MaxPool and the global pools.
  absl::Status ComputeBlocked(KernelContext& ctx, const Tensor& x, const PoolPlan& plan,
                              Tensor& y) const {
    const Shape& s = x.shape();
    const int64_t block = ChannelBlock();
    const bool max_2d = UsesOwnMaxPool2D(attrs_.kind, type_, s.rank());
    if ((!max_2d && !IsGlobal(attrs_.kind)) || type_ != DataType::kFloat32 || s[1] % block != 0 ||
        (block != 8 && block != 16)) {
      return node_.InvalidArgument(absl::StrCat(
          "a blocked input is read by 2-D float MaxPool and the global pools only, with channels "
          "a multiple of ",
          block, "; got ", s.ToString()));
    }
    const int64_t block_planes = s[0] * (s[1] / block);
    if (max_2d) {
      auto run = block == 16 ? &MaxPool2DBlocked<16> : &MaxPool2DBlocked<8>;
      run(x.data<float>(), y.mutable_data<float>(), block_planes, s, plan.out, plan.window,
          ctx.threads());
    } else {
      GlobalPoolBlocked(x.data<float>(), y.mutable_data<float>(), block_planes, block,
                        s.SizeFrom(2), attrs_.kind == PoolKind::kGlobalMax, ctx.threads());
    }
    return absl::OkStatus();
  }

  // MaxPool with the Indices output.
  absl::Status ComputeWithIndices(KernelContext& ctx, const Tensor& x) const {
    PoolPlan plan;  // geometry only: no primitive descriptor
    if (x.shape().rank() < 3 || x.shape().rank() > 5) {
      return node_.InvalidArgument(absl::StrCat("input has shape ", x.shape().ToString(),
                                                " but a rank-3, -4 or -5 input is expected"));
    }
    INFERD_ASSIGN_OR_RETURN(plan.window, ComputeWindow(attrs_.window, x.shape().dims().subspan(2),
                                                       attrs_.window.kernel_shape, node_));
    Shape out{x.shape()[0], x.shape()[1]};
    for (int64_t d : plan.window.out) out.push_back(d);
    INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, type_, out));
    Tensor* indices = nullptr;
    if (ctx.output_wanted(1)) {
      INFERD_ASSIGN_OR_RETURN(indices, ctx.MakeOutputTensor(1, DataType::kInt64, out));
    }
    if (out.NumElements() == 0) return absl::OkStatus();
    return MaxPoolWithIndices(x, plan.window, attrs_.storage_order, ctx.threads(), *y, indices,
                              node_);
  }

  absl::StatusOr<std::shared_ptr<const PoolPlan>> BuildPlan(const Shape& x) const {
    auto plan = std::make_shared<PoolPlan>();
    INFERD_RETURN_IF_ERROR(MakePoolPd(attrs_, x, type_, threads_, node_, *plan));
    if (!plan->empty && !plan->kinds.empty()) {
      INFERD_RETURN_IF_ERROR(CatchDnnl(node_, "creating the pooling", [&]() -> absl::Status {
        ScopedOmpThreads scoped(1);
        std::vector<dnnl::memory::desc> descs;
        for (PoolPlan::Kind& kind : plan->kinds) kind.primitive = dnnl::pooling_v2_forward(kind.pd);
        for (const PoolPlan::Part& part : plan->parts) {
          const PoolPlan::Kind& kind = plan->kinds[part.kind];
          descs.insert(descs.end(),
                       {kind.pd.src_desc(), kind.pd.dst_desc(), kind.pd.scratchpad_desc()});
        }
        plan->memories = std::make_unique<MemoryPool>(std::move(descs));
        return absl::OkStatus();
      }));
    }
    return std::shared_ptr<const PoolPlan>(std::move(plan));
  }

  absl::StatusOr<std::shared_ptr<const PoolPlan>> PlanFor(const Shape& x) const {
    const Shape* refs[] = {&x};
    return cache_.GetOrCreate(refs, threads_, [&] { return BuildPlan(x); });
  }

  const NodeLabel node_;
  const PoolAttributes attrs_;
  const DataType type_;
  const bool indices_;  // MaxPool with its Indices output in the graph
  const int threads_;
  mutable ShapeCache<PoolPlan> cache_;
};

engine::KernelDef PoolDef(absl::string_view op, PoolKind kind, std::vector<DataType> types) {
  return CpuDef(
      engine::kOnnxDomain, op, 1, kMaxOpset, std::move(types),
      [kind](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<engine::OpKernel>> {
        absl::StatusOr<std::unique_ptr<PoolKernel>> k = PoolKernel::Create(info, kind);
        if (!k.ok()) return k.status();
        return std::unique_ptr<engine::OpKernel>(std::move(k).value());
      },
      [kind](const KernelInfo& info) { return PoolKernel::EstimateWorkspace(info, kind); });
}

}  // namespace

std::vector<engine::KernelDef> PoolKernelDefs() {
  // Opset changes of these ops only add attributes (whose defaults give the older behaviour) or
  // element types (AveragePool 19: dilations, read for every version): one definition each
  // covers every version.
  return {PoolDef("MaxPool", PoolKind::kMax, TypesOf(MaxPoolTypes{})),
          PoolDef("AveragePool", PoolKind::kAverage, {DataType::kFloat32}),
          PoolDef("GlobalMaxPool", PoolKind::kGlobalMax, {DataType::kFloat32}),
          PoolDef("GlobalAveragePool", PoolKind::kGlobalAverage, {DataType::kFloat32})};
}

}  // namespace inferd::kernels::cpu

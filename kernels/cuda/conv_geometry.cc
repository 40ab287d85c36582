#include "kernels/cuda/conv_geometry.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu/conv_shape.h"

namespace inferd::kernels::cuda {
namespace {

using engine::Shape;

// [N, C, spatial...] in cuDNN's rank: a 1-D tensor gets a height of 1.
std::vector<int64_t> CudnnDims(absl::Span<const int64_t> dims) {
  std::vector<int64_t> v(dims.begin(), dims.end());
  if (v.size() == 3) v.insert(v.begin() + 2, 1);
  return v;
}

// The same for a per-spatial-dim value: `fill` for the added height.
std::vector<int64_t> CudnnSpatial(std::vector<int64_t> v, int64_t fill) {
  if (v.size() == 1) v.insert(v.begin(), fill);
  return v;
}

// cuDNN takes dimensions and strides as int: every tensor's element count must fit.
absl::Status CheckIntRange(const ConvGeometry& g, const cpu::NodeLabel& node) {
  for (const std::vector<int64_t>* dims : {&g.x, &g.w, &g.y}) {
    int64_t elements = 1;
    for (int64_t d : *dims) {
      if (d > INT_MAX || elements > INT_MAX / std::max<int64_t>(d, 1)) {
        return node.Unimplemented(
            absl::StrCat("tensor [", absl::StrJoin(*dims, ","), "] exceeds cuDNN's int range"));
      }
      elements *= d;
    }
  }
  for (const std::vector<int64_t>* v : {&g.pad, &g.strides, &g.dilations}) {
    for (int64_t d : *v) {
      if (d > INT_MAX) return node.Unimplemented(absl::StrCat("value ", d, " exceeds int"));
    }
  }
  return absl::OkStatus();
}

// Sets cuDNN's view of `g` (x, w, y, the node's staged tensor, per spatial dim padding, strides,
// dilations and the staging offset) in cuDNN's rank, and checks it fits cuDNN's ints.
// (The spans may point into `g.out`, which this leaves alone.)
absl::Status Finish(absl::Span<const int64_t> x, absl::Span<const int64_t> w,
                    absl::Span<const int64_t> y, absl::Span<const int64_t> node_tensor,
                    const cpu::WindowGeometry& win, std::vector<int64_t> pad,
                    std::vector<int64_t> offset, const cpu::NodeLabel& node, ConvGeometry& g) {
  g.x = CudnnDims(x);
  g.w = CudnnDims(w);
  g.y = CudnnDims(y);
  g.node_tensor = CudnnDims(node_tensor);
  g.pad = CudnnSpatial(std::move(pad), 0);
  g.strides = CudnnSpatial(win.strides, 1);
  g.dilations = CudnnSpatial(win.dilations, 1);
  g.offset = CudnnSpatial(std::move(offset), 0);
  return CheckIntRange(g, node);
}

absl::StatusOr<ConvGeometry> ConvForward(const ConvAttributes& attrs, const Shape& x,
                                         const Shape& w, const Shape* b,
                                         const cpu::NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(cpu::CheckConvRanks(x, w, node));
  INFERD_RETURN_IF_ERROR(cpu::CheckConvChannels(x, w, attrs.group, node));
  const int64_t filters = w[0];
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  INFERD_RETURN_IF_ERROR(
      cpu::CheckKernelAndBias(w, attrs.window.window.kernel_shape, b, filters, node));
  INFERD_ASSIGN_OR_RETURN(
      cpu::WindowGeometry win,
      cpu::ComputeWindow(attrs.window.window, x.dims().subspan(2), kernel, node));
  ConvGeometry g;
  g.out = Shape{x[0], filters};
  for (int64_t o : win.out) g.out.push_back(o);
  g.output = CudnnDims(g.out.dims());
  g.group = attrs.group;
  g.transposed = attrs.transposed;
  g.degenerate = g.out.NumElements() == 0 || w[1] == 0;
  if (g.degenerate) return g;

  // Symmetric padding by the smaller pad; the rest of the larger one is in the staging buffer.
  const size_t sp = win.out.size();
  std::vector<int64_t> staged_x(x.dims().begin(), x.dims().end()), pad(sp), offset(sp);
  for (size_t i = 0; i < sp; ++i) {
    pad[i] = std::min(win.pad_begin[i], win.pad_end[i]);
    offset[i] = win.pad_begin[i] - pad[i];
    staged_x[2 + i] += win.pad_begin[i] + win.pad_end[i] - 2 * pad[i];
    g.staged = g.staged || staged_x[2 + i] != x[2 + i];
    // What cuDNN will compute: floor((x + 2 pad - extent) / stride) + 1 outputs.
    const int64_t extent = (win.kernel[i] - 1) * win.dilations[i] + 1;
    const int64_t cudnn_out = (staged_x[2 + i] + 2 * pad[i] - extent) / win.strides[i] + 1;
    if (cudnn_out != win.out[i]) {
      return node.Internal(absl::StrCat("spatial dimension ", i, ": cuDNN would compute ",
                                        cudnn_out, " outputs, ONNX says ", win.out[i]));
    }
  }
  INFERD_RETURN_IF_ERROR(Finish(staged_x, w.dims(), g.out.dims(), x.dims(), win, std::move(pad),
                                std::move(offset), node, g));
  return g;
}

absl::StatusOr<ConvGeometry> ConvTransposed(const ConvAttributes& attrs, const Shape& x,
                                            const Shape& w, const Shape* b,
                                            const cpu::NodeLabel& node) {
  INFERD_RETURN_IF_ERROR(cpu::CheckConvRanks(x, w, node));
  INFERD_RETURN_IF_ERROR(cpu::CheckConvTransposeChannels(x, w, attrs.group, node));
  const int64_t filters = w[1] * attrs.group;
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  INFERD_RETURN_IF_ERROR(
      cpu::CheckKernelAndBias(w, attrs.window.window.kernel_shape, b, filters, node));
  INFERD_ASSIGN_OR_RETURN(
      cpu::WindowGeometry win,
      cpu::ComputeTransposedWindow(attrs.window, x.dims().subspan(2), kernel, node));
  ConvGeometry g;
  g.out = Shape{x[0], filters};
  for (int64_t o : win.out) g.out.push_back(o);
  g.output = CudnnDims(g.out.dims());
  g.group = attrs.group;
  g.transposed = attrs.transposed;
  g.degenerate = g.out.NumElements() == 0 || x.NumElements() == 0 || w.NumElements() == 0;
  if (g.degenerate) return g;

  // The full output z of the transposed convolution has natural = s * (in - 1) + extent
  // positions, and output j is z[j + pad_begin] (0 past z's end). cuDNN's backward data with
  // symmetric pad p and an output of size n writes z[j + p] for j < n, for any n with
  // floor((n + 2p - extent) / s) + 1 = in, i.e. n in [natural - 2p, natural - 2p + s - 1]. The
  // node's output is cuDNN's at offset pad_begin - p, so p <= pad_begin, and it fits when
  // out + pad_begin - p <= natural - 2p + s - 1, i.e. p <= pad_end + s - 1.
  const size_t sp = win.out.size();
  std::vector<int64_t> full(g.out.dims().begin(), g.out.dims().end()), pad(sp), offset(sp);
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i], s = win.strides[i];
    const int64_t extent = (win.kernel[i] - 1) * win.dilations[i] + 1;
    const int64_t natural = s * (in - 1) + extent;
    const int64_t p = std::min(win.pad_begin[i], win.pad_end[i] + s - 1);
    if (p < 0) {
      return node.Unimplemented(absl::StrCat(
          "spatial dimension ", i, ": the output (", win.out[i], ") reaches ", -win.pad_end[i],
          " positions past the last one an input reaches; cuDNN reaches at most stride - 1 = ",
          s - 1));
    }
    pad[i] = p;
    offset[i] = win.pad_begin[i] - p;
    full[2 + i] = std::max(win.out[i] + offset[i], natural - 2 * p);
    g.staged = g.staged || full[2 + i] != win.out[i] || offset[i] != 0;
    const int64_t cudnn_in = (full[2 + i] + 2 * p - extent) / s + 1;
    if (cudnn_in != in) {
      return node.Internal(absl::StrCat("spatial dimension ", i, ": cuDNN would read ", cudnn_in,
                                        " inputs, the node has ", in));
    }
  }
  INFERD_RETURN_IF_ERROR(Finish(x.dims(), w.dims(), full, g.out.dims(), win, std::move(pad),
                                std::move(offset), node, g));
  return g;
}

}  // namespace

absl::StatusOr<ConvAttributes> ConvAttributes::Read(const engine::KernelInfo& info,
                                                    bool transposed) {
  ConvAttributes a;
  a.transposed = transposed;
  if (transposed) {
    INFERD_ASSIGN_OR_RETURN(a.window, cpu::TransposedWindowAttributes::Read(info));
  } else {
    INFERD_ASSIGN_OR_RETURN(a.window.window, cpu::WindowAttributes::Read(info));
  }
  a.group = info.GetInt("group", 1);
  if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
  return a;
}

absl::StatusOr<ConvGeometry> ComputeConvGeometry(const ConvAttributes& attrs, const Shape& x,
                                                 const Shape& w, const Shape* b,
                                                 const cpu::NodeLabel& node) {
  return attrs.transposed ? ConvTransposed(attrs, x, w, b, node)
                          : ConvForward(attrs, x, w, b, node);
}

}  // namespace inferd::kernels::cuda

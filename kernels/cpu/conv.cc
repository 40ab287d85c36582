// Conv (ai.onnx; 1-D, 2-D and 3-D, groups, dilations, strides, pads, auto_pad, optional bias)
// and FusedConv (com.inferd: the same plus `activation` and `activation_params`, applied as
// post-ops, see ActivationPostOps in onednn_util.h, and `blocked_input` / `blocked_output`, the
// tensors kept channel-blocked between convolutions, engine/blocked_layouts.h):
// one oneDNN convolution per set of input shapes (ConvPrimitive: layouts, workspace, constant
// weights prepacked when the shapes are known at load).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/conv_like_kernel.h"
#include "kernels/cpu/conv_primitive.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
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

struct ConvAttributes {
  WindowAttributes window;
  int64_t group = 1;
  std::vector<EltwisePostOp> post_ops;  // FusedConv activation
  // FusedConv: x / y channel-blocked (engine/blocked_layouts.h).
  bool blocked_input = false, blocked_output = false;

  static absl::StatusOr<ConvAttributes> Read(const KernelInfo& info) {
    ConvAttributes a;
    INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
    a.group = info.GetInt("group", 1);
    if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
    if (info.domain() == engine::kInferdDomain) {
      absl::StatusOr<std::vector<EltwisePostOp>> ops =
          ActivationPostOps(info.GetString("activation", ""), info.GetFloats("activation_params"));
      if (!ops.ok()) return info.Error(ops.status().message());
      a.post_ops = *std::move(ops);
      // Set by the engine's pass (kBlockedInputAttr, kBlockedOutputAttr there).
      a.blocked_input = info.GetInt("blocked_input", 0) != 0;
      a.blocked_output = info.GetInt("blocked_output", 0) != 0;
    }
    return a;
  }

  absl::StatusOr<ConvGeometry> Compute(const Shape& x, const Shape& w, const Shape* b,
                                       const NodeLabel& node) const;
};

absl::StatusOr<ConvGeometry> ConvAttributes::Compute(const Shape& x, const Shape& w, const Shape* b,
                                                     const NodeLabel& node) const {
  INFERD_RETURN_IF_ERROR(CheckConvRanks(x, w, node));
  const int64_t channels = x[1], filters = w[0], g = group;
  INFERD_RETURN_IF_ERROR(CheckConvChannels(x, w, g, node));
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  INFERD_RETURN_IF_ERROR(CheckKernelAndBias(w, window.kernel_shape, b, filters, node));
  INFERD_ASSIGN_OR_RETURN(WindowGeometry win,
                          ComputeWindow(window, x.dims().subspan(2), kernel, node));
  ConvGeometry geo;
  geo.out = Shape{x[0], filters};
  for (int64_t o : win.out) geo.out.push_back(o);
  ConvSpec& spec = geo.spec;
  spec.src = ToDnnlDims(x.dims());
  if (g == 1) {
    spec.weights = ToDnnlDims(w.dims());
  } else {
    spec.weights = {g, filters / g, w[1]};
    spec.weights.insert(spec.weights.end(), kernel.begin(), kernel.end());
  }
  if (b != nullptr) spec.bias = {filters};
  spec.dst = ToDnnlDims(geo.out.dims());
  spec.strides = ToDnnlDims(win.strides);
  for (int64_t d : win.dilations) spec.dilations.push_back(d - 1);  // oneDNN: the gaps
  spec.pad_begin = ToDnnlDims(win.pad_begin);
  spec.pad_end = ToDnnlDims(win.pad_end);
  spec.post_ops = post_ops;
  const int64_t block = ChannelBlock();
  if ((blocked_input && channels % block != 0) || (blocked_output && filters % block != 0)) {
    return node.InvalidArgument(absl::StrCat("a blocked input or output needs channels that are ",
                                             "a multiple of ", block, "; input ", x.ToString(),
                                             ", weight ", w.ToString()));
  }
  spec.src_blocked = blocked_input;
  spec.dst_blocked = blocked_output;
  spec.layout = LayoutForBlockedTensors(ChooseConvLayout(channels, filters, g, kernel, post_ops),
                                        blocked_input, blocked_output);
  geo.degenerate = geo.out.NumElements() == 0 || w[1] == 0;
  return geo;
}

using ConvKernel = ConvLikeKernel<ConvAttributes>;

}  // namespace

std::vector<engine::KernelDef> ConvKernelDefs() {
  return {CpuDef(engine::kOnnxDomain, "Conv", 1, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace),
          CpuDef(engine::kInferdDomain, "FusedConv", 1, 1, {DataType::kFloat32},
                 FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace)};
}

}  // namespace inferd::kernels::cpu

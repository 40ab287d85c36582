// ConvTranspose (ai.onnx 1-17; 1-D, 2-D and 3-D; group, dilations, strides, pads,
// output_padding, output_shape, auto_pad, optional bias): one oneDNN deconvolution per set of
// input shapes (ConvPrimitive with `transposed`: layouts, workspace, constant weights prepacked
// when the shapes are known at load).
//
// Output size and padding per spatial dim: ComputeTransposedWindow (window.h). oneDNN has no
// output_padding: it is a smaller (possibly negative) right padding.
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

struct ConvTransposeAttributes {
  TransposedWindowAttributes window;  // the window, output_padding, output_shape
  int64_t group = 1;

  static absl::StatusOr<ConvTransposeAttributes> Read(const KernelInfo& info) {
    ConvTransposeAttributes a;
    INFERD_ASSIGN_OR_RETURN(a.window, TransposedWindowAttributes::Read(info));
    a.group = info.GetInt("group", 1);
    if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
    return a;
  }

  absl::StatusOr<ConvGeometry> Compute(const Shape& x, const Shape& w, const Shape* b,
                                       const NodeLabel& node) const;
};

// ONNX stores ConvTranspose weights as [C_in, C_out / g, k...] = [g, I/g, O/g, k...]; oneDNN's
// logical order is [g, O/g, I/g, k...] (or [O, I, k...]): the same bytes with permuted strides.
// Sets spec.weights and spec.weights_strides for weights of shape `w` with `g` groups.
void SetTransposedWeights(const Shape& w, int64_t g, ConvSpec& spec) {
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  const size_t sp = kernel.size();
  const int64_t k_size = w.SizeFrom(2), ig = w[0] / g, og = w[1];
  dnnl::memory::dims k_strides(sp);
  for (size_t i = sp, s = 1; i-- > 0;) k_strides[i] = s, s *= kernel[i];
  if (g == 1) {
    spec.weights = {og, ig};
    spec.weights_strides = {k_size, og * k_size};
  } else {
    spec.weights = {g, og, ig};
    spec.weights_strides = {ig * og * k_size, k_size, og * k_size};
  }
  spec.weights.insert(spec.weights.end(), kernel.begin(), kernel.end());
  spec.weights_strides.insert(spec.weights_strides.end(), k_strides.begin(), k_strides.end());
}

absl::StatusOr<ConvGeometry> ConvTransposeAttributes::Compute(const Shape& x, const Shape& w,
                                                              const Shape* b,
                                                              const NodeLabel& node) const {
  INFERD_RETURN_IF_ERROR(CheckConvRanks(x, w, node));
  const int64_t g = group, channels = x[1];
  INFERD_RETURN_IF_ERROR(CheckConvTransposeChannels(x, w, g, node));
  const int64_t filters = w[1] * g;  // output channels
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  INFERD_RETURN_IF_ERROR(CheckKernelAndBias(w, window.window.kernel_shape, b, filters, node));
  INFERD_ASSIGN_OR_RETURN(WindowGeometry win,
                          ComputeTransposedWindow(window, x.dims().subspan(2), kernel, node));
  ConvGeometry geo;
  geo.out = Shape{x[0], filters};
  for (int64_t o : win.out) geo.out.push_back(o);
  ConvSpec& spec = geo.spec;
  spec.transposed = true;
  spec.strides = ToDnnlDims(win.strides);
  for (int64_t d : win.dilations) spec.dilations.push_back(d - 1);  // oneDNN counts the gaps
  // oneDNN: out = s * (in - 1) + ext - pad_begin - pad_end, as ComputeTransposedWindow's.
  spec.pad_begin = ToDnnlDims(win.pad_begin);
  spec.pad_end = ToDnnlDims(win.pad_end);
  spec.src = ToDnnlDims(x.dims());
  spec.dst = ToDnnlDims(geo.out.dims());
  if (b != nullptr) spec.bias = {filters};
  const int64_t ig = channels / g, og = w[1];
  SetTransposedWeights(w, g, spec);
  spec.layout = ChooseConvLayout(channels, filters, g, kernel);
  geo.degenerate = geo.out.NumElements() == 0 || x.NumElements() == 0 || og == 0 || ig == 0;
  return geo;
}

using ConvTransposeKernel = ConvLikeKernel<ConvTransposeAttributes>;

}  // namespace

std::vector<engine::KernelDef> ConvTransposeKernelDefs() {
  // ConvTranspose-11 only clarified the padding rules of -1; one definition covers both.
  return {CpuDef(engine::kOnnxDomain, "ConvTranspose", 1, kMaxOpset, {DataType::kFloat32},
                 FactoryOf<ConvTransposeKernel>(), &ConvTransposeKernel::EstimateWorkspace)};
}

}  // namespace inferd::kernels::cpu

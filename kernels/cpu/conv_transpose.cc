// ConvTranspose (ai.onnx 1-17; 1-D, 2-D and 3-D; group, dilations, strides, pads,
// output_padding, output_shape, auto_pad, optional bias): one oneDNN deconvolution per set of
// input shapes (ConvPrimitive with `transposed`: layouts, workspace, constant weights prepacked
// when the shapes are known at load).
//
// Output size per spatial dim: natural = stride * (in - 1) + output_padding + (k - 1) * dilation
// + 1.
//   - output_shape given: that size; total padding natural - out split head/tail (the larger half
//     at the head for SAME_LOWER, at the tail otherwise, as the ONNX test data has it); a
//     negative total pads nothing and the extra tail holds the bias only.
//   - auto_pad SAME_UPPER / SAME_LOWER: out = in * stride, padding as above.
//   - otherwise natural - pads_begin - pads_end.
// oneDNN has no output_padding: it is a smaller (possibly negative) right padding.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  WindowAttributes window;  // kernel_shape, strides, dilations, pads, auto_pad
  std::vector<int64_t> output_padding, output_shape;
  int64_t group = 1;

  static absl::StatusOr<ConvTransposeAttributes> Read(const KernelInfo& info) {
    ConvTransposeAttributes a;
    INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
    a.output_padding = info.GetInts("output_padding");
    a.output_shape = info.GetInts("output_shape");
    a.group = info.GetInt("group", 1);
    if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
    for (int64_t p : a.output_padding) {
      if (p < 0) {
        return info.Error(absl::StrCat("output_padding [", absl::StrJoin(a.output_padding, ","),
                                       "] must not be negative"));
      }
    }
    return a;
  }

  absl::StatusOr<ConvGeometry> Compute(const Shape& x, const Shape& w, const Shape* b,
                                       const NodeLabel& node) const;
};

// The value of a per-spatial-dim attribute `v` (empty: `fallback`), checked for count.
absl::StatusOr<std::vector<int64_t>> PerDim(const std::vector<int64_t>& v, size_t n,
                                            int64_t fallback, absl::string_view name,
                                            const NodeLabel& node) {
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (v.size() != n) {
    return node.InvalidArgument(
        absl::StrCat("attribute '", name, "' has ", v.size(), " values, expected ", n));
  }
  return v;
}

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
  if (w[0] != channels || channels % g != 0) {
    return node.InvalidArgument(absl::StrCat("input ", x.ToString(), " and weight ", w.ToString(),
                                             " do not match for group ", g,
                                             ": expected W[0] = C and C % group == 0"));
  }
  const int64_t filters = w[1] * g;  // output channels
  const size_t sp = x.rank() - 2;
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  INFERD_RETURN_IF_ERROR(CheckKernelAndBias(w, window.kernel_shape, b, filters, node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                          PerDim(window.strides, sp, 1, "strides", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> dilations,
                          PerDim(window.dilations, sp, 1, "dilations", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> out_padding,
                          PerDim(output_padding, sp, 0, "output_padding", node));
  INFERD_ASSIGN_OR_RETURN(std::vector<int64_t> pads, PerDim(window.pads, 2 * sp, 0, "pads", node));
  std::vector<int64_t> out_spatial = output_shape;
  if (out_spatial.size() == sp + 2) out_spatial.erase(out_spatial.begin(), out_spatial.begin() + 2);
  if (!out_spatial.empty() && out_spatial.size() != sp) {
    return node.InvalidArgument(absl::StrCat("output_shape [", absl::StrJoin(output_shape, ","),
                                             "] does not have ", sp, " spatial dimensions"));
  }
  const std::string& auto_pad = window.auto_pad;
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";

  ConvGeometry geo;
  geo.out = Shape{x[0], filters};
  ConvSpec& spec = geo.spec;
  spec.transposed = true;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i], s = strides[i], d = dilations[i], k = kernel[i];
    if (s < 1 || d < 1 || k < 1) {
      return node.InvalidArgument(absl::StrCat("spatial dimension ", i, ": kernel ", k, ", stride ",
                                               s, " and dilation ", d, " must all be >= 1"));
    }
    const int64_t ext = (k - 1) * d + 1;
    const int64_t natural = s * (in - 1) + out_padding[i] + ext;
    int64_t out = 0, head = 0;
    if (!out_spatial.empty() || same) {
      out = !out_spatial.empty() ? out_spatial[i] : in * s;
      const int64_t total = std::max<int64_t>(0, natural - out);
      head = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
    } else {
      if (pads[i] < 0 || pads[i + sp] < 0) {
        return node.InvalidArgument(
            absl::StrCat("pads [", absl::StrJoin(pads, ","), "] must not be negative"));
      }
      if (auto_pad == "NOTSET") head = pads[i];
      out = natural - head - (auto_pad == "NOTSET" ? pads[i + sp] : 0);
    }
    if (out < 0) {
      return node.InvalidArgument(
          absl::StrCat("spatial dimension ", i, ": the output size ", out, " is negative"));
    }
    geo.out.push_back(out);
    spec.strides.push_back(s);
    spec.dilations.push_back(d - 1);  // oneDNN counts the gaps
    spec.pad_begin.push_back(head);
    // oneDNN: out = s * (in - 1) + ext - pad_begin - pad_end.
    spec.pad_end.push_back(s * (in - 1) + ext - head - out);
  }
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

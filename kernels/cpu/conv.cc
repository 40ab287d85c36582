// Conv (ai.onnx; 1-D, 2-D and 3-D, groups, dilations, strides, pads, auto_pad, optional bias)
// and FusedConv (com.inferd: the same plus `activation` "Relu" or "", applied as a post-op):
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
  bool relu = false;  // FusedConv activation

  static absl::StatusOr<ConvAttributes> Read(const KernelInfo& info) {
    ConvAttributes a;
    INFERD_ASSIGN_OR_RETURN(a.window, WindowAttributes::Read(info));
    a.group = info.GetInt("group", 1);
    if (a.group < 1) return info.Error(absl::StrCat("group ", a.group, " must be >= 1"));
    if (info.domain() == engine::kInferdDomain) {
      const std::string activation = info.GetString("activation", "");
      if (activation == "Relu") {
        a.relu = true;
      } else if (!activation.empty()) {
        return info.Error(absl::StrCat("activation '", activation,
                                       "' is not supported (expected \"Relu\" or \"\")"));
      }
    }
    return a;
  }
};

struct ConvGeometry {
  Shape out;
  WindowGeometry window;
  dnnl::memory::dims src, weights, bias, dst;
  bool degenerate = false;  // empty output, or no input channels (output = bias)
};

absl::StatusOr<ConvGeometry> ComputeGeometry(const ConvAttributes& attrs, const Shape& x,
                                             const Shape& w, const Shape* b,
                                             const NodeLabel& node) {
  if (x.rank() < 3 || x.rank() > 5) {
    return node.InvalidArgument(absl::StrCat("input 0 has shape ", x.ToString(),
                                             " but a rank-3, -4 or -5 input (N,C,spatial...) is "
                                             "expected"));
  }
  if (w.rank() != x.rank()) {
    return node.InvalidArgument(absl::StrCat("input 1 has shape ", w.ToString(), " but a rank-",
                                             x.rank(), " weight is expected"));
  }
  const int64_t channels = x[1], filters = w[0], g = attrs.group;
  if (channels != w[1] * g || filters % g != 0) {
    return node.InvalidArgument(absl::StrCat("input ", x.ToString(), " and weight ", w.ToString(),
                                             " do not match for group ", g,
                                             ": expected C = W[1] * group and W[0] % group == 0"));
  }
  const size_t spatial = x.rank() - 2;
  absl::Span<const int64_t> kernel = w.dims().subspan(2);
  if (!attrs.window.kernel_shape.empty() &&
      !std::equal(kernel.begin(), kernel.end(), attrs.window.kernel_shape.begin(),
                  attrs.window.kernel_shape.end())) {
    return node.InvalidArgument(
        absl::StrCat("kernel_shape does not match the weight's shape ", w.ToString()));
  }
  if (b != nullptr && (b->rank() != 1 || (*b)[0] != filters)) {
    return node.InvalidArgument(
        absl::StrCat("bias has shape ", b->ToString(), ", expected [", filters, "]"));
  }
  ConvGeometry geo;
  INFERD_ASSIGN_OR_RETURN(geo.window,
                          ComputeWindow(attrs.window, x.dims().subspan(2), kernel, node));
  geo.out = Shape{x[0], filters};
  for (size_t i = 0; i < spatial; ++i) geo.out.push_back(geo.window.out[i]);
  geo.src = ToDnnlDims(x.dims());
  if (g == 1) {
    geo.weights = ToDnnlDims(w.dims());
  } else {
    geo.weights = {g, filters / g, w[1]};
    geo.weights.insert(geo.weights.end(), kernel.begin(), kernel.end());
  }
  geo.bias = {filters};
  geo.dst = ToDnnlDims(geo.out.dims());
  geo.degenerate = geo.out.NumElements() == 0 || w[1] == 0;
  return geo;
}

ConvSpec SpecFor(const ConvAttributes& attrs, const ConvGeometry& geo, const Shape& x,
                 const Shape& w, bool has_bias) {
  ConvSpec spec;
  spec.src = geo.src;
  spec.weights = geo.weights;
  if (has_bias) spec.bias = geo.bias;
  spec.dst = geo.dst;
  spec.strides = ToDnnlDims(geo.window.strides);
  for (int64_t d : geo.window.dilations) spec.dilations.push_back(d - 1);  // oneDNN: the gaps
  spec.pad_begin = ToDnnlDims(geo.window.pad_begin);
  spec.pad_end = ToDnnlDims(geo.window.pad_end);
  spec.relu = attrs.relu;
  spec.layout = ChooseConvLayout(x[1], w[0], attrs.group, w.dims().subspan(2));
  return spec;
}

// What Conv / FusedConv add to ConvLikeKernel.
struct ConvOp {
  using Attributes = ConvAttributes;
  using Geometry = ConvGeometry;
  static absl::StatusOr<Attributes> Read(const KernelInfo& info) {
    return ConvAttributes::Read(info);
  }
  static absl::StatusOr<Geometry> Compute(const Attributes& a, const Shape& x, const Shape& w,
                                          const Shape* b, const NodeLabel& node) {
    return ComputeGeometry(a, x, w, b, node);
  }
  static ConvSpec Spec(const Attributes& a, const Geometry& g, const Shape& x, const Shape& w,
                       bool has_bias) {
    return SpecFor(a, g, x, w, has_bias);
  }
  static bool Relu(const Attributes& a) { return a.relu; }
};

using ConvKernel = ConvLikeKernel<ConvOp>;

}  // namespace

absl::Status RegisterConvKernels(engine::KernelRegistry& registry) {
  return RegisterAll(registry,
                     {CpuDef(engine::kOnnxDomain, "Conv", 1, kMaxOpset, {DataType::kFloat32},
                             FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace),
                      CpuDef(engine::kInferdDomain, "FusedConv", 1, 1, {DataType::kFloat32},
                             FactoryOf<ConvKernel>(), &ConvKernel::EstimateWorkspace)});
}

}  // namespace inferd::kernels::cpu

#include "engine/onnx_schema_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/defs/tensor_proto_util.h"

namespace inferd::engine::schema_shapes {
namespace {

using onnx::TensorProto;
using onnx::TensorShapeProto;
using onnx::TypeProto;

bool InputPresent(InferenceContext& ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

// Input i's shape when its rank is known, else nullptr.
const TensorShapeProto* KnownShape(InferenceContext& ctx, size_t i) {
  if (!InputPresent(ctx, i) || !onnx::hasInputShape(ctx, i)) return nullptr;
  return &onnx::getInputShape(ctx, i);
}

// The values of input i when it is a constant (initializer or folded Constant) of an integer
// type; false otherwise.
bool ConstInts(InferenceContext& ctx, size_t i, std::vector<int64_t>* out) {
  if (!InputPresent(ctx, i)) return false;
  const TensorProto* t = ctx.getInputData(i);
  if (t == nullptr) return false;
  if (t->data_type() == TensorProto::INT64) {
    *out = onnx::ParseData<int64_t>(t);
    return true;
  }
  if (t->data_type() == TensorProto::INT32) {
    const std::vector<int32_t> v = onnx::ParseData<int32_t>(t);
    out->assign(v.begin(), v.end());
    return true;
  }
  return false;
}

bool ConstFloats(InferenceContext& ctx, size_t i, std::vector<float>* out) {
  if (!InputPresent(ctx, i)) return false;
  const TensorProto* t = ctx.getInputData(i);
  if (t == nullptr || t->data_type() != TensorProto::FLOAT) return false;
  *out = onnx::ParseData<float>(t);
  return true;
}

// Output o's shape, emptied (rank 0 until dims are added).
TensorShapeProto* OutputShape(InferenceContext& ctx, size_t o) {
  TensorShapeProto* shape = ctx.getOutputType(o)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  return shape;
}

// Sets output o to `rank` dims of unknown size.
void SetRank(InferenceContext& ctx, size_t o, int rank) {
  TensorShapeProto* shape = OutputShape(ctx, o);
  for (int d = 0; d < rank; ++d) shape->add_dim();
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    fail_shape_inference(what, " ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// The attribute's ints (empty when absent).
std::vector<int64_t> Ints(InferenceContext& ctx, const char* name) {
  std::vector<int64_t> v;
  onnx::getRepeatedAttribute(ctx, name, v);
  return v;
}

std::string String(InferenceContext& ctx, const char* name, const std::string& fallback) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a != nullptr && a->has_s() ? a->s() : fallback;
}

// `axes` attribute (default: every axis), normalized.
std::vector<int64_t> AxesOrAll(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (int64_t a : axes) out.push_back(NormalizeAxis(a, rank, "axis"));
  return out;
}

// One pooled or convolved spatial extent.
int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pads,
                     int64_t pad_begin, bool ceil_mode) {
  const int64_t effective = (kernel - 1) * dilation + 1;
  const int64_t span = in + pads - effective;
  if (span < 0) fail_shape_inference("the window (", effective, ") is larger than the input");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window that would start in the end padding is dropped.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

// Spatial output dims of a window op over input `x` [N, C, spatial...] with `kernel`.
void WindowSpatial(InferenceContext& ctx, const TensorShapeProto& x,
                   const std::vector<int64_t>& kernel, bool ceil_mode, TensorShapeProto* out) {
  const int n = static_cast<int>(kernel.size());
  std::vector<int64_t> strides = Ints(ctx, "strides"), dilations = Ints(ctx, "dilations"),
                       pads = Ints(ctx, "pads");
  strides.resize(n, 1);
  dilations.resize(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  if (static_cast<int>(pads.size()) != 2 * n) fail_shape_inference("pads must have 2 * ", n);
  const std::string auto_pad = String(ctx, "auto_pad", "NOTSET");
  for (int i = 0; i < n; ++i) {
    TensorShapeProto::Dimension* dim = out->add_dim();
    const auto& in = x.dim(i + 2);
    if (!in.has_dim_value()) continue;
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
      fail_shape_inference("kernel_shape, strides and dilations must be positive");
    }
    const int64_t v = in.dim_value();
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      dim->set_dim_value((v + strides[i] - 1) / strides[i]);
    } else if (auto_pad == "VALID") {
      const int64_t effective = (kernel[i] - 1) * dilations[i] + 1;
      if (v < effective) fail_shape_inference("the window is larger than the input");
      dim->set_dim_value((v - effective) / strides[i] + 1);
    } else {
      dim->set_dim_value(WindowOutput(v, kernel[i], strides[i], dilations[i], pads[i] + pads[i + n],
                                      pads[i], ceil_mode));
    }
  }
}

}  // namespace

void SameAsInput(InferenceContext& ctx) { onnx::propagateShapeAndTypeFromFirstInput(ctx); }

void Broadcast(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<const TensorShapeProto*> shapes;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const TensorShapeProto* s = KnownShape(ctx, i);
    if (s == nullptr) return;
    shapes.push_back(s);
  }
  onnx::multidirectionalBroadcastShapeInference(shapes, *OutputShape(ctx, 0));
}

void BroadcastToBool(InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, TensorProto::BOOL);
  if (KnownShape(ctx, 0) != nullptr && KnownShape(ctx, 1) != nullptr) {
    onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0),
                                               onnx::getInputShape(ctx, 1), *OutputShape(ctx, 0));
  }
}

void Reduce(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const int64_t rank = x->dim_size();
  const bool keepdims = onnx::getAttribute(ctx, "keepdims", 1) != 0;
  const bool noop = onnx::getAttribute(ctx, "noop_with_empty_axes", 0) != 0;
  std::vector<int64_t> axes;
  if (InputPresent(ctx, 1) && !ConstInts(ctx, 1, &axes)) {
    if (keepdims) SetRank(ctx, 0, static_cast<int>(rank));  // each dim kept or 1: unknown
    return;
  }
  if (axes.empty()) {
    if (noop) {
      onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
      return;
    }
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[NormalizeAxis(a, rank, "axis")] = true;
  TensorShapeProto* out = OutputShape(ctx, 0);
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      *out->add_dim() = x->dim(static_cast<int>(d));
    } else if (keepdims) {
      out->add_dim()->set_dim_value(1);
    }
  }
}

void Pad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const int64_t rank = x->dim_size();
  std::vector<int64_t> pads, axes;
  const bool axes_known = !InputPresent(ctx, 3) || ConstInts(ctx, 3, &axes);
  if (!ConstInts(ctx, 1, &pads) || !axes_known) {
    SetRank(ctx, 0, static_cast<int>(rank));
    return;
  }
  axes = AxesOrAll(axes, rank);
  const size_t n = axes.size();
  if (pads.size() != 2 * n) {
    fail_shape_inference("pads has ", pads.size(), " values; expected 2 * ", n, " (axes)");
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out = *x;
  for (size_t i = 0; i < n; ++i) {
    auto* dim = out->mutable_dim(static_cast<int>(axes[i]));
    if (!dim->has_dim_value()) continue;
    const int64_t v = dim->dim_value() + pads[i] + pads[i + n];
    if (v < 0) fail_shape_inference("padding makes axis ", axes[i], " negative");
    dim->set_dim_value(v);
  }
}

void Resize(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const int64_t rank = x->dim_size();
  const std::vector<int64_t> axes = AxesOrAll(Ints(ctx, "axes"), rank);
  std::vector<int64_t> sizes;
  std::vector<float> scales, roi;
  const bool have_sizes = ConstInts(ctx, 3, &sizes) && !sizes.empty();
  const bool have_scales = ConstFloats(ctx, 2, &scales) && !scales.empty();
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out = *x;
  if (!have_sizes && !have_scales) {
    for (int64_t a : axes) out->mutable_dim(static_cast<int>(a))->Clear();
    return;
  }
  const size_t n = axes.size();
  if ((have_sizes ? sizes.size() : scales.size()) != n) {
    fail_shape_inference(have_sizes ? "sizes" : "scales", " must have one value per axis (", n,
                         ")");
  }
  for (int64_t a : axes) {
    if (!x->dim(static_cast<int>(a)).has_dim_value()) {
      out->mutable_dim(static_cast<int>(a))->Clear();
    }
  }
  if (have_sizes) {
    const std::string policy = String(ctx, "keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (size_t i = 0; i < n; ++i)
        out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(sizes[i]);
      return;
    }
    if (policy != "not_larger" && policy != "not_smaller") {
      fail_shape_inference("keep_aspect_ratio_policy '", policy, "' is not one of stretch, ",
                           "not_larger, not_smaller");
    }
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (size_t i = 0; i < n; ++i) {
      const auto& d = x->dim(static_cast<int>(axes[i]));
      if (!d.has_dim_value() || d.dim_value() == 0) return;
      const double s = static_cast<double>(sizes[i]) / static_cast<double>(d.dim_value());
      scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
    }
    for (size_t i = 0; i < n; ++i) {
      auto* d = out->mutable_dim(static_cast<int>(axes[i]));
      d->set_dim_value(static_cast<int64_t>(std::floor(scale * d->dim_value() + 0.5)));
    }
    return;
  }
  const bool crop =
      String(ctx, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize";
  const bool have_roi = crop && ConstFloats(ctx, 1, &roi) && roi.size() == 2 * n;
  for (size_t i = 0; i < n; ++i) {
    auto* d = out->mutable_dim(static_cast<int>(axes[i]));
    if (!d->has_dim_value()) continue;
    if (scales[i] <= 0) fail_shape_inference("scales must be positive");
    if (crop && !have_roi) {
      d->Clear();
      continue;
    }
    const double extent = crop ? roi[i + n] - roi[i] : 1.0;
    d->set_dim_value(
        static_cast<int64_t>(std::floor(static_cast<double>(d->dim_value()) * extent * scales[i])));
  }
}

void Split(InferenceContext& ctx) {
  const size_t outputs = ctx.getNumOutputs();
  for (size_t o = 0; o < outputs; ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const int64_t rank = x->dim_size();
  const int axis =
      static_cast<int>(NormalizeAxis(onnx::getAttribute(ctx, "axis", 0), rank, "axis"));
  const onnx::AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  std::vector<int64_t> split;
  const bool split_input = InputPresent(ctx, 1);
  if (split_input && num_outputs != nullptr) {
    fail_shape_inference("give either the split input or num_outputs, not both");
  }
  if (num_outputs != nullptr && static_cast<size_t>(num_outputs->i()) != outputs) {
    fail_shape_inference("num_outputs is ", num_outputs->i(), " but the node has ", outputs,
                         " outputs");
  }
  const auto& dim = x->dim(axis);
  if (split_input) {
    if (!ConstInts(ctx, 1, &split)) split.clear();
    if (!split.empty() && split.size() != outputs) {
      fail_shape_inference("split has ", split.size(), " values for ", outputs, " outputs");
    }
  } else if (dim.has_dim_value()) {
    const int64_t total = dim.dim_value();
    const int64_t n = static_cast<int64_t>(outputs);
    if (num_outputs == nullptr && total % n != 0) {
      fail_shape_inference("axis ", axis, " (", total, ") does not split evenly into ", n);
    }
    const int64_t chunk = (total + n - 1) / n;
    if (chunk * (n - 1) >= total && n > 1) {
      fail_shape_inference("axis ", axis, " (", total, ") cannot be split into ", n, " parts");
    }
    split.assign(outputs, chunk);
    split.back() = total - chunk * (n - 1);
  }
  for (size_t o = 0; o < outputs; ++o) {
    TensorShapeProto* out = OutputShape(ctx, o);
    *out = *x;
    if (split.empty()) {
      out->mutable_dim(axis)->Clear();
    } else {
      out->mutable_dim(axis)->set_dim_value(split[o]);
    }
  }
}

void Pool(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const std::vector<int64_t> kernel = Ints(ctx, "kernel_shape");
  if (x->dim_size() < 2 || kernel.size() != static_cast<size_t>(x->dim_size() - 2)) {
    fail_shape_inference("kernel_shape must have one value per spatial axis of the input");
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out->add_dim() = x->dim(0);
  *out->add_dim() = x->dim(1);
  WindowSpatial(ctx, *x, kernel, onnx::getAttribute(ctx, "ceil_mode", 0) != 0, out);
}

void Col2Im(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  std::vector<int64_t> image, block;
  if (x == nullptr || !ConstInts(ctx, 1, &image) || !ConstInts(ctx, 2, &block)) return;
  if (x->dim_size() != 3 || image.size() != block.size() || image.empty()) {
    fail_shape_inference("input must be [N, C * prod(block_shape), L] and image_shape and ",
                         "block_shape of equal length");
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out->add_dim() = x->dim(0);
  auto* c = out->add_dim();
  int64_t block_size = 1;
  for (int64_t b : block) {
    if (b <= 0) fail_shape_inference("block_shape must be positive");
    block_size *= b;
  }
  if (x->dim(1).has_dim_value()) {
    if (x->dim(1).dim_value() % block_size != 0) {
      fail_shape_inference("input dim 1 (", x->dim(1).dim_value(), ") is not a multiple of ",
                           block_size, " (prod(block_shape))");
    }
    c->set_dim_value(x->dim(1).dim_value() / block_size);
  }
  for (int64_t v : image) out->add_dim()->set_dim_value(v);
}

void CenterCropPad(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  std::vector<int64_t> shape;
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out = *x;
  const std::vector<int64_t> axes = AxesOrAll(Ints(ctx, "axes"), x->dim_size());
  if (!ConstInts(ctx, 1, &shape)) {
    for (int64_t a : axes) out->mutable_dim(static_cast<int>(a))->Clear();
    return;
  }
  if (shape.size() != axes.size()) {
    fail_shape_inference("shape has ", shape.size(), " values for ", axes.size(), " axes");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    out->mutable_dim(static_cast<int>(axes[i]))->set_dim_value(shape[i]);
  }
}

void DeformConv(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  const TensorShapeProto* w = KnownShape(ctx, 1);
  if (x == nullptr || w == nullptr) return;
  if (x->dim_size() < 3 || w->dim_size() != x->dim_size()) {
    fail_shape_inference("X and W must have the same rank, at least 3");
  }
  std::vector<int64_t> kernel = Ints(ctx, "kernel_shape");
  if (kernel.empty()) {
    for (int d = 2; d < w->dim_size(); ++d) {
      if (!w->dim(d).has_dim_value()) {
        SetRank(ctx, 0, x->dim_size());
        return;
      }
      kernel.push_back(w->dim(d).dim_value());
    }
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out->add_dim() = x->dim(0);
  *out->add_dim() = w->dim(0);
  WindowSpatial(ctx, *x, kernel, /*ceil_mode=*/false, out);
}

void AffineGrid(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  std::vector<int64_t> size;
  if (!ConstInts(ctx, 1, &size)) return;
  if (size.size() != 4 && size.size() != 5) {
    fail_shape_inference("size must be [N, C, H, W] or [N, C, D, H, W]");
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  out->add_dim()->set_dim_value(size[0]);
  for (size_t d = 2; d < size.size(); ++d) out->add_dim()->set_dim_value(size[d]);
  out->add_dim()->set_dim_value(static_cast<int64_t>(size.size()) - 2);
}

void Dft(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  const int64_t rank = x->dim_size();
  if (rank < 2) fail_shape_inference("input must have rank 2 or more (last dim 1 or 2)");
  std::vector<int64_t> axis_value, length;
  int64_t axis = -2;
  if (InputPresent(ctx, 2)) {
    if (!ConstInts(ctx, 2, &axis_value) || axis_value.size() != 1) {
      SetRank(ctx, 0, static_cast<int>(rank));
      return;
    }
    axis = axis_value[0];
  }
  if (axis < -rank || axis >= rank - 1 || axis == -1) {
    fail_shape_inference("axis ", axis, " must be in [-r, -2] or [0, r - 2], r = ", rank);
  }
  if (axis < 0) axis += rank;
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out = *x;
  out->mutable_dim(static_cast<int>(rank - 1))->set_dim_value(2);
  auto* d = out->mutable_dim(static_cast<int>(axis));
  if (InputPresent(ctx, 1)) {
    if (!ConstInts(ctx, 1, &length) || length.size() != 1) {
      d->Clear();
      return;
    }
    if (length[0] <= 0) fail_shape_inference("dft_length must be positive");
    d->set_dim_value(length[0]);
  }
  if (onnx::getAttribute(ctx, "onesided", 0) != 0 && d->has_dim_value()) {
    d->set_dim_value(d->dim_value() / 2 + 1);
  }
}

void GridSample(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  const TensorShapeProto* grid = KnownShape(ctx, 1);
  if (x == nullptr || grid == nullptr) return;
  if (x->dim_size() < 3 || grid->dim_size() != x->dim_size()) {
    fail_shape_inference("X [N, C, D1...Dr] and grid [N, D1_out...Dr_out, r] must have equal rank");
  }
  TensorShapeProto* out = OutputShape(ctx, 0);
  *out->add_dim() = x->dim(0);
  *out->add_dim() = x->dim(1);
  for (int d = 1; d + 1 < grid->dim_size(); ++d) *out->add_dim() = grid->dim(d);
}

void Quantize(InferenceContext& ctx) {
  const onnx::AttributeProto* dtype = ctx.getAttribute("output_dtype");
  if (dtype != nullptr && dtype->i() != 0) {
    onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype->i()));
  } else if (InputPresent(ctx, 2)) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  } else {
    onnx::updateOutputElemType(ctx, 0, TensorProto::UINT8);
  }
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void Dequantize(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void Cast(InferenceContext& ctx) {
  onnx::propagateElemTypeFromAttributeToOutput(ctx, "to", 0);
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void CastLike(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void LabelEncoder(InferenceContext& ctx) {
  int32_t type = TensorProto::UNDEFINED;
  if (ctx.getAttribute("values_strings") != nullptr) type = TensorProto::STRING;
  if (ctx.getAttribute("values_int64s") != nullptr) type = TensorProto::INT64;
  if (ctx.getAttribute("values_floats") != nullptr) type = TensorProto::FLOAT;
  if (const onnx::AttributeProto* t = ctx.getAttribute("values_tensor"); t != nullptr) {
    type = t->t().data_type();
  }
  if (type != TensorProto::UNDEFINED) onnx::updateOutputElemType(ctx, 0, type);
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void StringSplit(InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, TensorProto::STRING);
  onnx::updateOutputElemType(ctx, 1, TensorProto::INT64);
  const TensorShapeProto* x = KnownShape(ctx, 0);
  if (x == nullptr) return;
  TensorShapeProto* y = OutputShape(ctx, 0);
  *y = *x;
  y->add_dim();
  *OutputShape(ctx, 1) = *x;
}

void RegexFullMatch(InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, TensorProto::BOOL);
  if (KnownShape(ctx, 0) != nullptr) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void OptionalHasElement(InferenceContext& ctx) {
  onnx::updateOutputElemType(ctx, 0, TensorProto::BOOL);
  OutputShape(ctx, 0);  // a scalar
}

void OptionalGetElement(InferenceContext& ctx) {
  const TypeProto* in = ctx.getInputType(0);
  if (in == nullptr) return;
  if (in->has_optional_type()) {
    *ctx.getOutputType(0) = in->optional_type().elem_type();
  } else {
    *ctx.getOutputType(0) = *in;
  }
}

}  // namespace inferd::engine::schema_shapes

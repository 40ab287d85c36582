// Resize (opset 10: scales input; 11+: roi, scales, sizes inputs; 18: axes, antialias,
// keep_aspect_ratio_policy; 19: half_pixel_symmetric) and Upsample (7: scales attribute; 9:
// scales input), N-D.
// Modes: nearest (any fixed-size element type; nearest_mode round_prefer_floor,
// round_prefer_ceil, floor, ceil), linear and cubic (float32; cubic_coeff_a, exclude_outside,
// antialias). coordinate_transformation_mode: half_pixel (default), half_pixel_symmetric,
// pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn (opset 11-12),
// tf_crop_and_resize (roi, extrapolation_value).
// Upsample and Resize-10 map coordinates asymmetrically and round nearest indices down when
// upsampling and up when downsampling, as ONNX Runtime does.
// Output dims are `sizes`, or floor(input * scale); with sizes the scale is output / input, or,
// with keep_aspect_ratio_policy not_larger / not_smaller, one scale for every axis of `axes`
// and the sizes round(input * scale). Coordinates and weights: resize_table.h.
//
// How: per dimension, a table of source indices and weights per output index. Nearest gathers
// rows along the last dim (a row that repeats the previous one is a memcpy). Linear and cubic are
// separable: one pass per resized dimension (dims left unchanged are skipped), each output line a
// weighted sum of its taps' input lines (2, 4, or the antialias footprint) that vectorizes over
// the dims inside it. Tables and intermediates are arena temporaries. Parallel over output lines.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/movement_util.h"
#include "kernels/cpu/registration.h"
#include "kernels/cpu/resize_table.h"

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;
using Mode = ResizeMode;
using Coord = ResizeCoord;
using Rounding = ResizeRounding;
using Params = ResizeParams;

// Nearest: out row by row along the last dim; `extrap` holds one element.
template <typename T>
void NearestGather(const T* in, T* out, const Shape& in_shape, const Shape& out_shape,
                   const AxisTable* tables, T extrap, engine::ThreadPool& pool) {
  const size_t rank = out_shape.rank();
  const int64_t len = out_shape[rank - 1];
  const int64_t rows = out_shape.SizeBetween(0, rank - 1);
  const Dims in_strides = StridesOf(in_shape);
  const int64_t* last = tables[rank - 1].idx;
  pool.ParallelFor(rows,
                   std::max<int64_t>(1, kMoveGrainBytes / std::max<int64_t>(len * sizeof(T), 1)),
                   [&](int64_t begin, int64_t end) {
                     int64_t prev_off = -2;
                     for (int64_t r = begin; r < end; ++r) {
                       T* o = out + r * len;
                       int64_t off = 0, rest = r;
                       for (size_t d = rank - 1; d-- > 0;) {
                         const int64_t i = tables[d].idx[rest % out_shape[d]];
                         rest /= out_shape[d];
                         if (i < 0 || off < 0) {
                           off = -1;
                         } else {
                           off += i * in_strides[d];
                         }
                       }
                       if (off < 0) {
                         FillN(o, len, extrap);
                       } else if (off == prev_off) {  // same source row as the row before
                         std::memcpy(o, o - len, len * sizeof(T));
                       } else {
                         const T* src = in + off;
                         for (int64_t j = 0; j < len; ++j)
                           o[j] = last[j] < 0 ? extrap : src[last[j]];
                       }
                       prev_off = off;
                     }
                   });
}

// One separable pass over dim d: B[o, x, :] = sum_k w[x, k] * A[o, idx[x, k], :]. Work items
// are output lines (o, x), walked with counters (no division per item); lines of one element
// (the innermost dim) are a dot product of the taps' gathered values. kTaps: 2 (linear) and 4
// (cubic) at compile time; 0 reads t.taps (antialias footprints).
template <int kTaps>
void InterpolatePass(const float* a, float* b, int64_t outer, int64_t inner, const AxisTable& t,
                     float extrap, engine::ThreadPool& pool) {
  const int taps = kTaps > 0 ? kTaps : t.taps;
  if (inner == 1) {  // the innermost dim: one row of t.out gathered dot products per outer index
    pool.ParallelFor(outer, std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(t.out, 1)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t o = begin; o < end; ++o) {
                         const float* src = a + o * t.in;
                         float* dst = b + o * t.out;
                         for (int64_t x = 0; x < t.out; ++x) {
                           const int64_t* ix = t.idx + x * taps;
                           const float* wx = t.w + x * taps;
                           if (ix[0] < 0) {
                             dst[x] = extrap;
                             continue;
                           }
                           float s = 0;
                           for (int k = 0; k < taps; ++k) s += wx[k] * src[ix[k]];
                           dst[x] = s;
                         }
                       }
                     });
    return;
  }
  const int64_t items = outer * t.out;
  pool.ParallelFor(items, std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(inner * taps, 1)),
                   [&](int64_t begin, int64_t end) {
                     int64_t o = begin / t.out, x = begin % t.out;
                     const float* base = a + o * t.in * inner;
                     for (int64_t item = begin; item < end; ++item) {
                       const int64_t* ix = t.idx + x * taps;
                       const float* wx = t.w + x * taps;
                       float* dst = b + item * inner;
                       if (ix[0] < 0) {
                         FillN(dst, inner, extrap);
                       } else {
                         const float* l0 = base + ix[0] * inner;
                         const float w0 = wx[0];
#pragma omp simd
                         for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * l0[i];
                         for (int k = 1; k < taps; ++k) {
                           const float* lk = base + ix[k] * inner;
                           const float wk = wx[k];
#pragma omp simd
                           for (int64_t i = 0; i < inner; ++i) dst[i] += wk * lk[i];
                         }
                       }
                       if (++x == t.out) {
                         x = 0;
                         base += t.in * inner;
                       }
                     }
                   });
}

class ResizeKernel final : public engine::OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ResizeKernel>> Create(const KernelInfo& info);

  absl::Status Compute(KernelContext& ctx) const override;

 private:
  ResizeKernel(const KernelInfo& info, Params p, const std::string& policy)
      : node_(info),
        p_(p),
        opset_(info.opset()),
        upsample_(info.op_type() == "Upsample"),
        scales_attr_(info.GetFloats("scales")),
        axes_(info.opset() >= 18 ? info.GetInts("axes") : std::vector<int64_t>()),
        policy_(policy == "not_larger"    ? -1
                : policy == "not_smaller" ? 1
                                          : 0) {}

  // The dims `scales`, `sizes` and `roi` refer to: `axes` (opset 18), else every dim.
  absl::Status Axes(size_t rank, absl::InlinedVector<int, 8>* axes) const;

  // Output shape, per-dim scales and roi from the inputs / attributes.
  absl::Status Targets(const KernelContext& ctx, const Shape& in, Shape* out,
                       absl::InlinedVector<double, 8>* scales,
                       absl::InlinedVector<double, 16>* roi) const;
  // pass 1: per-dimension tables, their entries in the arena temporaries `idx` and `w`.
  absl::Status BuildTables(KernelContext& ctx, const Shape& in, const Shape& out_shape,
                           const absl::InlinedVector<double, 8>& scales,
                           const absl::InlinedVector<double, 16>& roi, Tensor& idx, Tensor& w,
                           absl::InlinedVector<AxisTable, 8>& tables) const;
  // pass 2 (nearest): one gather.
  void Nearest(const Tensor& x, const Shape& out_shape, const AxisTable* tables, Tensor& y,
               engine::ThreadPool& pool) const;
  // pass 2 (linear, cubic): one separable pass per resized dim, shrinking dims first.
  absl::Status Separable(KernelContext& ctx, const Tensor& x, const Shape& out_shape,
                         const absl::InlinedVector<AxisTable, 8>& tables, Tensor& y) const;

  const NodeLabel node_;
  const Params p_;
  const int opset_;
  const bool upsample_;
  const std::vector<float> scales_attr_;
  const std::vector<int64_t> axes_;
  const int policy_;  // keep_aspect_ratio_policy: -1 not_larger, 0 stretch, 1 not_smaller
};

absl::Status ResizeKernel::Axes(size_t rank, absl::InlinedVector<int, 8>* axes) const {
  if (axes_.empty()) {
    for (size_t d = 0; d < rank; ++d) axes->push_back(static_cast<int>(d));
    return absl::OkStatus();
  }
  absl::InlinedVector<bool, 8> seen(rank, false);
  for (int64_t a : axes_) {
    INFERD_ASSIGN_OR_RETURN(int axis,
                            NormalizeAxis(a, static_cast<int64_t>(rank), node_, "axes value"));
    if (seen[axis]) return node_.InvalidArgument(absl::StrCat("axis ", a, " is repeated in axes"));
    seen[axis] = true;
    axes->push_back(axis);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ResizeKernel>> ResizeKernel::Create(const KernelInfo& info) {
  Params p;
  const std::string mode = info.GetString("mode", "nearest");
  if (mode == "nearest") {
    p.mode = Mode::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    p.mode = Mode::kLinear;
  } else if (mode == "cubic" && info.opset() >= 11 && info.op_type() == "Resize") {
    p.mode = Mode::kCubic;
  } else {
    return info.Error(absl::StrCat("unknown mode '", mode, "'"));
  }
  if (info.op_type() == "Upsample" || info.opset() < 11) {
    p.coord = Coord::kAsymmetric;
    p.rounding = Rounding::kSimple;
  } else {
    const std::string coord = info.GetString("coordinate_transformation_mode", "half_pixel");
    if (coord == "half_pixel") {
      p.coord = Coord::kHalfPixel;
    } else if (coord == "pytorch_half_pixel") {
      p.coord = Coord::kPytorchHalfPixel;
    } else if (coord == "align_corners") {
      p.coord = Coord::kAlignCorners;
    } else if (coord == "asymmetric") {
      p.coord = Coord::kAsymmetric;
    } else if (coord == "tf_half_pixel_for_nn" && info.opset() < 13) {
      p.coord = Coord::kTfHalfPixelForNn;
    } else if (coord == "tf_crop_and_resize") {
      p.coord = Coord::kTfCropAndResize;
    } else if (coord == "half_pixel_symmetric" && info.opset() >= 19) {
      p.coord = Coord::kHalfPixelSymmetric;
    } else {
      return info.Error(absl::StrCat("unknown coordinate_transformation_mode '", coord, "'"));
    }
    const std::string nearest = info.GetString("nearest_mode", "round_prefer_floor");
    if (nearest == "round_prefer_floor") {
      p.rounding = Rounding::kRoundPreferFloor;
    } else if (nearest == "round_prefer_ceil") {
      p.rounding = Rounding::kRoundPreferCeil;
    } else if (nearest == "floor") {
      p.rounding = Rounding::kFloor;
    } else if (nearest == "ceil") {
      p.rounding = Rounding::kCeil;
    } else {
      return info.Error(absl::StrCat("unknown nearest_mode '", nearest, "'"));
    }
    p.cubic_a = info.GetFloat("cubic_coeff_a", -0.75f);
    p.exclude_outside = info.GetInt("exclude_outside", 0) != 0;
    p.extrapolation = info.GetFloat("extrapolation_value", 0.0f);
    p.antialias = info.opset() >= 18 && info.GetInt("antialias", 0) != 0;
  }
  const std::string policy =
      info.opset() >= 18 ? info.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return info.Error(absl::StrCat("unknown keep_aspect_ratio_policy '", policy,
                                   "' (stretch, not_larger, not_smaller)"));
  }
  const DataType type = info.input(0).type;
  if (p.mode != Mode::kNearest && type != DataType::kUndefined && type != DataType::kFloat32) {
    return absl::UnimplementedError(absl::StrCat(NodeLabel(info).prefix(), mode,
                                                 " mode supports float32 only, got ",
                                                 engine::DataTypeName(type)));
  }
  if (info.op_type() == "Upsample" && info.opset() < 9 && info.GetFloats("scales").empty()) {
    return info.Error("attribute 'scales' is required");
  }
  return std::unique_ptr<ResizeKernel>(new ResizeKernel(info, p, policy));
}

absl::Status ResizeKernel::Targets(const KernelContext& ctx, const Shape& in, Shape* out,
                                   absl::InlinedVector<double, 8>* scales,
                                   absl::InlinedVector<double, 16>* roi) const {
  const size_t rank = in.rank();
  // Inputs: Upsample-7 [X] + attribute; Upsample-9 / Resize-10 [X, scales];
  // Resize-11+ [X, roi, scales, sizes].
  const bool v11 = !upsample_ && opset_ >= 11;
  const Tensor* scales_t = upsample_ && opset_ < 9 ? nullptr : ctx.input(v11 ? 2 : 1);
  const Tensor* sizes_t = v11 ? ctx.input(3) : nullptr;
  const Tensor* roi_t = v11 ? ctx.input(1) : nullptr;
  auto read_floats = [&](const Tensor& t, auto* v, absl::string_view what) -> absl::Status {
    const int64_t n = t.NumElements();
    v->resize(n);
    if (t.dtype() == DataType::kFloat32) {
      for (int64_t i = 0; i < n; ++i) (*v)[i] = t.data<float>()[i];
    } else if (t.dtype() == DataType::kFloat64) {
      for (int64_t i = 0; i < n; ++i) (*v)[i] = t.data<double>()[i];
    } else {
      return node_.InvalidArgument(absl::StrCat(what, " has element type ",
                                                engine::DataTypeName(t.dtype()),
                                                ", expected float32 or float64"));
    }
    return absl::OkStatus();
  };
  absl::InlinedVector<int, 8> axes;
  INFERD_RETURN_IF_ERROR(Axes(rank, &axes));
  const size_t n = axes.size();
  scales->assign(rank, 1.0);
  for (size_t d = 0; d < rank; ++d) out->push_back(in[d]);
  if (sizes_t != nullptr && sizes_t->NumElements() > 0) {
    Dims sizes;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*sizes_t, "sizes", node_, &sizes));
    if (sizes.size() != n) {
      return node_.InvalidArgument(absl::StrCat("sizes has ", sizes.size(), " entries for ", n,
                                                " resized axes of input ", in.ToString()));
    }
    double common = policy_ < 0 ? INFINITY : 0.0;  // keep_aspect_ratio_policy's one scale
    for (size_t i = 0; i < n; ++i) {
      const int d = axes[i];
      if (sizes[i] < 0 || (sizes[i] > 0 && in[d] == 0)) {
        return node_.InvalidArgument(absl::StrCat("invalid size ", sizes[i], " for dimension ", d,
                                                  " of input ", in.ToString()));
      }
      (*out)[d] = sizes[i];
      (*scales)[d] = in[d] == 0 ? 1.0 : static_cast<double>(sizes[i]) / in[d];
      common = policy_ < 0 ? std::min(common, (*scales)[d]) : std::max(common, (*scales)[d]);
    }
    if (policy_ != 0 && n > 0) {
      for (int d : axes) {
        (*scales)[d] = common;
        (*out)[d] = static_cast<int64_t>(std::floor(common * in[d] + 0.5));
      }
    }
  } else {
    absl::InlinedVector<double, 8> given;
    if (scales_t != nullptr) {
      INFERD_RETURN_IF_ERROR(read_floats(*scales_t, &given, "scales"));
    } else {
      given.assign(scales_attr_.begin(), scales_attr_.end());
    }
    if (given.size() != n) {
      return node_.InvalidArgument(absl::StrCat("scales has ", given.size(), " entries for ", n,
                                                " resized axes of input ", in.ToString(),
                                                " (and sizes are not given)"));
    }
    for (size_t i = 0; i < n; ++i) {
      const int d = axes[i];
      if (!(given[i] > 0) || given[i] > 1e6) {
        return node_.InvalidArgument(
            absl::StrCat("scale ", given[i], " for dimension ", d, " must be in (0, 1e6]"));
      }
      (*scales)[d] = given[i];
      // float32 scales as the reference multiplies them (float32 * int64 in float64).
      (*out)[d] = static_cast<int64_t>(std::floor(given[i] * in[d]));
    }
  }
  roi->assign(2 * rank, 0.0);
  for (size_t d = 0; d < rank; ++d) (*roi)[rank + d] = 1.0;
  if (p_.coord == Coord::kTfCropAndResize && roi_t != nullptr && roi_t->NumElements() > 0) {
    absl::InlinedVector<double, 16> given;
    INFERD_RETURN_IF_ERROR(read_floats(*roi_t, &given, "roi"));
    if (given.size() != 2 * n) {
      return node_.InvalidArgument(
          absl::StrCat("roi has ", given.size(), " entries, expected ", 2 * n));
    }
    for (size_t i = 0; i < n; ++i) {
      (*roi)[axes[i]] = given[i];
      (*roi)[rank + axes[i]] = given[n + i];
    }
  }
  return absl::OkStatus();
}

absl::Status ResizeKernel::Compute(KernelContext& ctx) const {
  INFERD_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, node_));
  const size_t elem = engine::ElementSize(x->dtype());
  if (elem == 0 || elem > 8) return UnsupportedType(x->dtype(), node_);
  if (p_.mode != Mode::kNearest && x->dtype() != DataType::kFloat32) {
    return node_.Unimplemented("linear and cubic modes support float32 only");
  }
  const Shape& in = x->shape();
  if (in.rank() == 0) return node_.InvalidArgument("the input must have rank >= 1");
  Shape out_shape;
  absl::InlinedVector<double, 8> scales;
  absl::InlinedVector<double, 16> roi;
  INFERD_RETURN_IF_ERROR(Targets(ctx, in, &out_shape, &scales, &roi));
  INFERD_ASSIGN_OR_RETURN(Tensor * y, ctx.MakeOutputTensor(0, x->dtype(), out_shape));
  if (y->NumElements() == 0) return absl::OkStatus();

  Tensor idx, w;
  absl::InlinedVector<AxisTable, 8> tables(in.rank());
  INFERD_RETURN_IF_ERROR(BuildTables(ctx, in, out_shape, scales, roi, idx, w, tables));
  const bool all_identity =
      std::all_of(tables.begin(), tables.end(), [](const AxisTable& t) { return t.identity; });
  if (all_identity) {
    ParallelMemcpy(y->raw_mutable_data(), x->raw_data(), x->bytes(), ctx.threads());
    return absl::OkStatus();
  }
  if (p_.mode == Mode::kNearest) {
    Nearest(*x, out_shape, tables.data(), *y, ctx.threads());
    return absl::OkStatus();
  }
  return Separable(ctx, *x, out_shape, tables, *y);
}

absl::Status ResizeKernel::BuildTables(KernelContext& ctx, const Shape& in, const Shape& out_shape,
                                       const absl::InlinedVector<double, 8>& scales,
                                       const absl::InlinedVector<double, 16>& roi, Tensor& idx,
                                       Tensor& w, absl::InlinedVector<AxisTable, 8>& tables) const {
  const size_t rank = in.rank();
  int64_t entries = 0;
  for (size_t d = 0; d < rank; ++d) {
    tables[d].taps = ResizeTaps(p_, scales[d]);
    entries += out_shape[d] * tables[d].taps;
  }
  INFERD_ASSIGN_OR_RETURN(idx, ctx.MakeTemporaryTensor(DataType::kInt64, Shape{entries}));
  INFERD_ASSIGN_OR_RETURN(w, ctx.MakeTemporaryTensor(DataType::kFloat32, Shape{entries}));
  int64_t used = 0;
  for (size_t d = 0; d < rank; ++d) {
    tables[d].in = in[d];
    tables[d].out = out_shape[d];
    tables[d].idx = idx.mutable_data<int64_t>() + used;
    tables[d].w = w.mutable_data<float>() + used;
    used += out_shape[d] * tables[d].taps;
    BuildAxisTable(p_, scales[d], roi[d], roi[rank + d], &tables[d]);
  }
  return absl::OkStatus();
}

void ResizeKernel::Nearest(const Tensor& x, const Shape& out_shape, const AxisTable* tables,
                           Tensor& y, engine::ThreadPool& pool) const {
  unsigned char extrap[8] = {};
  Visit(NumericTypes{}, x.dtype(), [&](auto tag) {
    const auto v = static_cast<typename decltype(tag)::type>(p_.extrapolation);
    std::memcpy(extrap, &v, sizeof(v));
  });
  WithElementSize(engine::ElementSize(x.dtype()), [&](auto tag) {
    using T = decltype(tag);
    T e;
    std::memcpy(&e, extrap, sizeof(T));
    NearestGather<T>(x.data<T>(), y.mutable_data<T>(), x.shape(), out_shape, tables, e, pool);
  });
}

absl::Status ResizeKernel::Separable(KernelContext& ctx, const Tensor& x, const Shape& out_shape,
                                     const absl::InlinedVector<AxisTable, 8>& tables,
                                     Tensor& y) const {
  const Shape& in = x.shape();
  const size_t rank = in.rank();
  absl::InlinedVector<size_t, 8> order;
  for (size_t d = 0; d < rank; ++d) {
    if (!tables[d].identity) order.push_back(d);
  }
  // Shrinking dims first; on ties the inner dim first (its pass is a gather, cheaper on the
  // smaller tensor, and the outer passes that follow vectorize).
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int64_t lhs = out_shape[a] * in[b], rhs = out_shape[b] * in[a];
    return lhs != rhs ? lhs < rhs : a > b;
  });
  Shape cur = in;
  const float* src = x.data<float>();
  Tensor bufs[2];
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t d = order[i];
    Shape next = cur;
    next[d] = out_shape[d];
    float* dst;
    if (i + 1 == order.size()) {
      dst = y.mutable_data<float>();
    } else {
      INFERD_ASSIGN_OR_RETURN(bufs[i % 2], ctx.MakeTemporaryTensor(DataType::kFloat32, next));
      dst = bufs[i % 2].mutable_data<float>();
    }
    const int64_t outer = cur.SizeBetween(0, d), inner = cur.SizeFrom(d + 1);
    if (tables[d].taps == 2) {
      InterpolatePass<2>(src, dst, outer, inner, tables[d], p_.extrapolation, ctx.threads());
    } else if (tables[d].taps == 4) {
      InterpolatePass<4>(src, dst, outer, inner, tables[d], p_.extrapolation, ctx.threads());
    } else {
      InterpolatePass<0>(src, dst, outer, inner, tables[d], p_.extrapolation, ctx.threads());
    }
    src = dst;
    cur = next;
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<engine::KernelDef> ResizeKernelDefs() {
  const auto& types = FixedSizeTypes();
  return {CpuDef(engine::kOnnxDomain, "Upsample", 7, 8, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Upsample", 9, 9, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Resize", 10, 10, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Resize", 11, 12, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Resize", 13, 17, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Resize", 18, 18, types, FactoryOf<ResizeKernel>()),
          CpuDef(engine::kOnnxDomain, "Resize", 19, kMaxOpset, types, FactoryOf<ResizeKernel>())};
}

}  // namespace inferd::kernels::cpu

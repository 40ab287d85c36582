// Resize (opset 10: scales input; 11+: roi, scales, sizes inputs) and Upsample (7: scales
// attribute; 9: scales input), N-D.
// Modes: nearest (any fixed-size element type; nearest_mode round_prefer_floor,
// round_prefer_ceil, floor, ceil), linear and cubic (float32; cubic_coeff_a, exclude_outside).
// coordinate_transformation_mode: half_pixel (default), pytorch_half_pixel, align_corners,
// asymmetric, tf_half_pixel_for_nn (opset 11-12), tf_crop_and_resize (roi, extrapolation_value).
// Upsample and Resize-10 map coordinates asymmetrically and round nearest indices down when
// upsampling and up when downsampling, as ONNX Runtime does.
// Output dims are `sizes`, or floor(input * scale); with sizes the scale is output / input.
// Coordinates follow the ONNX reference (onnx/backend/test/case/node/resize.py), which produced
// the test data: "length_resized" is input * scale, taps outside the input are clamped.
//
// How: per dimension, a table of source indices and weights per output index. Nearest gathers
// rows along the last dim (a row that repeats the previous one is a memcpy). Linear and cubic are
// separable: one pass per resized dimension (dims left unchanged are skipped), each output line a
// weighted sum of 2 or 4 input lines that vectorizes over the dims inside it. Tables and
// intermediates are arena temporaries. Parallel over output lines.
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

namespace inferd::kernels::cpu {
namespace {

using engine::DataType;
using engine::KernelContext;
using engine::KernelInfo;
using engine::Shape;
using engine::Tensor;

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct Params {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

// One dimension's mapping: for output index x, taps source indices idx[x * taps + t] (clamped
// into the input) with weights w[x * taps + t]; idx[x * taps] == -1 marks an extrapolated index.
struct AxisTable {
  int64_t in = 0, out = 0;
  bool identity = false;
  int64_t* idx = nullptr;
  float* w = nullptr;
};

int Taps(Mode m) { return m == Mode::kNearest ? 1 : m == Mode::kLinear ? 2 : 4; }

void CubicCoeffs(double r, double a, double c[4]) {
  const double r1 = r + 1, r2 = 1 - r, r3 = 2 - r;
  c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1;
  c[3] = ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a;
}

// The input coordinate output index `x` maps to (coordinate_transformation_mode), for a
// dimension of `in` elements resized to `out`.
double SourceCoordinate(Coord coord, int64_t x, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end) {
  const double resized = static_cast<double>(in) * scale;  // "length_resized" of the reference
  switch (coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Coord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return resized == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1.0);
    case Coord::kAsymmetric:
      return x / scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case Coord::kTfCropAndResize:
      return resized > 1.0
                 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (resized - 1.0)
                 : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  return 0;
}

// The nearest input index (unclamped) for coordinate xo = i0 + r (nearest_mode).
int64_t NearestIndex(Rounding rounding, double xo, int64_t i0, double r, double scale) {
  switch (rounding) {
    case Rounding::kRoundPreferFloor:
      return r <= 0.5 ? i0 : i0 + 1;
    case Rounding::kRoundPreferCeil:
      return r < 0.5 ? i0 : i0 + 1;
    case Rounding::kFloor:
      return i0;
    case Rounding::kCeil:
      return r > 0 ? i0 + 1 : i0;
    case Rounding::kSimple:
      return scale < 1.0 ? static_cast<int64_t>(std::ceil(xo)) : i0;
  }
  return i0;
}

// Fills `t` (whose idx/w point at out * taps entries) for one dimension.
void BuildTable(const Params& p, double scale, double roi_start, double roi_end, AxisTable* t) {
  const int taps = Taps(p.mode);
  const int64_t in = t->in;
  t->identity = t->in == t->out;
  for (int64_t x = 0; x < t->out; ++x) {
    const double xo = SourceCoordinate(p.coord, x, in, t->out, scale, roi_start, roi_end);
    int64_t* ix = t->idx + x * taps;
    float* wx = t->w + x * taps;
    if (p.coord == Coord::kTfCropAndResize && (xo < 0 || xo > static_cast<double>(in - 1))) {
      t->identity = false;
      std::fill_n(ix, taps, -1);
      std::fill_n(wx, taps, 0.0f);
      continue;
    }
    if (p.mode != Mode::kNearest && xo != static_cast<double>(x)) t->identity = false;
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    const double fl = std::floor(xo);
    const int64_t i0 = static_cast<int64_t>(fl);
    const double r = xo - fl;
    if (p.mode == Mode::kNearest) {
      ix[0] = clamp(NearestIndex(p.rounding, xo, i0, r, scale));
      wx[0] = 1.0f;
      if (ix[0] != x) t->identity = false;
      continue;
    }
    double c[4];
    if (p.mode == Mode::kLinear) {
      c[0] = 1 - r;
      c[1] = r;
    } else {
      CubicCoeffs(r, p.cubic_a, c);
    }
    const int64_t first = p.mode == Mode::kLinear ? i0 : i0 - 1;
    double sum = 0;
    for (int k = 0; k < taps; ++k) {
      const int64_t i = first + k;
      if (p.exclude_outside && (i < 0 || i >= in)) c[k] = 0;
      sum += c[k];
    }
    for (int k = 0; k < taps; ++k) {
      ix[k] = clamp(first + k);
      wx[k] = static_cast<float>(p.exclude_outside && sum != 0 ? c[k] / sum : c[k]);
    }
  }
}

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
// (the innermost dim) are a dot product of kTaps gathered values.
template <int kTaps>
void InterpolatePass(const float* a, float* b, int64_t outer, int64_t inner, const AxisTable& t,
                     float extrap, engine::ThreadPool& pool) {
  if (inner == 1) {  // the innermost dim: one row of t.out gathered dot products per outer index
    pool.ParallelFor(outer, std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(t.out, 1)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t o = begin; o < end; ++o) {
                         const float* src = a + o * t.in;
                         float* dst = b + o * t.out;
                         for (int64_t x = 0; x < t.out; ++x) {
                           const int64_t* ix = t.idx + x * kTaps;
                           const float* wx = t.w + x * kTaps;
                           if (ix[0] < 0) {
                             dst[x] = extrap;
                             continue;
                           }
                           float s = 0;
                           for (int k = 0; k < kTaps; ++k) s += wx[k] * src[ix[k]];
                           dst[x] = s;
                         }
                       }
                     });
    return;
  }
  const int64_t items = outer * t.out;
  pool.ParallelFor(items, std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(inner * kTaps, 1)),
                   [&](int64_t begin, int64_t end) {
                     int64_t o = begin / t.out, x = begin % t.out;
                     const float* base = a + o * t.in * inner;
                     for (int64_t item = begin; item < end; ++item) {
                       const int64_t* ix = t.idx + x * kTaps;
                       const float* wx = t.w + x * kTaps;
                       float* dst = b + item * inner;
                       if (ix[0] < 0) {
                         FillN(dst, inner, extrap);
                       } else {
                         const float* l0 = base + ix[0] * inner;
                         const float w0 = wx[0];
#pragma omp simd
                         for (int64_t i = 0; i < inner; ++i) dst[i] = w0 * l0[i];
                         for (int k = 1; k < kTaps; ++k) {
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
  ResizeKernel(const KernelInfo& info, Params p)
      : node_(info),
        p_(p),
        opset_(info.opset()),
        upsample_(info.op_type() == "Upsample"),
        scales_attr_(info.GetFloats("scales")) {}

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
};

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
  return std::unique_ptr<ResizeKernel>(new ResizeKernel(info, p));
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
  if (sizes_t != nullptr && sizes_t->NumElements() > 0) {
    Dims sizes;
    INFERD_RETURN_IF_ERROR(ReadIndexVector(*sizes_t, "sizes", node_, &sizes));
    if (sizes.size() != rank) {
      return node_.InvalidArgument(
          absl::StrCat("sizes has ", sizes.size(), " entries for input ", in.ToString()));
    }
    for (size_t d = 0; d < rank; ++d) {
      if (sizes[d] < 0 || (sizes[d] > 0 && in[d] == 0)) {
        return node_.InvalidArgument(absl::StrCat("invalid size ", sizes[d], " for dimension ", d,
                                                  " of input ", in.ToString()));
      }
      out->push_back(sizes[d]);
      scales->push_back(in[d] == 0 ? 1.0 : static_cast<double>(sizes[d]) / in[d]);
    }
  } else {
    if (scales_t != nullptr) {
      INFERD_RETURN_IF_ERROR(read_floats(*scales_t, scales, "scales"));
    } else {
      scales->assign(scales_attr_.begin(), scales_attr_.end());
    }
    if (scales->size() != rank) {
      return node_.InvalidArgument(absl::StrCat("scales has ", scales->size(),
                                                " entries for input ", in.ToString(),
                                                " (and sizes are not given)"));
    }
    for (size_t d = 0; d < rank; ++d) {
      if (!((*scales)[d] > 0) || (*scales)[d] > 1e6) {
        return node_.InvalidArgument(
            absl::StrCat("scale ", (*scales)[d], " for dimension ", d, " must be in (0, 1e6]"));
      }
      // float32 scales as the reference multiplies them (float32 * int64 in float64).
      out->push_back(static_cast<int64_t>(std::floor((*scales)[d] * in[d])));
    }
  }
  roi->assign(2 * rank, 0.0);
  for (size_t d = 0; d < rank; ++d) (*roi)[rank + d] = 1.0;
  if (p_.coord == Coord::kTfCropAndResize && roi_t != nullptr && roi_t->NumElements() > 0) {
    INFERD_RETURN_IF_ERROR(read_floats(*roi_t, roi, "roi"));
    if (roi->size() != 2 * rank) {
      return node_.InvalidArgument(
          absl::StrCat("roi has ", roi->size(), " entries, expected ", 2 * rank));
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
  const int taps = Taps(p_.mode);
  int64_t entries = 0;
  for (size_t d = 0; d < rank; ++d) entries += out_shape[d] * taps;
  INFERD_ASSIGN_OR_RETURN(idx, ctx.MakeTemporaryTensor(DataType::kInt64, Shape{entries}));
  INFERD_ASSIGN_OR_RETURN(w, ctx.MakeTemporaryTensor(DataType::kFloat32, Shape{entries}));
  int64_t used = 0;
  for (size_t d = 0; d < rank; ++d) {
    tables[d].in = in[d];
    tables[d].out = out_shape[d];
    tables[d].idx = idx.mutable_data<int64_t>() + used;
    tables[d].w = w.mutable_data<float>() + used;
    used += out_shape[d] * taps;
    BuildTable(p_, scales[d], roi[d], roi[rank + d], &tables[d]);
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
  const int taps = Taps(p_.mode);
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
    if (taps == 2) {
      InterpolatePass<2>(src, dst, outer, inner, tables[d], p_.extrapolation, ctx.threads());
    } else {
      InterpolatePass<4>(src, dst, outer, inner, tables[d], p_.extrapolation, ctx.threads());
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
          CpuDef(engine::kOnnxDomain, "Resize", 13, kMaxOpset, types, FactoryOf<ResizeKernel>())};
}

}  // namespace inferd::kernels::cpu

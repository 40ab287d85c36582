#include "kernels/cpu/resize_table.h"

#include <algorithm>
#include <cmath>

namespace inferd::kernels::cpu {
namespace {

void CubicCoeffs(double r, double a, double c[4]) {
  const double r1 = r + 1, r2 = 1 - r, r3 = 2 - r;
  c[0] = ((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * r2 - (a + 3)) * r2 * r2 + 1;
  c[3] = ((a * r3 - 5 * a) * r3 + 8 * a) * r3 - 4 * a;
}

// The cubic convolution kernel at distance x (Keys, with coefficient a).
double CubicKernel(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Half the width of the interpolation filter, in input elements at scale 1.
double Support(ResizeMode m) { return m == ResizeMode::kCubic ? 2.0 : 1.0; }

bool Antialiased(const ResizeParams& p, double scale) {
  return p.antialias && p.mode != ResizeMode::kNearest && scale < 1.0;
}

// The input coordinate output index `x` maps to (coordinate_transformation_mode), for a
// dimension of `in` elements resized to `out`.
double SourceCoordinate(ResizeCoord coord, int64_t x, int64_t in, int64_t out, double scale,
                        double roi_start, double roi_end) {
  const double resized = static_cast<double>(in) * scale;  // "length_resized" of the reference
  switch (coord) {
    case ResizeCoord::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case ResizeCoord::kHalfPixelSymmetric: {
      // The centre of the input maps to the centre of the output when the output size was
      // rounded down from in * scale.
      const double adjustment = static_cast<double>(out) / resized;
      const double offset = static_cast<double>(in) / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case ResizeCoord::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners:
      return resized == 1.0 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1.0);
    case ResizeCoord::kAsymmetric:
      return x / scale;
    case ResizeCoord::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case ResizeCoord::kTfCropAndResize:
      return resized > 1.0
                 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (resized - 1.0)
                 : 0.5 * (roi_start + roi_end) * (in - 1);
  }
  return 0;
}

// The nearest input index (unclamped) for coordinate xo = i0 + r (nearest_mode).
int64_t NearestIndex(ResizeRounding rounding, double xo, int64_t i0, double r, double scale) {
  switch (rounding) {
    case ResizeRounding::kRoundPreferFloor:
      return r <= 0.5 ? i0 : i0 + 1;
    case ResizeRounding::kRoundPreferCeil:
      return r < 0.5 ? i0 : i0 + 1;
    case ResizeRounding::kFloor:
      return i0;
    case ResizeRounding::kCeil:
      return r > 0 ? i0 + 1 : i0;
    case ResizeRounding::kSimple:
      return scale < 1.0 ? static_cast<int64_t>(std::ceil(xo)) : i0;
  }
  return i0;
}

// Weights of the stretched filter (antialias, scale < 1) around xo, as the reference computes
// them: taps left + start .. left + start + taps - 1, where left is the input index at or just
// below xo (xo itself counts as "just above" left = xo - 1, ratio 1) and start = 1 - taps / 2.
void AntialiasTaps(const ResizeParams& p, double scale, double xo, int taps, int64_t* ix,
                   float* c) {
  const double fl = std::floor(xo);
  const bool whole = fl == xo;
  const int64_t left = static_cast<int64_t>(fl) - (whole ? 1 : 0);
  const double ratio = whole ? 1.0 : xo - fl;
  const int start = 1 - taps / 2;
  for (int k = 0; k < taps; ++k) {
    const double arg = (start + k - ratio) * scale;
    c[k] = static_cast<float>(p.mode == ResizeMode::kLinear ? std::max(0.0, 1 - std::abs(arg))
                                                            : CubicKernel(arg, p.cubic_a));
    ix[k] = left + start + k;
  }
}

}  // namespace

int ResizeTaps(const ResizeParams& p, double scale) {
  if (p.mode == ResizeMode::kNearest) return 1;
  if (!Antialiased(p, scale)) return p.mode == ResizeMode::kLinear ? 2 : 4;
  const int start = static_cast<int>(std::floor(-Support(p.mode) / scale)) + 1;
  return 2 - 2 * start;
}

void BuildAxisTable(const ResizeParams& p, double scale, double roi_start, double roi_end,
                    AxisTable* t) {
  const int taps = t->taps;
  const int64_t in = t->in;
  const bool antialias = Antialiased(p, scale);
  t->identity = t->in == t->out && !antialias;
  for (int64_t x = 0; x < t->out; ++x) {
    const double xo = SourceCoordinate(p.coord, x, in, t->out, scale, roi_start, roi_end);
    int64_t* ix = t->idx + x * taps;
    float* wx = t->w + x * taps;
    if (p.coord == ResizeCoord::kTfCropAndResize && (xo < 0 || xo > static_cast<double>(in - 1))) {
      t->identity = false;
      std::fill_n(ix, taps, -1);
      std::fill_n(wx, taps, 0.0f);
      continue;
    }
    if (p.mode != ResizeMode::kNearest && xo != static_cast<double>(x)) t->identity = false;
    auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    const double fl = std::floor(xo);
    const int64_t i0 = static_cast<int64_t>(fl);
    const double r = xo - fl;
    if (p.mode == ResizeMode::kNearest) {
      ix[0] = clamp(NearestIndex(p.rounding, xo, i0, r, scale));
      wx[0] = 1.0f;
      if (ix[0] != x) t->identity = false;
      continue;
    }
    // Raw weights into wx, then zeroed outside the input (exclude_outside) and normalized
    // (exclude_outside, antialias).
    if (antialias) {
      AntialiasTaps(p, scale, xo, taps, ix, wx);
    } else {
      double c[4];
      if (p.mode == ResizeMode::kLinear) {
        c[0] = 1 - r;
        c[1] = r;
      } else {
        CubicCoeffs(r, p.cubic_a, c);
      }
      const int64_t first = p.mode == ResizeMode::kLinear ? i0 : i0 - 1;
      for (int k = 0; k < taps; ++k) {
        ix[k] = first + k;
        wx[k] = static_cast<float>(c[k]);
      }
    }
    double sum = 0;
    for (int k = 0; k < taps; ++k) {
      if (p.exclude_outside && (ix[k] < 0 || ix[k] >= in)) wx[k] = 0;
      sum += wx[k];
    }
    const bool normalize = (p.exclude_outside || antialias) && sum != 0;
    for (int k = 0; k < taps; ++k) {
      ix[k] = clamp(ix[k]);
      if (normalize) wx[k] = static_cast<float>(wx[k] / sum);
    }
  }
}

}  // namespace inferd::kernels::cpu

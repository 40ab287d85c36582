// Resize's per-dimension tables: for each output index of one dimension, the input indices it
// reads (taps) and their weights, from the mode (nearest, linear, cubic), the
// coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside and (opset 18)
// antialias. Coordinates follow the ONNX reference (onnx/reference/ops/op_resize.py), which made
// the test data: "length_resized" is input * scale (fractional when the size came from a scale),
// taps outside the input read the border element. Internal to //kernels/cpu; pure functions.
#ifndef INFERD_KERNELS_CPU_RESIZE_TABLE_H_
#define INFERD_KERNELS_CPU_RESIZE_TABLE_H_

#include <cstdint>

namespace inferd::kernels::cpu {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoord {
  kHalfPixel,
  kHalfPixelSymmetric,  // opset 19
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class ResizeRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  bool antialias = false;  // opset 18: linear and cubic stretch their filter when downscaling
  float extrapolation = 0.0f;
};

// One dimension's mapping: output index x reads input indices idx[x * taps + t] (clamped into the
// input) with weights w[x * taps + t]; idx[x * taps] == -1 marks an extrapolated index
// (tf_crop_and_resize outside the roi).
struct AxisTable {
  int64_t in = 0, out = 0;
  int taps = 1;
  bool identity = false;  // output equals input along this dim
  int64_t* idx = nullptr;
  float* w = nullptr;
};

// Taps per output index for a dimension resized by `scale`: 1 (nearest), 2 (linear), 4 (cubic),
// or, with antialias when downscaling, the stretched filter's footprint.
int ResizeTaps(const ResizeParams& p, double scale);

// Fills `t` (t->in, t->out, t->taps set; idx / w pointing at out * taps entries).
void BuildAxisTable(const ResizeParams& p, double scale, double roi_start, double roi_end,
                    AxisTable* t);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_RESIZE_TABLE_H_

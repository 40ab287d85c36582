// Sliding-window geometry shared by Conv, ConvTranspose and the pools, on every device: reads
// kernel_shape, strides, dilations, pads, auto_pad and ceil_mode (and ConvTranspose's
// output_padding and output_shape), and computes per spatial dimension the padding and output
// size the ONNX specification gives. Value types and pure functions; thread-compatible.
#ifndef INFERD_KERNELS_CPU_WINDOW_H_
#define INFERD_KERNELS_CPU_WINDOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

struct WindowAttributes {
  std::vector<int64_t> kernel_shape;  // empty: from the weights (Conv)
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;

  // Rejects an unknown auto_pad at load.
  static absl::StatusOr<WindowAttributes> Read(const engine::KernelInfo& info);
};

// One entry per spatial dimension.
struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
  // pad_end adjusted so that floor division gives `out` (ceil_mode may need a partial last
  // window, or drop one), for primitives that derive the output size that way (oneDNN).
  std::vector<int64_t> pad_end_floor;
};

// `in` holds the input's spatial dims; `kernel` the window (already checked against
// kernel_shape by the caller).
absl::StatusOr<WindowGeometry> ComputeWindow(const WindowAttributes& attrs,
                                             absl::Span<const int64_t> in,
                                             absl::Span<const int64_t> kernel,
                                             const NodeLabel& node);

// ConvTranspose's attributes beyond the window's.
struct TransposedWindowAttributes {
  WindowAttributes window;  // kernel_shape, strides, dilations, pads, auto_pad
  std::vector<int64_t> output_padding, output_shape;

  // Rejects an unknown auto_pad and a negative output_padding at load.
  static absl::StatusOr<TransposedWindowAttributes> Read(const engine::KernelInfo& info);
};

// ConvTranspose's geometry for input spatial dims `in` and window `kernel`. Per dim, with
// natural = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1:
//   - output_shape given (its spatial dims, or all of them): that size; the total padding
//     natural - out (none when negative) split head / tail, the larger half at the head for
//     SAME_LOWER, at the tail otherwise, as the ONNX test data has it;
//   - auto_pad SAME_UPPER / SAME_LOWER: out = in * stride, padding as above;
//   - otherwise out = natural - pads_begin - pads_end (VALID: no pads).
// Returns out, pad_begin (the head) and pad_end such that out = stride * (in - 1) + extent -
// pad_begin - pad_end: pad_end is negative where output_padding or a larger output_shape adds
// outputs past the last one an input reaches (only the bias reaches them). pad_end_floor =
// pad_end.
absl::StatusOr<WindowGeometry> ComputeTransposedWindow(const TransposedWindowAttributes& attrs,
                                                       absl::Span<const int64_t> in,
                                                       absl::Span<const int64_t> kernel,
                                                       const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_WINDOW_H_

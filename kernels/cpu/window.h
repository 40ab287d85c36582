// Sliding-window geometry shared by Conv and MaxPool: reads kernel_shape, strides, dilations,
// pads, auto_pad and ceil_mode, and computes per spatial dimension the padding and output size
// the ONNX specification gives. Value types; thread-compatible.
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

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_WINDOW_H_

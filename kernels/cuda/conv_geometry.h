// How a Conv or ConvTranspose node maps onto cuDNN's convolutions for one set of input shapes.
// The ONNX geometry (output size, pads) is window.h's, as on the CPU; what is cuDNN's here:
//   - cuDNN pads symmetrically only. Conv with pads that differ at the two ends copies its input
//     into a zero-filled staging buffer that holds the difference, and pads both ends by the
//     smaller pad. ConvTranspose (cudnnConvolutionBackwardData) computes a "full" output window
//     of its own size with the smaller pad, and the node's output is a window of it at an
//     offset (asymmetric pads, output_padding, an output_shape past the natural size).
//   - A 1-D convolution is a 2-D one of height 1 (cuDNN's tensors have rank 4 or 5).
// Pure functions and value types: no device needed (the host tests check the arithmetic).
#ifndef INFERD_KERNELS_CUDA_CONV_GEOMETRY_H_
#define INFERD_KERNELS_CUDA_CONV_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/kernel.h"
#include "engine/shape.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/window.h"

namespace inferd::kernels::cuda {

// A Conv's or ConvTranspose's attributes, read once per node.
struct ConvAttributes {
  bool transposed = false;
  // The window; output_padding and output_shape are read for ConvTranspose only.
  cpu::TransposedWindowAttributes window;
  int64_t group = 1;

  // Rejects an unknown auto_pad, a group below 1, a negative output_padding.
  static absl::StatusOr<ConvAttributes> Read(const engine::KernelInfo& info, bool transposed);
};

struct ConvGeometry {
  bool transposed = false;      // ConvTranspose
  engine::Shape out;            // the node's output, [N, M, spatial...]
  std::vector<int64_t> output;  // the same in cuDNN's rank (a 1-D output gets a height of 1)
  int64_t group = 1;
  // Empty output, or no input reaches it (no input channels, an empty input): the output is
  // the bias, or zeros; nothing below is set.
  bool degenerate = false;

  // cuDNN's view, rank 4 or 5. Conv: x -> y (cudnnConvolutionForward). ConvTranspose: the
  // backward data of a convolution from y to x: dy = the node's input, dx = `y`.
  std::vector<int64_t> x, w, y;
  // Per spatial dim of cuDNN's view: symmetric padding, strides, dilations.
  std::vector<int64_t> pad, strides, dilations;
  // Conv: x is the node's input inside a staging buffer of shape `x` at `offset` (per spatial
  // dim), zeros around it. ConvTranspose: the node's output is the window of `y` at `offset`.
  // Without staging, `x` (Conv) or `y` (ConvTranspose) is the node's tensor itself.
  bool staged = false;
  std::vector<int64_t> offset;
  // The node's own tensor in cuDNN's rank: Conv its input, ConvTranspose its output.
  std::vector<int64_t> node_tensor;
};

// The geometry for input shapes x, w and b (nullptr: no bias), with the CPU kernels' checks
// and messages. UNIMPLEMENTED where cuDNN cannot express the node (an output_shape that
// reaches more than stride - 1 positions past what the inputs reach, dimensions past int).
absl::StatusOr<ConvGeometry> ComputeConvGeometry(const ConvAttributes& attrs,
                                                 const engine::Shape& x, const engine::Shape& w,
                                                 const engine::Shape* b,
                                                 const cpu::NodeLabel& node);

}  // namespace inferd::kernels::cuda

#endif  // INFERD_KERNELS_CUDA_CONV_GEOMETRY_H_

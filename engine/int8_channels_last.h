// Channels-last 8-bit activations between quantized convolutions, assigned at load after
// partitioning (beside engine/blocked_layouts.h, its float counterpart).
//
// oneDNN's int8 convolutions compute on channels-last (NHWC) tensors. A QLinearConv that reads
// and writes plain NCHW transposes its input into that layout and its output back, on every run:
// for the 1x1 convolutions of a quantized MobileNet, more time than the convolution. This pass
// finds the 8-bit values that can stay channels-last from one convolution to the next; the
// transposes then happen only at the edges of such regions. A channels-last value has the plain
// tensor's shape and element count (its dims still read N, C, H, W): only the order of its bytes
// differs, so the memory plan does not change.
//
// A value is kept channels-last when all of these hold:
//   - uint8 or int8, rank 4; not a graph input or output, not read inside a subgraph;
//   - its producer and every reader run on a CPU device and are QLinearConvs (as input 0 of a
//     reader) that oneDNN requantizes itself (constant per-tensor x and y scales and zero
//     points, a constant int8 W with per-tensor or per-channel scales and no zero point or a
//     zero one), or com.microsoft QLinearAdds whose A, B and C have the same shape and are all
//     channels-last (elementwise, so any permutation of the elements shared by all three is),
//     or 2-D 8-bit MaxPools without Indices (input and output channels-last together).
// The candidates are narrowed to a fixed point as in blocked_layouts.cc.
//
// The QLinearConvs that read or write a channels-last value become com.inferd::QLinearConv
// (keeping their names and inputs) with the int attributes `channels_last_input` and
// `channels_last_output` (1: that tensor is channels-last). Needs the registry's
// com.inferd::QLinearConv (registered where the CPU runs oneDNN's int8 convolution); without it,
// changes nothing. Such MaxPools keep their op and get the int attribute `channels_last` = 1.
#ifndef INFERD_ENGINE_INT8_CHANNELS_LAST_H_
#define INFERD_ENGINE_INT8_CHANNELS_LAST_H_

#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

inline constexpr char kChannelsLastInputAttr[] = "channels_last_input";
inline constexpr char kChannelsLastOutputAttr[] = "channels_last_output";
inline constexpr char kChannelsLastAttr[] = "channels_last";  // MaxPool

// Marks the 8-bit values between CPU QLinearConvs that stay channels-last (above); returns how
// many values. The graph must be partitioned (nodes carry their device).
int AssignInt8ChannelsLast(Graph& graph, const KernelRegistry& registry);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_INT8_CHANNELS_LAST_H_

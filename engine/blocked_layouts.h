// Blocked activation layouts between oneDNN convolutions, assigned at load after partitioning.
//
// oneDNN's convolutions compute on channel-blocked activations (nChw16c with AVX-512, nChw8c
// otherwise: [N][C/16][H][W][16]). A convolution that reads and writes plain NCHW reorders its
// input into that layout and its output back, on every run. This pass finds the values that can
// stay blocked from one convolution to the next and tells the convolutions so; the reorders then
// happen only at the edges of such regions.
//
// A value is kept blocked when all of these hold:
//   - float32, rank 3-5, channel count (dim 1) known and a multiple of kLayoutChannelBlock: with
//     it, the blocked tensor has exactly the plain tensor's elements, permuted (no padding), so
//     it fits the same buffer and the memory plan does not change;
//   - it is not a graph input or output, not read inside a subgraph;
//   - its producer and every reader run on a CPU device and are convolutions (Conv / FusedConv,
//     as input 0 of a reader) or layout-transparent ops whose other activation inputs and
//     outputs are blocked too. Layout-transparent: unary elementwise ops (Relu, Clip, LeakyRelu,
//     Elu, Sigmoid, Tanh, HardSigmoid, HardSwish, Softplus) whose other inputs are constants
//     of at most one element; Add / Sub / Mul / Div of two activations of the same shape (equal
//     known dims, or the same symbol), or of an activation and a one-element constant; Concat
//     along the channel axis; Slice of whole channel blocks along the channel axis (constant
//     starts, ends and axes, unit steps). On a permutation of the elements that is the same for all
//     their activation inputs and outputs, these compute the same result. A 2-D float MaxPool
//     (without Indices) pools blocked to blocked; GlobalAveragePool / GlobalMaxPool read a
//     blocked input and write their [N, C, 1...] output, whose bytes are the same either way.
// The candidates are narrowed to a fixed point: a value whose producer or reader does not accept
// it is dropped, and a transparent op with one plain activation makes all of its activations
// plain.
//
// The convolutions that read or write a blocked value become com.inferd::FusedConv (a plain
// Conv with no activation is one) keeping their names, with the int attributes `blocked_input`
// and `blocked_output` (1: that tensor is blocked); the pools keep their op and get the same
// attributes (MaxPool both, the global pools `blocked_input`). Where a shape is not known at
// load (the channel count, or the shapes of a binary op's operands), the value stays plain: a
// clean fallback to today's per-convolution reorders.
#ifndef INFERD_ENGINE_BLOCKED_LAYOUTS_H_
#define INFERD_ENGINE_BLOCKED_LAYOUTS_H_

#include <cstdint>

#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

// Channels per block of the largest blocked layout a CPU kernel may use (16: AVX-512's
// nChw16c); a multiple of every smaller one (nChw8c).
inline constexpr int64_t kLayoutChannelBlock = 16;

inline constexpr char kBlockedInputAttr[] = "blocked_input";
inline constexpr char kBlockedOutputAttr[] = "blocked_output";

// Marks the values between CPU convolutions that stay blocked (above); returns how many values.
// Needs the registry's com.inferd::FusedConv; without it, changes nothing. The graph must be
// partitioned (nodes carry their device).
int AssignBlockedLayouts(Graph& graph, const KernelRegistry& registry);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_BLOCKED_LAYOUTS_H_

// Lowerings: load-time rewrites that make a node runnable by expressing it with operators inferd
// has kernels for. Unlike the fusions (engine/rewrites.h, which only make a graph faster and can
// be turned off), they always run. A lowering applies only where the registry has a kernel for
// what it writes.
//   - com.microsoft DynamicQuantizeLSTM (what ONNX Runtime's quantize_dynamic writes for an
//     LSTM) with constant int8 / uint8 W and R, scales and zero points -> LSTM with the weights
//     dequantized once into float32 ([D, I, 4H] -> [D, 4H, I], the LSTM's layout), kept in
//     the session's DerivedWeights: 4 bytes per weight instead of 1. ONNX Runtime quantizes X and
//     H at every step; the float LSTM does not, so its results are the float model's, within the
//     weights' quantization error of ONNX Runtime's. Only for a registry without a
//     DynamicQuantizeLSTM kernel: the CPU's runs it in integers (kernels/cpu/rnn_quant.cc).
#ifndef INFERD_ENGINE_LOWERINGS_H_
#define INFERD_ENGINE_LOWERINGS_H_

#include "absl/status/statusor.h"
#include "engine/derived_weights.h"
#include "engine/graph.h"
#include "engine/kernel_registry.h"

namespace inferd::engine {

// Applies every lowering; returns how many nodes were lowered. New weights go into `derived`,
// which must outlive every kernel made from `graph`.
absl::StatusOr<int> ApplyLowerings(Graph& graph, const KernelRegistry& registry,
                                   DerivedWeights& derived);

}  // namespace inferd::engine

#endif  // INFERD_ENGINE_LOWERINGS_H_

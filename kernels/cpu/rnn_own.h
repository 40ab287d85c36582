// The recurrent operators in our own code: every case ONNX defines (any activations, clip,
// input_forget, peepholes, per-batch sequence_lens, weights given at run time), where oneDNN's
// primitives (rnn_onednn.h) cannot follow ONNX.
//
// Two passes per run:
//   pass 1: the input projections X * W^T of every step at once, one dnnl_sgemm per direction
//           (cut into row blocks over the intra-op threads when large);
//   pass 2: the recurrence, step by step: the gates' recurrent part H_{t-1} * R^T (dnnl_sgemm),
//           then the gates and states elementwise. Directions and blocks of batch rows are
//           independent sequences, so they run as parts on the intra-op threads with no barrier
//           between steps.
// A batch row stops at its sequence length: its state stays as it was, Y past its length is
// zero, Y_h / Y_c hold its state after its last step (zero for a length of 0). The reverse
// direction of a row runs from its own last step (length - 1) down to 0.
//
// DynamicQuantizeLSTM (RnnTensors::quant): both products in integers (qgemv.h), X quantized to
// uint8 once a run and H at every step (over the whole batch, so a direction's batch rows run as
// one part), each with its own scale and zero point from its range, as ONNX Runtime does.
//
// Memory: everything per run lives in the caller's workspace (OwnWorkspaceBytes, 64-byte aligned
// regions); no heap allocation of ours. Pure functions; thread-safe.
#ifndef INFERD_KERNELS_CPU_RNN_OWN_H_
#define INFERD_KERNELS_CPU_RNN_OWN_H_

#include <cstddef>

#include "absl/status/status.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/rnn_common.h"

namespace inferd::kernels::cpu {

// The workspace RunOwnRnn needs for this geometry (`quantized`: with RnnTensors::quant).
size_t OwnWorkspaceBytes(const RnnAttributes& attrs, const RnnGeometry& g, bool quantized = false);

// Runs one LSTM, GRU or RNN over `t` (shapes already checked against `g`, sequence lengths in
// [0, T]) with `workspace` of at least OwnWorkspaceBytes bytes.
absl::Status RunOwnRnn(const RnnAttributes& attrs, const RnnGeometry& g, const RnnTensors& t,
                       void* workspace, engine::ThreadPool& pool, const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_RNN_OWN_H_

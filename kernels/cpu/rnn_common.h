// What the recurrent kernels (LSTM, GRU, RNN; rnn.cc) share: their attributes read once at
// creation (direction, hidden_size, activations with alpha/beta, clip, input_forget, layout,
// linear_before_reset), the problem's geometry checked against the inputs' shapes, where each
// (time, batch, direction) lives in the layout-0 and layout-1 tensors, and the activation
// functions. Internal to //kernels/cpu; value types and pure functions, thread-compatible.
//
// ONNX's tensors (layout 0; layout 1 puts batch first in X, Y, Y_h, Y_c, initial_h, initial_c):
//   X [T, N, I]   W [D, G*C, I]   R [D, G*C, C]   B [D, 2*G*C] (Wb then Rb)   P [D, 3*C] (i, o, f)
//   sequence_lens [N] int32   initial_h / initial_c [D, N, C]
//   Y [T, D, N, C]   Y_h / Y_c [D, N, C]
// with G gates per direction in ONNX's order: LSTM i, o, f, c (G = 4); GRU z, r, h (3); RNN 1.
#ifndef INFERD_KERNELS_CPU_RNN_COMMON_H_
#define INFERD_KERNELS_CPU_RNN_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engine/kernel.h"
#include "engine/kernel_registry.h"
#include "engine/shape.h"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/qgemv.h"

namespace inferd::kernels::cpu {

enum class RnnOp { kRnn, kGru, kLstm };
enum class RnnDirection { kForward, kReverse, kBidirectional };

// The activation functions the spec lists (names compared case-insensitively, as ONNX Runtime
// does).
enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,           // alpha * x + beta
  kLeakyRelu,        // x >= 0 ? x : alpha * x
  kThresholdedRelu,  // x > alpha ? x : 0
  kScaledTanh,       // alpha * tanh(beta * x)
  kHardSigmoid,      // min(max(alpha * x + beta, 0), 1)
  kElu,              // x >= 0 ? x : alpha * (e^x - 1)
  kSoftsign,         // x / (1 + |x|)
  kSoftplus,         // log(1 + e^x)
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  float alpha = 0.0f, beta = 0.0f;
};

// x[i] = activation(x[i]) for i in [0, n). Vectorizes for Tanh, Sigmoid, Relu and the piecewise
// linear ones (fast_math.h).
void ApplyActivation(const Activation& a, float* x, int64_t n);

// Input and output positions of the three operators.
enum RnnInput { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP };
enum RnnOutput { kY, kYH, kYC };

struct RnnAttributes {
  RnnOp op = RnnOp::kLstm;
  RnnDirection direction = RnnDirection::kForward;
  int64_t hidden_size = -1;  // -1: not given, taken from R's shape
  // activations_per_direction() per direction, direction 0's first: LSTM (f, g, h), GRU (f, g),
  // RNN (f).
  std::vector<Activation> activations;
  std::optional<float> clip;         // bound on every activation's input
  bool input_forget = false;         // LSTM: f = 1 - i
  int layout = 0;                    // 1: batch first (opset 14)
  bool linear_before_reset = false;  // GRU

  int num_directions() const { return direction == RnnDirection::kBidirectional ? 2 : 1; }
  int gates() const { return op == RnnOp::kLstm ? 4 : (op == RnnOp::kGru ? 3 : 1); }
  int activations_per_direction() const {
    return op == RnnOp::kLstm ? 3 : (op == RnnOp::kGru ? 2 : 1);
  }
  const Activation& activation(int direction, int k) const {
    return activations[direction * activations_per_direction() + k];
  }
  // Whether direction `d` runs from the last step to the first.
  bool reversed(int d) const { return direction == RnnDirection::kReverse || d == 1; }
};

// Reads and checks the node's attributes: direction, activations (their count, names, and
// alpha/beta consumed in order by the activations that take them; defaults per the ONNX
// operators of the same name: LeakyRelu 0.01, ThresholdedRelu 1.0, HardSigmoid 0.2/0.5, Elu 1.0,
// Affine 1.0/0.0, ScaledTanh 1.0/1.0), clip > 0, layout, GRU's linear_before_reset.
absl::StatusOr<RnnAttributes> ReadRnnAttributes(RnnOp op, const engine::KernelInfo& info);

// The sizes of one run, and where things are in its tensors.
struct RnnGeometry {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int dirs = 1, gates = 1, layout = 0;

  int64_t gate_width() const { return gates * hidden; }  // G*C: one row of W, R, gates
  // Element offsets of a (t, n) row in X, a (t, d, n) row in Y, a (d, n) row in the states
  // (initial_h, initial_c, Y_h, Y_c).
  int64_t XRow(int64_t t, int64_t n) const {
    return (layout == 0 ? t * batch + n : n * seq + t) * input;
  }
  int64_t YRow(int64_t t, int64_t d, int64_t n) const {
    return (layout == 0 ? (t * dirs + d) * batch + n : (n * seq + t) * dirs + d) * hidden;
  }
  int64_t StateRow(int64_t d, int64_t n) const {
    return (layout == 0 ? d * batch + n : n * dirs + d) * hidden;
  }
  engine::Shape YShape() const;
  engine::Shape StateShape() const;
};

// The geometry of a run with these input shapes (nullptr: input absent), every shape checked
// against X's and the attributes, sizes overflow-checked. `shapes` is indexed by RnnInput.
absl::StatusOr<RnnGeometry> ComputeRnnGeometry(const RnnAttributes& attrs,
                                               absl::Span<const engine::Shape* const> shapes,
                                               const NodeLabel& node);

// The inputs and wanted outputs of one run (nullptr: absent or unwanted).
// com.microsoft DynamicQuantizeLSTM's weights packed at creation (rnn_quant.cc), per direction:
// W^T as [I][G*C] and R^T as [C][G*C] with their scales and zero points. The own code then
// quantizes X (once a run) and H (at every step) to uint8 as ONNX Runtime does and multiplies in
// integers (qgemv.h).
struct QuantRnnWeights {
  std::vector<PackedInt8Weights> w, r;
  QgemvIsa isa = QgemvIsa::kPortable;
};

struct RnnTensors {
  const float *x = nullptr, *w = nullptr, *r = nullptr, *b = nullptr;
  const int32_t* sequence_lens = nullptr;
  const float *initial_h = nullptr, *initial_c = nullptr, *p = nullptr;
  // W and R transposed ([D, I, G*C] and [D, C, G*C]) when the kernel made them at creation
  // (constant weights), for the own code's products; else nullptr.
  const float *w_t = nullptr, *r_t = nullptr;
  const QuantRnnWeights* quant = nullptr;  // DynamicQuantizeLSTM: w, r, w_t and r_t unused
  float *y = nullptr, *y_h = nullptr, *y_c = nullptr;
};

// How many parts of a recurrence to run (directions times blocks of batch rows) and whether to
// run them on the intra-op threads: PartCount's answer (onednn_util.h) for the FLOPs of the
// recurrent products, at least one block per direction, at most one per batch row.
struct RnnSplit {
  int chunks = 1;         // blocks of batch rows per direction
  bool parallel = false;  // on the pool; else one after the other on the caller's thread
  int parts(const RnnGeometry& g) const { return g.dirs * chunks; }
  // Batch rows [begin, end) of `chunk`.
  int64_t begin(const RnnGeometry& g, int chunk) const { return g.batch * chunk / chunks; }
  int64_t end(const RnnGeometry& g, int chunk) const { return g.batch * (chunk + 1) / chunks; }
};
RnnSplit SplitRecurrence(const RnnGeometry& g, int threads);

// DynamicQuantizeLSTM's kernel definition (rnn_quant.cc), listed by RnnKernelDefs.
engine::KernelDef DynamicQuantizeLstmDef();

// Runs run(part) for parts [0, parts): on `pool` (RunParts) when `parallel`, else in order on the
// calling thread. oneDNN's OpenMP team is 1 on every thread that runs a part. No allocation.
absl::Status RunRnnParts(engine::ThreadPool& pool, bool parallel, int parts,
                         absl::FunctionRef<absl::Status(int part, int slot)> run);

// OK when every length is in [0, T]; otherwise INVALID_ARGUMENT naming the first bad one.
absl::Status CheckSequenceLens(const int32_t* lens, int64_t batch, int64_t seq,
                               const NodeLabel& node);

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_RNN_COMMON_H_

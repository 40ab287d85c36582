// RnnPrimitive: LSTM, GRU and RNN on oneDNN's RNN primitives (lstm_forward, gru_forward,
// lbr_gru_forward, vanilla_rnn_forward) for the cases whose semantics they share with ONNX:
//   LSTM  activations Sigmoid, Tanh, Tanh; peepholes or not; no clip, no input_forget
//   GRU   activations Sigmoid, Tanh; linear_before_reset 1 is oneDNN's lbr_gru, 0 its gru
//   RNN   activation Tanh, Relu or Sigmoid (eltwise_tanh, eltwise_relu, eltwise_logistic)
// with W, R, B and P constant, and every sequence the full length T (the kernel checks
// sequence_lens per run and takes its own code otherwise: rnn_own.h).
//
// Layouts: each part is one unidirectional primitive (left2right, or right2left for the reverse
// direction) over a block of batch rows, reading X and writing Y, Y_h, Y_c in place through
// strided memory descriptors (ONNX's [T, D, N, C] Y and both layouts are views oneDNN accepts).
// Weights: ONNX's W [G*C, I] and R [G*C, C] per direction, gates reordered from ONNX's order
// (LSTM i, o, f, c; GRU z, r, h) to oneDNN's (LSTM i, f, c~, o; GRU u, r, o), Wb + Rb summed
// (lbr_gru: Wbz + Rbz, Wbr + Rbr, Wbh, and Rbh as its fourth bias), peepholes from ONNX's
// (i, o, f) to oneDNN's (i, f, o); all reordered once at Build into the layouts the primitive
// chose (format_tag::any), in oneDNN-allocated memory owned here: prepacked_bytes().
//
// Threads: directions and blocks of batch rows are independent sequences; they run as parts on
// the intra-op threads (SplitRecurrence), each primitive single-threaded. Workspace: one
// scratchpad region per slot, then Y when the node has no Y output (oneDNN always writes its
// dst_layer), then Y_h and Y_c for the runs that do not want them: workspace_bytes().
//
// Immutable after Build except for its pool of memory objects; Execute may run concurrently and
// allocates nothing of ours once warm (onednn_util.h).
#ifndef INFERD_KERNELS_CPU_RNN_ONEDNN_H_
#define INFERD_KERNELS_CPU_RNN_ONEDNN_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/rnn_common.h"

namespace inferd::kernels::cpu {

struct RnnPrimitiveSpec {
  RnnAttributes attrs;
  RnnGeometry geometry;
  // The constant weights (b and p may be nullptr: absent).
  const float *w = nullptr, *r = nullptr, *b = nullptr, *p = nullptr;
  bool initial_h = false, initial_c = false;  // inputs present
  bool y_output = true;  // false: the node has no Y; the primitive writes it into the workspace
};

class RnnPrimitive {
 public:
  // Whether oneDNN computes what ONNX defines for these attributes (see above).
  static bool SupportsAttributes(const RnnAttributes& a);
  // The workspace Build would declare, from primitive descriptors only.
  static absl::StatusOr<size_t> WorkspaceBytes(const RnnPrimitiveSpec& spec, int threads,
                                               const NodeLabel& node);
  static absl::StatusOr<std::shared_ptr<const RnnPrimitive>> Build(const RnnPrimitiveSpec& spec,
                                                                   int threads,
                                                                   const NodeLabel& node);

  size_t workspace_bytes() const { return plan_.total; }
  size_t prepacked_bytes() const;
  int parts() const { return static_cast<int>(plan_.parts.size()); }
  // "brgemm (2 parts)" and the like, for benchmarks and logs.
  std::string Describe() const;

  // Runs over t.x and t.initial_h / t.initial_c (when the spec said present), writing t.y, t.y_h,
  // t.y_c (nullptr: into the workspace, of at least workspace_bytes()). t.sequence_lens, t.w, t.r,
  // t.b and t.p are not read.
  absl::Status Execute(const RnnTensors& t, void* workspace, engine::ThreadPool& pool,
                       const NodeLabel& node) const;

 private:
  // One primitive shape: a direction and a number of batch rows.
  struct Kind {
    dnnl::rnn_primitive_desc_base pd;
    int direction = 0;
    int64_t rows = 0;
    size_t scratchpad = 0;
    int packed = 0;  // index into packed_
  };
  struct Part {
    int kind = 0;
    int direction = 0;
    int64_t begin = 0;  // first batch row
  };
  struct Plan {
    std::vector<Kind> kinds;
    std::vector<Part> parts;
    bool parallel = false;
    size_t region = 0;                          // scratchpad bytes per slot
    size_t y = 0, y_h = 0, y_c = 0, total = 0;  // workspace offsets of Y, Y_h, Y_c; its size
  };
  // Weights of one direction in a primitive's layouts.
  struct Packed {
    dnnl::memory layer, iter, bias, peephole;
  };
  enum Arg { kSrcLayer, kSrcIter, kSrcIterC, kDstLayer, kDstIter, kDstIterC, kScratch, kNumArgs };

  static absl::StatusOr<Plan> MakePlan(const RnnPrimitiveSpec& spec, int threads,
                                       const NodeLabel& node);
  // The memory descriptors of a part's operands: views into X, Y and the states.
  static std::vector<dnnl::memory::desc> PartDescs(const RnnPrimitiveSpec& spec, int64_t rows);
  absl::Status RunPart(int index, const MemoryPool::Lease& mem, char* scratch,
                       const NodeLabel& node) const;

  RnnPrimitive() = default;

  RnnPrimitiveSpec spec_;  // the weight pointers are not used after Build
  Plan plan_;
  std::vector<dnnl::primitive> primitives_;  // per kind
  std::vector<Packed> packed_;
  std::unique_ptr<MemoryPool> memories_;  // kNumArgs per part
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_RNN_ONEDNN_H_

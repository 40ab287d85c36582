// MatMulPrimitive: dst = alpha * (src x weights + bias) + beta * dst for fixed shapes, on oneDNN
// matmul primitives; shared by MatMul, FusedMatMul and Gemm.
//
// Threads: the primitives are single-threaded and the kernel's intra-op threads run disjoint
// parts of the problem (RunParts in onednn_util.h): slices of the batch, of the rows of dst, or
// of its columns, whichever gives the most parts of about kPartWork. A product's work is its FLOPs,
// or 16 per weight when that is more (a product of few rows, as in LLM decode, is bound by reading
// the weights, so it is split by columns). Small products are one part.
//
// One row against weights that are not prepacked (a decode step of a model whose shapes are only
// known at run time: its plans are built per shape, without prepacking, so that prompts of many
// lengths do not each keep a copy of every weight): oneDNN's sgemm per column part, whose
// matrix-vector kernel streams the plain weights at about the cache's bandwidth (26 GB/s at
// 1536x512 on one core here) where the matmul primitive copied them into its blocked layout on
// every call first (12 GB/s); it allocates nothing for one row. Bias, alpha, beta and the
// post-ops are applied to the part's columns around it. row_product() says which path a plan took.
//
// Weights given as constants at build time are reordered once into the layout the primitive
// prefers ("prepacked") when that differs from the plain one, shared by the parts where the
// layout allows (one copy per column part otherwise). The copies live in oneDNN-allocated memory
// owned here: prepacked_bytes() extra bytes per node (about the weights' own size), outside the
// arenas.
//
// Workspace: one scratchpad region per slot (parts running at once; at most the thread count),
// 64-byte aligned: scratchpad_bytes() in total, exactly what WorkspaceBytes computes from the spec
// and thread count alone.
//
// Immutable after Build except for its pool of memory objects; Execute may run concurrently and
// allocates nothing of ours once warm (see onednn_util.h).
#ifndef INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/packed_weights_cache.h"

namespace inferd::kernels::cpu {

struct MatMulSpec {
  // Plain (possibly strided: transposes) layouts of equal rank >= 2; bias zero-sized when absent.
  dnnl::memory::desc src, weights, bias, dst;
  float alpha = 1.0f;  // output scale (applied after the bias)
  float beta = 0.0f;   // when != 0: sum post-op, dst holds the addend before execution
  std::vector<EltwisePostOp> post_ops;  // after the sum (FusedMatMul's activation)
  // Non-null: constant weights to prepack (layout chosen by oneDNN).
  const void* constant_weights = nullptr;
  // Non-null (with constant_weights; plans built at run time): the prepacked copies come from and
  // stay in this cache, shared with the kernel's other plans, and prepacked_bytes() counts none
  // of them. Plans cut into column parts then use the plain weights (their slices would each be
  // another copy), and so does one row (the row product below).
  PackedWeightsCache* packed_cache = nullptr;
};

class MatMulPrimitive {
 public:
  // The workspace Build would declare, from primitive descriptors only (no code generation).
  static absl::StatusOr<size_t> WorkspaceBytes(const MatMulSpec& spec, int threads,
                                               const NodeLabel& node);
  static absl::StatusOr<std::shared_ptr<const MatMulPrimitive>> Build(const MatMulSpec& spec,
                                                                      int threads,
                                                                      const NodeLabel& node);

  size_t scratchpad_bytes() const { return plan_.workspace; }
  size_t prepacked_bytes() const { return packed_shared_ ? 0 : PrepackedBytes(packed_); }
  int parts() const {
    return static_cast<int>(row_.enabled ? row_.bounds.size() - 1 : plan_.parts.size());
  }
  bool row_product() const { return row_.enabled; }

  // `weights` is ignored when the weights were prepacked; `bias` when there is none.
  absl::Status Execute(engine::KernelContext& ctx, const void* src, const void* weights,
                       const void* bias, void* dst, const NodeLabel& node) const;

 private:
  // One primitive shape (parts of equal size share it).
  struct Kind {
    dnnl::matmul::primitive_desc pd;
    dnnl::memory::desc src, weights, bias, dst;  // the part's views of the operands
    size_t scratchpad = 0;
  };
  // One part: a kind applied at byte offsets into the operands; `packed` indexes packed_.
  using Part = PrimitivePart;
  struct Plan {
    std::vector<Kind> kinds;
    std::vector<Part> parts;
    size_t region = 0;              // scratchpad bytes per slot
    size_t workspace = 0;           // region * slots
    bool prepack_per_part = false;  // column parts: each prepacks its own weight columns
  };
  // Indices into the memory pool, per part.
  enum Arg { kSrc, kWeights, kBias, kDst, kScratchpad, kNumArgs };

  // The row-product path (see the top of this file): dnnl_sgemm's row-major arguments.
  struct RowProduct {
    bool enabled = false;
    char trans_a = 'N', trans_b = 'N';
    int64_t lda = 0, ldb = 0, k = 0, n = 0;
    bool has_bias = false;
    float alpha = 1.0f, beta = 0.0f;
    std::vector<EltwisePostOp> post_ops;
    std::vector<int64_t> bounds;  // column parts: part i is [bounds[i], bounds[i + 1])
  };

  static absl::StatusOr<Plan> MakePlan(const MatMulSpec& spec, int threads, const NodeLabel& node);
  // The row-product plan for `spec`, disabled when the spec is not one row against plain
  // weights.
  static RowProduct MakeRowProduct(const MatMulSpec& spec, int threads);
  absl::Status RunPart(int part, const MemoryPool::Lease& mem, const NodeLabel& node) const;
  absl::Status RunRowPart(int part, const float* src, const float* weights, const float* bias,
                          float* dst, const NodeLabel& node) const;

  MatMulPrimitive() = default;

  Plan plan_;  // unused when row_ is enabled
  RowProduct row_;
  std::vector<dnnl::matmul> primitives_;  // per kind
  std::vector<dnnl::memory> packed_;      // prepacked weights: one, or one per part
  bool packed_shared_ = false;            // packed_ come from a PackedWeightsCache
  std::unique_ptr<MemoryPool> memories_;  // kNumArgs per part
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_

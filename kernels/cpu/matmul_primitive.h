// MatMulPrimitive: one oneDNN matmul, dst = alpha * (src x weights + bias) + beta * dst, built
// for fixed shapes and shared by MatMul, FusedMatMul and Gemm. Immutable after Build; Execute may
// run concurrently (the scratchpad is the caller's declared workspace, see onednn_util.h).
//
// Weights given as constants at build time are reordered once into the layout the primitive
// prefers ("prepacked") when that differs from the plain one. The copy lives in oneDNN-allocated
// memory owned by the primitive: prepacked_bytes() extra bytes per node (about the weights' own
// size), outside the arenas.
#ifndef INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

struct MatMulSpec {
  dnnl::memory::desc src, weights, bias, dst;  // plain layouts; bias zero-sized when absent
  float alpha = 1.0f;                          // output scale (applied after the bias)
  float beta = 0.0f;  // when != 0: sum post-op, dst holds the addend before execution
  // Non-null: constant weights to prepack (layout chosen by oneDNN).
  const void* constant_weights = nullptr;
};

class MatMulPrimitive {
 public:
  // The primitive descriptor only (no code generation): what workspace estimates need.
  static absl::StatusOr<dnnl::matmul::primitive_desc> MakePd(const MatMulSpec& spec, int threads,
                                                             const NodeLabel& node);
  static absl::StatusOr<std::shared_ptr<const MatMulPrimitive>> Build(const MatMulSpec& spec,
                                                                      int threads,
                                                                      const NodeLabel& node);

  size_t scratchpad_bytes() const { return pd_.scratchpad_desc().get_size(); }
  size_t prepacked_bytes() const { return prepacked_ ? packed_weights_.get_desc().get_size() : 0; }

  // `weights` is ignored when the weights were prepacked; `bias` when there is none.
  absl::Status Execute(engine::KernelContext& ctx, const void* src, const void* weights,
                       const void* bias, void* dst, const NodeLabel& node) const;

 private:
  MatMulPrimitive() = default;

  const dnnl::engine* engine_ = nullptr;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul primitive_;
  dnnl::memory::desc src_, weights_, bias_, dst_;
  bool prepacked_ = false;
  dnnl::memory packed_weights_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_MATMUL_PRIMITIVE_H_

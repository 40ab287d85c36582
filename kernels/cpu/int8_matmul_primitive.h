// Int8MatMulPrimitive: the raw 8-bit product P[b, m, n] = sum_k A[b, m, k] * B[b, k, n] into
// int32 on oneDNN's int8 matmul, for fixed shapes. A is uint8 or int8, B int8 (a uint8 B is
// shifted to int8 by the caller, who adds the 128 * rowsum(A) back). Zero points are not given to
// oneDNN: the caller corrects P with row and column sums (exact in 32-bit wrapping arithmetic).
//
// Only offered where the CPU has AVX-512 VNNI (or AMX): there the u8 x s8 products are summed in
// 32 bits (vpdpbusd); older ISAs add pairs of products in saturating int16 (vpmaddubsw), which is
// not exact for 8-bit operands (Available() says which).
//
// Threads: single-threaded primitives on disjoint parts (slices of the batch or of A's rows) run
// by RunParts over the session's threads, as MatMulPrimitive does. Constant B is reordered once
// per plan into the layout oneDNN prefers (prepacked_bytes()). Scratchpad: scratchpad_bytes() in
// the caller's workspace. Immutable after Build; Execute may run concurrently.
#ifndef INFERD_KERNELS_CPU_INT8_MATMUL_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_INT8_MATMUL_PRIMITIVE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {

struct Int8MatMulSpec {
  // batch_a and batch_b are 1 (broadcast) or batch; all dims >= 1.
  int64_t batch = 1, batch_a = 1, batch_b = 1, m = 1, k = 1, n = 1;
  bool a_signed = false;
  // Non-null: B's int8 values [batch_b, K, N], constant for the primitive's life (prepacked).
  const int8_t* constant_b = nullptr;
};

class Int8MatMulPrimitive {
 public:
  // Whether this CPU sums u8 x s8 products exactly (VNNI or newer).
  static bool Available();
  static absl::StatusOr<std::shared_ptr<const Int8MatMulPrimitive>> Build(
      const Int8MatMulSpec& spec, int threads, const NodeLabel& node);

  size_t scratchpad_bytes() const { return workspace_; }
  size_t prepacked_bytes() const { return PrepackedBytes(packed_); }

  // p: [batch, M, N] int32. `b` is ignored when B was prepacked. `scratchpad` holds
  // scratchpad_bytes() (may be null when 0).
  absl::Status Execute(engine::ThreadPool& pool, const void* a, const int8_t* b, int32_t* p,
                       void* scratchpad, const NodeLabel& node) const;

 private:
  struct Kind {
    dnnl::matmul::primitive_desc pd;
    dnnl::memory::desc src, weights, dst;
    size_t scratchpad = 0;
    int packed = -1;  // index into packed_
  };
  struct Part {
    int kind = 0;
    int64_t a_offset = 0, b_offset = 0, p_offset = 0;  // bytes
  };
  enum Arg { kSrc, kWeights, kDst, kScratchpad, kNumArgs };

  Int8MatMulPrimitive() = default;

  std::vector<Kind> kinds_;
  std::vector<Part> parts_;
  std::vector<dnnl::matmul> primitives_;  // per kind
  std::vector<dnnl::memory> packed_;
  std::unique_ptr<MemoryPool> memories_;  // kNumArgs per part
  size_t region_ = 0, workspace_ = 0;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_INT8_MATMUL_PRIMITIVE_H_

// Int8ConvPrimitive: one oneDNN int8 convolution (u8 / s8 src, s8 weights, optional s32 bias)
// for fixed shapes, on plain NC[D][H]W tensors: dst[n, oc, p] = bias[oc] + sum over the window
// of (src - src_zp) * w, padding contributing 0 (ONNX's x_zero_point padding), as int32 or
// requantized to u8 / s8 by oneDNN (output scales per tensor or per output channel, then the
// dst zero point, rounded to nearest even and saturated).
//
// Exactness: only offered where the CPU has AVX-512 VNNI or AVX-VNNI (Available()): there the
// u8 x s8 products are summed in 32 bits; the older ISAs' vpmaddubsw saturates pairs in int16.
// An int32 dst is exact (wrapping as the own code); an 8-bit dst is within one step of
// round(acc * scale) + zp (oneDNN rounds acc * scale + zp, which differs on exact halves).
//
// Layout: src and dst run in the layout oneDNN picks (channels-last for its int8 convolutions),
// reordered from / to the caller's tensors (plain, or channels-last: then usually no reorder) in
// the caller's workspace; the constant weights are
// reordered once at Build ("prepacked", prepacked_bytes()).
//
// Threads: single-threaded primitives on disjoint parts run by RunParts (onednn_util.h): slices
// of the batch, or with one image, ranges of groups (grouped) or of output channels, at most one
// part per thread then (each part reorders the src it reads). Each slot has its own workspace
// region: [src in the primitive's layout | dst in its layout | scratchpad].
//
// Immutable after Build; Execute may run concurrently.
#ifndef INFERD_KERNELS_CPU_INT8_CONV_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_INT8_CONV_PRIMITIVE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/thread_pool.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {

struct Int8ConvSpec {
  int64_t n = 1, c = 1, m = 1, group = 1;
  // Per spatial dim (1 to 3): input, kernel and output sizes, strides, dilations (ONNX's: 1 is
  // dense), padding at the start and at the end.
  std::vector<int64_t> in, kernel, out, strides, dilations, pad_begin, pad_end;
  // Whether src / dst are channels-last ([N, spatial..., C] in memory; the dims stay N, C,
  // spatial...): between int8 convolutions that keep it (engine/int8_channels_last.h), where
  // oneDNN's own layout is that, no reorder runs.
  bool src_channels_last = false, dst_channels_last = false;
  bool src_signed = false;
  enum class Dst { kS32, kU8, kS8 } dst = Dst::kS32;
  bool bias = false;  // int32 [M]
  // [M, C/group, kernel...] int8, read during Build only.
  const int8_t* weights = nullptr;
  // The src zero point: fixed here, or given to each Execute (runtime_src_zp).
  bool runtime_src_zp = false;
  int32_t src_zp = 0;
  // 8-bit dst only: the output scales (1 or M of them) and the dst zero point.
  std::vector<float> scales;
  int32_t dst_zp = 0;
};

class Int8ConvPrimitive {
 public:
  // Whether this CPU sums u8 x s8 products exactly (VNNI or newer).
  static bool Available();
  // Fails (UNIMPLEMENTED) where oneDNN offers only its reference implementation.
  static absl::StatusOr<std::shared_ptr<const Int8ConvPrimitive>> Build(const Int8ConvSpec& spec,
                                                                        int threads,
                                                                        const NodeLabel& node);

  size_t workspace_bytes() const { return workspace_; }
  size_t prepacked_bytes() const { return PrepackedBytes(packed_); }
  // "jit_int8:avx512_core_vnni, 2 parts by channels, dst reordered" and the like.
  const std::string& Describe() const { return description_; }

  // src [N, C, ...] 8-bit, dst [N, M, ...] (int32 or 8-bit as the spec), bias [M] int32 or null;
  // src_zp is read when the spec asked for it per run. `workspace` holds workspace_bytes().
  absl::Status Execute(engine::ThreadPool& pool, const void* src, const int32_t* bias,
                       int32_t src_zp, void* dst, void* workspace, const NodeLabel& node) const;

 private:
  struct Kind {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::memory::desc src_plain, dst_plain;  // views with the full tensors' strides
    bool src_reorder = false, dst_reorder = false, scratch = false;
    size_t src_offset = 0, dst_offset = 0;  // in the slot's region
  };
  struct Part {
    int kind = 0, packed = 0;
    int64_t src_offset = 0, dst_offset = 0, bias_offset = 0;  // bytes
  };
  enum Arg { kSrcPlain, kSrc, kBias, kDst, kDstPlain, kScratch, kSrcZp, kNumArgs };
  struct Primitives {
    dnnl::primitive conv;
    dnnl::primitive src_reorder, dst_reorder;  // empty when not needed
  };

  Int8ConvPrimitive() = default;

  std::vector<Kind> kinds_;
  std::vector<Primitives> primitives_;  // per kind
  std::vector<Part> parts_;
  std::vector<dnnl::memory> packed_;
  std::unique_ptr<MemoryPool> memories_;  // kNumArgs per part
  bool runtime_src_zp_ = false;
  size_t region_ = 0, workspace_ = 0;
  std::string description_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_INT8_CONV_PRIMITIVE_H_

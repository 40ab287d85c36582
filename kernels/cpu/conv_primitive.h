// ConvPrimitive: one oneDNN convolution (optionally with a ReLU post-op) for fixed shapes, with
// the layout conversions around it. Tensors stay plain NC[D][H]W. Where oneDNN's blocked layouts
// pay (most convolutions; see UseBlockedLayouts in conv.cc), the primitive runs on blocked
// copies of src and dst that live in the kernel's workspace, laid out as:
//   [0, scratch)              the scratchpad, shared by the convolution and the reorders
//                             (they run one after the other)
//   [src_offset, +src)        src in the primitive's layout
//   [weights_offset, +w)      weights in the primitive's layout (non-constant weights only)
//   [dst_offset, +dst)        dst in the primitive's layout
// each region 64-byte aligned; workspace_bytes() is the total (0: nothing to declare).
//
// Constant weights given to Build are reordered once into the primitive's layout ("prepacked"),
// in oneDNN-allocated memory owned here: prepacked_bytes() per node, about the weights' size,
// outside the arenas.
//
// Immutable after Build; Execute may run concurrently (all per-run memory is the workspace).
#ifndef INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_

#include <cstddef>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"

namespace inferd::kernels::cpu {

struct ConvSpec {
  dnnl::memory::dims src, weights, bias, dst;  // bias empty when absent; grouped weights 5-D+
  dnnl::memory::dims strides, dilations, pad_begin, pad_end;  // dilations as oneDNN (d - 1)
  bool relu = false;
  bool blocked = true;                     // let oneDNN choose the activations' layouts
  const void* constant_weights = nullptr;  // non-null: prepack these
};

class ConvPrimitive {
 public:
  // The workspace Build would need, from primitive descriptors only (no code generation).
  static absl::StatusOr<size_t> WorkspaceBytes(const ConvSpec& spec, int threads,
                                               const NodeLabel& node);
  static absl::StatusOr<std::shared_ptr<const ConvPrimitive>> Build(const ConvSpec& spec,
                                                                    int threads,
                                                                    const NodeLabel& node);

  size_t workspace_bytes() const { return layout_.total; }
  size_t prepacked_bytes() const { return prepacked_ ? packed_weights_.get_desc().get_size() : 0; }
  // "brgconv:avx512_core (blocked src/dst)" and the like, for benchmarks and logs.
  std::string Describe() const;

  // `weights` is ignored when prepacked; `bias` when there is none.
  absl::Status Execute(engine::KernelContext& ctx, const void* src, const void* weights,
                       const void* bias, void* dst, const NodeLabel& node) const;

 private:
  // Descriptors and workspace layout for one spec.
  struct Layout {
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::memory::desc src_plain, weights_plain, bias, dst_plain;
    std::optional<dnnl::reorder::primitive_desc> src_reorder, weights_reorder, dst_reorder;
    size_t src_offset = 0, weights_offset = 0, dst_offset = 0, total = 0;
  };
  static absl::StatusOr<Layout> MakeLayout(const ConvSpec& spec, int threads,
                                           const NodeLabel& node);

  ConvPrimitive() = default;

  const dnnl::engine* engine_ = nullptr;
  Layout layout_;
  dnnl::convolution_forward primitive_;
  std::optional<dnnl::reorder> src_reorder_, weights_reorder_, dst_reorder_;
  bool prepacked_ = false;
  dnnl::memory packed_weights_;
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_

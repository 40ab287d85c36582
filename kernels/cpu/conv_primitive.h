// ConvPrimitive: one oneDNN convolution or deconvolution (ConvTranspose), optionally with
// activation post-ops, for fixed shapes, with the layout conversions around it. Tensors are plain
// NC[D][H]W, or channel-blocked where ConvSpec::src_blocked / dst_blocked say so (values kept
// blocked between convolutions, engine/blocked_layouts.h). The primitive runs on blocked copies
// of plain src and dst (ConvSpec::layout, chosen by ChooseConvLayout) that live in the kernel's
// workspace, laid out as:
//   [0, scratch)              the scratchpad, shared by the primitive and the reorders
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
// Threads: as MatMulPrimitive, the primitives are single-threaded and the kernel's intra-op
// threads run disjoint parts of the problem (RunParts in onednn_util.h): images of the batch,
// groups of output channels (channel blocks) or groups of a grouped convolution, whichever gives
// the most parts of about kPartWork. Each slot (parts running at once, at most the thread count)
// has its own workspace region laid out as above. Small convolutions are one part.
//
// Immutable after Build except for its pool of memory objects; Execute may run concurrently (all
// per-run memory is the workspace) and allocates nothing of ours once warm (onednn_util.h).
#ifndef INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_
#define INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "dnnl.hpp"
#include "engine/kernel.h"
#include "kernels/cpu/kernel_util.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/packed_weights_cache.h"

namespace inferd::kernels::cpu {

// The activation layouts a convolution runs on (the tensors themselves are plain unless
// ConvSpec::src_blocked / dst_blocked say otherwise).
enum class ConvLayout {
  kAny,       // oneDNN's choice for src and dst (brgconv's channels-last on AVX-512)
  kBlocked,   // src and dst channel-blocked (nChw16c / nChw8c, ChannelBlock())
  kPlainSrc,  // src plain (no reorder), dst blocked: first layers with few input channels
  kPlain,     // both plain (oneDNN's GEMM convolution): 1x1 convolutions on few channels
};

struct ConvSpec {
  bool transposed = false;  // deconvolution (ConvTranspose)
  // Logical oneDNN dims: weights [O, I, k...] or grouped [G, O/G, I/G, k...]; bias empty when
  // absent.
  dnnl::memory::dims src, weights, bias, dst;
  // Strides of the weights as stored (empty: row-major in the dims above). ConvTranspose's
  // [C_in, C_out/G, k...] tensor is the logical [G, O/G, I/G, k...] with permuted strides.
  dnnl::memory::dims weights_strides;
  dnnl::memory::dims strides, dilations, pad_begin, pad_end;  // dilations as oneDNN (d - 1)
  std::vector<EltwisePostOp> post_ops;                        // applied in order
  // Preferred layouts; where oneDNN has no optimized implementation for them, kAny is used.
  ConvLayout layout = ConvLayout::kAny;
  // The tensors themselves channel-blocked (BlockedTag) rather than plain: set where a value
  // stays blocked between convolutions (engine/blocked_layouts.h); channels then are a multiple
  // of ChannelBlock(). Not for deconvolutions.
  bool src_blocked = false, dst_blocked = false;
  const void* constant_weights = nullptr;  // non-null: prepack these
  // Non-null (with constant_weights): the prepacked copies come from and stay in this cache,
  // shared with the kernel's plans for other input shapes; prepacked_bytes() counts none of them.
  PackedWeightsCache* packed_cache = nullptr;
};

// The layouts that run a convolution fastest here, counting the reorders from and to plain
// tensors (1 thread, AVX-512; CPU ms for conv + reorders, any -> nChw16c):
//   3->16 3x3 32x32: 0.0131 -> 0.0094 (src kept plain);  16->32 3x3 16x16: 0.0142 -> 0.0126;
//   64->64 3x3 56x56: 1.057 -> 1.037;  depthwise 3x3 256ch 56x56: 0.587 -> 0.297;
//   1x1 64->256 56x56: 0.710 -> 0.519;  1x1 512->2048 7x7: 0.463 -> 0.447;
//   but 3x3 128->128 28x28: 0.974 -> 0.999 and 256->256 14x14: 0.928 -> 1.116.
// oneDNN's own choice (brgconv on channels-last) computes as fast or faster, but its reorders
// to and from plain NCHW cost 3-4x those of the channel-blocked layouts. 1x1 convolutions on
// fewer than 256 channels are a plain GEMM already: 64->256 56x56 0.42 plain vs 0.53 blocked;
// from 256 channels blocked wins (512->2048 7x7: 0.61 plain vs 0.43). But the GEMM convolution
// applies eltwise post-ops other than ReLU one element at a time: a 16->32 1x1 112x112
// convolution with HardSwish took 2.9 ms plain and 0.18 ms blocked (the reorders not counted),
// so with such `post_ops` a 1x1 runs blocked.
ConvLayout ChooseConvLayout(int64_t in_channels, int64_t out_channels, int64_t group,
                            absl::Span<const int64_t> kernel,
                            absl::Span<const EltwisePostOp> post_ops = {});
// The layout for tensors that are blocked already (src_blocked / dst_blocked): blocked, with no
// reorder at a blocked end; a plain src stays plain where `preferred` keeps it so (few input
// channels).
ConvLayout LayoutForBlockedTensors(ConvLayout preferred, bool src_blocked, bool dst_blocked);

class ConvPrimitive {
 public:
  // The workspace Build would need, from primitive descriptors only (no code generation).
  static absl::StatusOr<size_t> WorkspaceBytes(const ConvSpec& spec, int threads,
                                               const NodeLabel& node);
  static absl::StatusOr<std::shared_ptr<const ConvPrimitive>> Build(const ConvSpec& spec,
                                                                    int threads,
                                                                    const NodeLabel& node);

  size_t workspace_bytes() const { return plan_.workspace; }
  size_t prepacked_bytes() const { return packed_shared_ ? 0 : PrepackedBytes(packed_); }
  int parts() const { return static_cast<int>(plan_.parts.size()); }
  // "brgconv:avx512_core (blocked src/dst, 2 parts)" and the like, for benchmarks and logs.
  std::string Describe() const;

  // `weights` is ignored when prepacked; `bias` when there is none.
  absl::Status Execute(engine::KernelContext& ctx, const void* src, const void* weights,
                       const void* bias, void* dst, const NodeLabel& node) const;

 private:
  // The part of each operand one part works on: views into the plain tensors (full strides).
  struct Views {
    dnnl::memory::desc src, weights, bias, dst;
  };
  // Descriptors and workspace layout for one part shape (parts of equal size share it).
  struct Layout {
    dnnl::primitive_desc pd;  // convolution_forward or deconvolution_forward
    Views plain;
    std::optional<dnnl::reorder::primitive_desc> src_reorder, weights_reorder, dst_reorder;
    size_t src_offset = 0, weights_offset = 0, dst_offset = 0, total = 0;
    // Whether the primitive and each reorder need a scratchpad (queried once: dnnl.hpp's
    // descriptor queries allocate).
    bool scratch = false, src_scratch = false, weights_scratch = false, dst_scratch = false;
  };
  // One part: a layout applied at byte offsets into the operands, with its own workspace region;
  // `packed` indexes packed_.
  using Part = PrimitivePart;
  struct Plan {
    std::vector<Layout> kinds;
    std::vector<Part> parts;
    size_t region = 0;     // workspace bytes per slot: the largest kind's layout
    size_t workspace = 0;  // region * slots
  };
  // Indices into the memory pool, per part.
  enum Arg {
    kSrcPlain,
    kSrc,  // in the primitive's layout
    kWeightsPlain,
    kWeights,
    kBias,
    kDst,
    kDstPlain,
    kScratchpad,
    kSrcReorderScratchpad,
    kWeightsReorderScratchpad,
    kDstReorderScratchpad,
    kNumArgs
  };
  struct Primitives {
    dnnl::primitive conv;
    std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;
  };

  static absl::StatusOr<Layout> MakeLayout(const ConvSpec& spec, const Views& views,
                                           const NodeLabel& node);
  // The preferred layouts (spec.layout) when oneDNN has an optimized implementation for them,
  // else its own choice. Throws dnnl::error (MakeLayout catches it).
  static dnnl::primitive_desc ChoosePd(const ConvSpec& spec, const Views& views,
                                       const dnnl::engine& eng);
  // Sets the workspace offsets and sizes of `l` from its descriptors and reorders.
  static void PlaceWorkspace(Layout& l);
  static absl::StatusOr<Plan> MakePlan(const ConvSpec& spec, int threads, const NodeLabel& node);

  ConvPrimitive() = default;

  // Runs part `part` with the workspace region `ws` of the slot running it.
  absl::Status RunPart(int part, const char* ws, const MemoryPool::Lease& mem,
                       const NodeLabel& node) const;
  // Runs a reorder from memory `from` to `to` with its scratchpad memory `scratch`.
  absl::Status Reorder(const dnnl::reorder& r, const MemoryPool::Lease& mem, int from, int to,
                       int scratch, bool has_scratch, const NodeLabel& node) const;

  Plan plan_;
  std::vector<Primitives> primitives_;    // per kind
  std::vector<dnnl::memory> packed_;      // prepacked weights
  bool packed_shared_ = false;            // packed_ come from a PackedWeightsCache
  std::unique_ptr<MemoryPool> memories_;  // kNumArgs per part
};

}  // namespace inferd::kernels::cpu

#endif  // INFERD_KERNELS_CPU_CONV_PRIMITIVE_H_

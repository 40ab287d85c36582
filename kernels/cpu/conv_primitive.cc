#include "kernels/cpu/conv_primitive.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

constexpr size_t kAlign = 64;

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// A reorder from `from` to `to` with a user scratchpad, or nullopt when they are the same.
std::optional<dnnl::reorder::primitive_desc> MakeReorder(const dnnl::engine& eng,
                                                         const dnnl::memory::desc& from,
                                                         const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder::primitive_desc(eng, from, eng, to, UserScratchpadAttr());
}

}  // namespace

absl::StatusOr<ConvPrimitive::Layout> ConvPrimitive::MakeLayout(const ConvSpec& spec, int threads,
                                                                const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  Layout l;
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the convolution", [&]() -> absl::Status {
    l.src_plain = PlainDesc(spec.src);
    l.weights_plain = PlainDesc(spec.weights);
    l.dst_plain = PlainDesc(spec.dst);
    if (!spec.bias.empty()) l.bias = PlainDesc(spec.bias);
    dnnl::primitive_attr attr = UserScratchpadAttr();
    if (spec.relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        spec.blocked ? AnyDesc(spec.src) : l.src_plain, AnyDesc(spec.weights), l.bias,
        spec.blocked ? AnyDesc(spec.dst) : l.dst_plain, spec.strides, spec.dilations,
        spec.pad_begin, spec.pad_end);
    ScopedOmpThreads scoped(threads);
    l.pd = dnnl::convolution_forward::primitive_desc(desc, attr, *eng);
    l.src_reorder = MakeReorder(*eng, l.src_plain, l.pd.src_desc());
    if (spec.constant_weights == nullptr) {
      l.weights_reorder = MakeReorder(*eng, l.weights_plain, l.pd.weights_desc());
    }
    l.dst_reorder = MakeReorder(*eng, l.pd.dst_desc(), l.dst_plain);
    // Workspace: the scratchpad (shared), then each blocked buffer.
    size_t scratch = l.pd.scratchpad_desc().get_size();
    for (const auto* r : {&l.src_reorder, &l.weights_reorder, &l.dst_reorder}) {
      if (*r) scratch = std::max(scratch, (*r)->scratchpad_desc().get_size());
    }
    size_t offset = AlignUp(scratch);
    if (l.src_reorder) {
      l.src_offset = offset;
      offset += AlignUp(l.pd.src_desc().get_size());
    }
    if (l.weights_reorder) {
      l.weights_offset = offset;
      offset += AlignUp(l.pd.weights_desc().get_size());
    }
    if (l.dst_reorder) {
      l.dst_offset = offset;
      offset += AlignUp(l.pd.dst_desc().get_size());
    }
    l.total = offset;
    return absl::OkStatus();
  }));
  return l;
}

absl::StatusOr<size_t> ConvPrimitive::WorkspaceBytes(const ConvSpec& spec, int threads,
                                                     const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(Layout l, MakeLayout(spec, threads, node));
  return l.total;
}

absl::StatusOr<std::shared_ptr<const ConvPrimitive>> ConvPrimitive::Build(const ConvSpec& spec,
                                                                          int threads,
                                                                          const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  std::shared_ptr<ConvPrimitive> p(new ConvPrimitive());
  p->engine_ = eng;
  INFERD_ASSIGN_OR_RETURN(p->layout_, MakeLayout(spec, threads, node));
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the convolution", [&]() -> absl::Status {
    ScopedOmpThreads scoped(threads);
    const Layout& l = p->layout_;
    p->primitive_ = dnnl::convolution_forward(l.pd);
    if (l.src_reorder) p->src_reorder_.emplace(*l.src_reorder);
    if (l.weights_reorder) p->weights_reorder_.emplace(*l.weights_reorder);
    if (l.dst_reorder) p->dst_reorder_.emplace(*l.dst_reorder);
    if (spec.constant_weights != nullptr) {
      if (l.pd.weights_desc() != l.weights_plain) {
        p->packed_weights_ =
            ReorderWeights(*eng, l.weights_plain, spec.constant_weights, l.pd.weights_desc());
        p->prepacked_ = true;
      }
    }
    return absl::OkStatus();
  }));
  return std::shared_ptr<const ConvPrimitive>(std::move(p));
}

std::string ConvPrimitive::Describe() const {
  return absl::StrCat(layout_.pd.impl_info_str(), src_reorder_ ? " (blocked src)" : "",
                      dst_reorder_ ? " (blocked dst)" : "", prepacked_ ? " (prepacked)" : "");
}

absl::Status ConvPrimitive::Execute(engine::KernelContext& ctx, const void* src,
                                    const void* weights, const void* bias, void* dst,
                                    const NodeLabel& node) const {
  const Layout& l = layout_;
  unsigned char* ws = nullptr;
  if (l.total > 0) {
    absl::StatusOr<void*> w = ctx.GetWorkspace(kScratchpadSlot);
    if (!w.ok()) {
      return node.Internal(absl::StrCat("the ", l.total,
                                        "-byte convolution workspace is "
                                        "unavailable: ",
                                        w.status().message()));
    }
    ws = static_cast<unsigned char*>(*w);
  }
  const int threads = ctx.threads().num_threads();
  return CatchDnnl(node, "running the convolution", [&]() -> absl::Status {
    const dnnl::engine& eng = *engine_;
    auto with_scratchpad = [&](std::unordered_map<int, dnnl::memory> args,
                               const dnnl::memory::desc& scratch) {
      if (scratch.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch, eng, ws));
      return args;
    };
    dnnl::memory src_mem(l.src_plain, eng, const_cast<void*>(src));
    if (src_reorder_) {
      dnnl::memory blocked(l.pd.src_desc(), eng, ws + l.src_offset);
      ExecutePrimitive(eng, *src_reorder_,
                       with_scratchpad({{DNNL_ARG_FROM, src_mem}, {DNNL_ARG_TO, blocked}},
                                       l.src_reorder->scratchpad_desc()),
                       threads);
      src_mem = blocked;
    }
    dnnl::memory weights_mem;
    if (prepacked_) {
      weights_mem = packed_weights_;
    } else {
      weights_mem = dnnl::memory(l.weights_plain, eng, const_cast<void*>(weights));
      if (weights_reorder_) {
        dnnl::memory blocked(l.pd.weights_desc(), eng, ws + l.weights_offset);
        ExecutePrimitive(eng, *weights_reorder_,
                         with_scratchpad({{DNNL_ARG_FROM, weights_mem}, {DNNL_ARG_TO, blocked}},
                                         l.weights_reorder->scratchpad_desc()),
                         threads);
        weights_mem = blocked;
      }
    }
    dnnl::memory dst_plain(l.dst_plain, eng, dst);
    dnnl::memory dst_mem =
        dst_reorder_ ? dnnl::memory(l.pd.dst_desc(), eng, ws + l.dst_offset) : dst_plain;
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, weights_mem}, {DNNL_ARG_DST, dst_mem}};
    if (l.bias.get_size() > 0) {
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(l.bias, eng, const_cast<void*>(bias)));
    }
    ExecutePrimitive(eng, primitive_, with_scratchpad(std::move(args), l.pd.scratchpad_desc()),
                     threads);
    if (dst_reorder_) {
      ExecutePrimitive(eng, *dst_reorder_,
                       with_scratchpad({{DNNL_ARG_FROM, dst_mem}, {DNNL_ARG_TO, dst_plain}},
                                       l.dst_reorder->scratchpad_desc()),
                       threads);
    }
    return absl::OkStatus();
  });
}

}  // namespace inferd::kernels::cpu

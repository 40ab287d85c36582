#include "kernels/cpu/conv_primitive.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

// A reorder from `from` to `to` with a user scratchpad, or nullopt when they are the same.
std::optional<dnnl::reorder::primitive_desc> MakeReorder(const dnnl::engine& eng,
                                                         const dnnl::memory::desc& from,
                                                         const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder::primitive_desc(eng, from, eng, to, UserScratchpadAttr());
}

dnnl::memory::desc ScratchpadDesc(const std::optional<dnnl::reorder::primitive_desc>& r) {
  return r ? r->scratchpad_desc() : dnnl::memory::desc();
}

// About the FLOPs of one run: 2 * (output elements of a convolution, or input elements of a
// deconvolution) * input channels per group * kernel size.
double ConvWork(const ConvSpec& spec) {
  const bool grouped = spec.weights.size() == spec.src.size() + 1;
  const dnnl::memory::dims& per_output = spec.transposed ? spec.src : spec.dst;
  double work = 2.0;
  for (dnnl::memory::dim d : per_output) work *= static_cast<double>(d);
  // weights [G,] O/G, I/G, k...: everything after the output channels.
  for (size_t i = grouped ? 2 : 1; i < spec.weights.size(); ++i) {
    work *= static_cast<double>(spec.weights[i]);
  }
  if (spec.transposed) {  // per input element: O/G * k..., not I/G * k...
    work = work /
           static_cast<double>(std::max<dnnl::memory::dim>(1, spec.weights[grouped ? 2 : 1])) *
           static_cast<double>(spec.weights[grouped ? 1 : 0]);
  }
  return work;
}

// The axis ConvPrimitive splits a convolution along, in units (images, channel blocks, groups
// of groups).
enum class ConvAxis { kNone, kBatch, kOut, kGroups };
struct ConvSplit {
  ConvAxis axis = ConvAxis::kNone;
  int count = 1;                // parts
  int64_t units = 1, unit = 1;  // number of units, elements (images, channels, groups) per unit
};

// pass 1 of MakePlan: the axis that gives the most parts of about kPartWork (images first on
// ties).
ConvSplit ChooseConvSplit(const ConvSpec& spec, int threads) {
  const bool grouped = spec.weights.size() == spec.src.size() + 1;
  const int64_t batch = spec.src[0], groups = grouped ? spec.weights[0] : 1;
  const int64_t out_channels = spec.dst[1], block = ChannelBlock();
  const int64_t in_per_group = grouped ? spec.weights[2] : spec.weights[1];
  const int64_t out_per_group = grouped ? spec.weights[1] : spec.weights[0];
  const double work = ConvWork(spec);
  ConvSplit split;
  auto consider = [&](ConvAxis a, int64_t a_units, int64_t a_unit) {
    const int c = PartCount(threads, work, a_units);
    if (c > split.count) split = ConvSplit{a, c, a_units, a_unit};
  };
  consider(ConvAxis::kBatch, batch, 1);
  // A blocked tensor is cut along its channels only in whole blocks of one image (then each
  // part's slice is a dense blocked tensor at a byte offset: BlockedSlice).
  const bool blocked = spec.src_blocked || spec.dst_blocked;
  if (!grouped && (!spec.dst_blocked || batch == 1)) {
    consider(ConvAxis::kOut, (out_channels + block - 1) / block, block);
  }
  if (grouped && groups >= 2) {
    // Depthwise-like groups: whole channel blocks per part where there are enough.
    const int64_t g_unit =
        (in_per_group == 1 && out_per_group == 1 && groups >= 2 * block) ? block : 1;
    const bool whole_blocks =
        batch == 1 && (g_unit * in_per_group) % block == 0 && (g_unit * out_per_group) % block == 0;
    if (!blocked || whole_blocks) {
      consider(ConvAxis::kGroups, (groups + g_unit - 1) / g_unit, g_unit);
    }
  }
  return split;
}

// `d` cut to `size` along `dim` (same strides). Dims of size 1 get the dense stride, so that a
// slice which is contiguous (one image's channels) compares equal to the dense descriptor and
// needs no copy.
dnnl::memory::desc SliceDesc(const dnnl::memory::desc& d, int dim, int64_t size) {
  dnnl::memory::dims ds = d.dims(), st = StridesOf(d);
  ds[dim] = size;
  for (size_t i = ds.size(); i-- > 0;) {
    if (ds[i] == 1) st[i] = i + 1 < ds.size() ? st[i + 1] * ds[i + 1] : 1;
  }
  return dnnl::memory::desc(ds, dnnl::memory::data_type::f32, st);
}

// The byte offset of element `start` along `dim` of `d`.
int64_t ByteOffset(const dnnl::memory::desc& d, int dim, int64_t start) {
  return start * StridesOf(d)[dim] * static_cast<int64_t>(sizeof(float));
}

// A channel-blocked (BlockedTag) tensor of `dims`.
dnnl::memory::desc BlockedDesc(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, BlockedTag(dims.size()));
}

// A part of a channel-blocked tensor: `size` elements along `dim` from `start`, where the part
// is itself a dense blocked tensor (ChooseConvSplit: a cut along the images, or along whole
// channel blocks of a single image, channels a multiple of the block). Its byte offset is then
// `start` times the elements after `dim`, as for a row-major tensor.
struct BlockedSlice {
  dnnl::memory::desc desc;
  int64_t offset = 0;
};
BlockedSlice SliceBlocked(const dnnl::memory::dims& dims, int dim, int64_t start, int64_t size) {
  dnnl::memory::dims part = dims;
  part[dim] = size;
  int64_t inner = 1;
  for (size_t i = dim + 1; i < dims.size(); ++i) inner *= dims[i];
  return {BlockedDesc(part), start * inner * static_cast<int64_t>(sizeof(float))};
}

// A convolution whose last spatial axis is 1 in src, weights and dst, unpadded ([N, C, H, 1]
// with a [k, 1] kernel: how converters from frameworks without 1-D convolutions write one), is
// the same computation on the same bytes without that axis. oneDNN's kernels vectorize along the
// last spatial axis, so a unit one wastes them: 1x256x512x1 with a 5x1 kernel to 512 channels
// took 16.8 ms as 2-D and 4.4 ms as 1-D here (AVX-512, 1 thread; ONNX Runtime 4.3 ms).
ConvSpec WithoutTrailingUnitAxes(ConvSpec spec) {
  while (spec.src.size() > 3) {  // keeps one spatial axis
    if (spec.src.back() != 1 || spec.dst.back() != 1 || spec.weights.back() != 1 ||
        spec.pad_begin.back() != 0 || spec.pad_end.back() != 0) {
      break;
    }
    for (dnnl::memory::dims* d : {&spec.src, &spec.dst, &spec.weights, &spec.strides,
                                  &spec.dilations, &spec.pad_begin, &spec.pad_end}) {
      d->pop_back();
    }
    if (!spec.weights_strides.empty()) spec.weights_strides.pop_back();
  }
  return spec;
}

}  // namespace

ConvLayout ChooseConvLayout(int64_t in_channels, int64_t out_channels, int64_t group,
                            absl::Span<const int64_t> kernel,
                            absl::Span<const EltwisePostOp> post_ops) {
  const bool one_by_one =
      std::all_of(kernel.begin(), kernel.end(), [](int64_t k) { return k == 1; });
  const bool only_relu = std::all_of(post_ops.begin(), post_ops.end(), [](const EltwisePostOp& op) {
    return op.alg == dnnl::algorithm::eltwise_relu;
  });
  if (group == 1 && one_by_one && in_channels < 256 && only_relu) return ConvLayout::kPlain;
  if (group == 1 && in_channels < ChannelBlock()) return ConvLayout::kPlainSrc;
  if (group == 1 && !one_by_one && in_channels >= 128 && out_channels >= 128) {
    return ConvLayout::kAny;
  }
  return ConvLayout::kBlocked;
}

ConvLayout LayoutForBlockedTensors(ConvLayout preferred, bool src_blocked, bool dst_blocked) {
  if (!src_blocked && !dst_blocked) return preferred;
  if (!src_blocked && preferred == ConvLayout::kPlainSrc) return ConvLayout::kPlainSrc;
  return ConvLayout::kBlocked;
}

absl::StatusOr<ConvPrimitive::Layout> ConvPrimitive::MakeLayout(const ConvSpec& spec,
                                                                const Views& views,
                                                                const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  Layout l;
  l.plain = views;
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the convolution", [&]() -> absl::Status {
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    l.pd = ChoosePd(spec, views, *eng);
    l.src_reorder = MakeReorder(*eng, views.src, l.pd.src_desc(0));
    if (spec.constant_weights == nullptr) {
      l.weights_reorder = MakeReorder(*eng, views.weights, l.pd.weights_desc(0));
    }
    l.dst_reorder = MakeReorder(*eng, l.pd.dst_desc(0), views.dst);
    PlaceWorkspace(l);
    return absl::OkStatus();
  }));
  return l;
}

dnnl::primitive_desc ConvPrimitive::ChoosePd(const ConvSpec& spec, const Views& views,
                                             const dnnl::engine& eng) {
  dnnl::primitive_attr attr = UserScratchpadAttr();
  if (!spec.post_ops.empty()) {
    dnnl::post_ops ops;
    AppendPostOps(spec.post_ops, ops);
    attr.set_post_ops(ops);
  }
  const dnnl::memory::dims src_dims = views.src.dims(), dst_dims = views.dst.dims(),
                           weights_dims = views.weights.dims();
  {
    auto make_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
      if (spec.transposed) {
        dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::deconvolution_direct, src,
                                               AnyDesc(weights_dims), views.bias, dst, spec.strides,
                                               spec.dilations, spec.pad_begin, spec.pad_end);
        return dnnl::primitive_desc(dnnl::deconvolution_forward::primitive_desc(desc, attr, eng));
      }
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, src,
                                           AnyDesc(weights_dims), views.bias, dst, spec.strides,
                                           spec.dilations, spec.pad_begin, spec.pad_end);
      return dnnl::primitive_desc(dnnl::convolution_forward::primitive_desc(desc, attr, eng));
    };
    dnnl::primitive_desc pd;
    auto try_pd = [&](const dnnl::memory::desc& src, const dnnl::memory::desc& dst) {
      try {
        pd = make_pd(src, dst);
        return std::string(pd.impl_info_str()).find("ref") == std::string::npos;
      } catch (const dnnl::error&) {
        return false;  // unimplemented for these layouts
      }
    };
    // The preferred layouts when oneDNN has an optimized implementation for them, else its own.
    // Dense descriptors: the views may be strided, the primitive's buffers are not.
    const dnnl::memory::desc dense_src = PlainDesc(src_dims), dense_dst = PlainDesc(dst_dims);
    const dnnl::memory::desc blocked_src(src_dims, dnnl::memory::data_type::f32,
                                         BlockedTag(src_dims.size()));
    const dnnl::memory::desc blocked_dst(dst_dims, dnnl::memory::data_type::f32,
                                         BlockedTag(dst_dims.size()));
    bool chosen = false;
    switch (spec.layout) {
      case ConvLayout::kPlain:
        chosen = try_pd(dense_src, dense_dst);
        break;
      case ConvLayout::kPlainSrc:
        chosen = try_pd(dense_src, blocked_dst);
        break;
      case ConvLayout::kBlocked:
        chosen = try_pd(blocked_src, blocked_dst);
        break;
      case ConvLayout::kAny:
        break;
    }
    if (!chosen) pd = make_pd(AnyDesc(src_dims), AnyDesc(dst_dims));
    return pd;
  }
}

void ConvPrimitive::PlaceWorkspace(Layout& l) {
  // The scratchpad (shared by the primitive and the reorders), then each buffer in the
  // primitive's layout.
  size_t scratch = l.pd.scratchpad_desc().get_size();
  for (const auto* r : {&l.src_reorder, &l.weights_reorder, &l.dst_reorder}) {
    if (*r) scratch = std::max(scratch, (*r)->scratchpad_desc().get_size());
  }
  size_t offset = AlignUp(scratch);
  if (l.src_reorder) {
    l.src_offset = offset;
    offset += AlignUp(l.pd.src_desc(0).get_size());
  }
  if (l.weights_reorder) {
    l.weights_offset = offset;
    offset += AlignUp(l.pd.weights_desc(0).get_size());
  }
  if (l.dst_reorder) {
    l.dst_offset = offset;
    offset += AlignUp(l.pd.dst_desc(0).get_size());
  }
  l.total = offset;
  l.scratch = l.pd.scratchpad_desc().get_size() > 0;
  l.src_scratch = ScratchpadDesc(l.src_reorder).get_size() > 0;
  l.weights_scratch = ScratchpadDesc(l.weights_reorder).get_size() > 0;
  l.dst_scratch = ScratchpadDesc(l.dst_reorder).get_size() > 0;
}

absl::StatusOr<ConvPrimitive::Plan> ConvPrimitive::MakePlan(const ConvSpec& given, int threads,
                                                            const NodeLabel& node) {
  const ConvSpec spec = WithoutTrailingUnitAxes(given);
  const bool grouped = spec.weights.size() == spec.src.size() + 1;
  const int64_t batch = spec.src[0], groups = grouped ? spec.weights[0] : 1;
  const int64_t out_channels = spec.dst[1];
  const int64_t in_per_group = grouped ? spec.weights[2] : spec.weights[1];
  const int64_t out_per_group = grouped ? spec.weights[1] : spec.weights[0];
  const ConvSplit split = ChooseConvSplit(spec, threads);
  const ConvAxis axis = split.axis;
  const int count = split.count;
  const int64_t units = split.units, unit = split.unit;

  // The operands as full tensors, plain or blocked (weights with the strides they are stored
  // with).
  const dnnl::memory::desc src = spec.src_blocked ? BlockedDesc(spec.src) : PlainDesc(spec.src);
  const dnnl::memory::desc dst = spec.dst_blocked ? BlockedDesc(spec.dst) : PlainDesc(spec.dst);
  // Cuts src or dst along `dim`: sets the part's view and byte offset.
  auto cut = [&](bool blocked, const dnnl::memory::desc& full, const dnnl::memory::dims& dims,
                 int dim, int64_t at, int64_t size, dnnl::memory::desc& view, int64_t& offset) {
    if (blocked) {
      BlockedSlice b = SliceBlocked(dims, dim, at, size);
      view = b.desc, offset = b.offset;
    } else {
      view = SliceDesc(full, dim, size), offset = ByteOffset(full, dim, at);
    }
  };
  const dnnl::memory::desc weights =
      spec.weights_strides.empty()
          ? PlainDesc(spec.weights)
          : dnnl::memory::desc(spec.weights, dnnl::memory::data_type::f32, spec.weights_strides);
  const dnnl::memory::desc bias = spec.bias.empty() ? dnnl::memory::desc() : PlainDesc(spec.bias);
  // pass 2: parts of near-equal size, one layout per distinct size.
  Plan plan;
  std::vector<std::pair<int64_t, int>> kind_of_size;
  int64_t start = 0;  // in elements of the axis
  for (int i = 0; i < count; ++i) {
    const int64_t part_units = units / count + (i < units % count ? 1 : 0);
    const int64_t total = axis == ConvAxis::kNone    ? 1
                          : axis == ConvAxis::kBatch ? batch
                          : axis == ConvAxis::kOut   ? out_channels
                                                     : groups;
    const int64_t size = std::min(part_units * unit, total - start);
    Views v{src, weights, bias, dst};
    Part part;
    switch (axis) {
      case ConvAxis::kNone:
        break;
      case ConvAxis::kBatch:
        cut(spec.src_blocked, src, spec.src, 0, start, size, v.src, part.src_offset);
        cut(spec.dst_blocked, dst, spec.dst, 0, start, size, v.dst, part.dst_offset);
        break;
      case ConvAxis::kOut:
        v.weights = SliceDesc(weights, 0, size);
        part.weights_offset = ByteOffset(weights, 0, start);
        cut(spec.dst_blocked, dst, spec.dst, 1, start, size, v.dst, part.dst_offset);
        if (!spec.bias.empty()) v.bias = SliceDesc(bias, 0, size);
        part.bias_offset = spec.bias.empty() ? 0 : ByteOffset(bias, 0, start);
        break;
      case ConvAxis::kGroups:
        v.weights = SliceDesc(weights, 0, size);
        part.weights_offset = ByteOffset(weights, 0, start);
        cut(spec.src_blocked, src, spec.src, 1, start * in_per_group, size * in_per_group, v.src,
            part.src_offset);
        cut(spec.dst_blocked, dst, spec.dst, 1, start * out_per_group, size * out_per_group, v.dst,
            part.dst_offset);
        if (!spec.bias.empty()) v.bias = SliceDesc(bias, 0, size * out_per_group);
        part.bias_offset = spec.bias.empty() ? 0 : ByteOffset(bias, 0, start * out_per_group);
        break;
    }
    auto it = std::find_if(kind_of_size.begin(), kind_of_size.end(),
                           [&](const auto& e) { return e.first == size; });
    if (it == kind_of_size.end()) {
      INFERD_ASSIGN_OR_RETURN(Layout layout, MakeLayout(spec, v, node));
      kind_of_size.emplace_back(size, static_cast<int>(plan.kinds.size()));
      plan.kinds.push_back(std::move(layout));
      it = kind_of_size.end() - 1;
    }
    part.kind = it->second;
    plan.region = std::max(plan.region, AlignUp(plan.kinds[part.kind].total));
    plan.parts.push_back(part);
    start += size;
  }
  plan.workspace = plan.region * static_cast<size_t>(Slots(threads, count));
  return plan;
}

absl::StatusOr<size_t> ConvPrimitive::WorkspaceBytes(const ConvSpec& spec, int threads,
                                                     const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(Plan plan, MakePlan(spec, threads, node));
  return plan.workspace;
}

absl::StatusOr<std::shared_ptr<const ConvPrimitive>> ConvPrimitive::Build(const ConvSpec& spec,
                                                                          int threads,
                                                                          const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  std::shared_ptr<ConvPrimitive> p(new ConvPrimitive());
  INFERD_ASSIGN_OR_RETURN(p->plan_, MakePlan(spec, threads, node));
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the convolution", [&]() -> absl::Status {
    ScopedOmpThreads scoped(1);
    Plan& plan = p->plan_;
    for (const Layout& l : plan.kinds) {
      Primitives prims;
      prims.conv = dnnl::primitive(l.pd);
      if (l.src_reorder) prims.src_reorder.emplace(*l.src_reorder);
      if (l.weights_reorder) prims.weights_reorder.emplace(*l.weights_reorder);
      if (l.dst_reorder) prims.dst_reorder.emplace(*l.dst_reorder);
      p->primitives_.push_back(std::move(prims));
    }
    // Prepacking: one copy per distinct slice of the weights (parts of a batch share one; with a
    // cache, plans for other input shapes too).
    p->packed_shared_ = spec.packed_cache != nullptr;
    if (spec.constant_weights != nullptr) {
      const char* base = static_cast<const char*>(spec.constant_weights);
      for (Part& part : plan.parts) {
        const Layout& l = plan.kinds[part.kind];
        if (l.pd.weights_desc(0) == l.plain.weights) continue;  // used as stored
        for (const Part& other : plan.parts) {
          if (other.packed >= 0 && other.weights_offset == part.weights_offset &&
              p->packed_[other.packed].get_desc() == l.pd.weights_desc(0)) {
            part.packed = other.packed;
            break;
          }
        }
        if (part.packed >= 0) continue;
        part.packed = static_cast<int>(p->packed_.size());
        const void* at = base + part.weights_offset;
        p->packed_.push_back(
            spec.packed_cache != nullptr
                ? spec.packed_cache->GetOrPack(*eng, l.plain.weights, at, l.pd.weights_desc(0))
                : ReorderWeights(*eng, l.plain.weights, at, l.pd.weights_desc(0)));
      }
    }
    std::vector<dnnl::memory::desc> descs;
    for (const Part& part : plan.parts) {
      const Layout& l = plan.kinds[part.kind];
      const bool has_weights = spec.constant_weights == nullptr || part.packed < 0;
      std::vector<dnnl::memory::desc> d(kNumArgs);
      d[kSrcPlain] = l.plain.src;
      d[kSrc] = l.src_reorder ? l.pd.src_desc(0) : dnnl::memory::desc();
      d[kWeightsPlain] = has_weights ? l.plain.weights : dnnl::memory::desc();
      d[kWeights] = l.weights_reorder ? l.pd.weights_desc(0) : dnnl::memory::desc();
      d[kBias] = l.plain.bias;
      d[kDst] = l.dst_reorder ? l.pd.dst_desc(0) : dnnl::memory::desc();
      d[kDstPlain] = l.plain.dst;
      d[kScratchpad] = l.pd.scratchpad_desc();
      d[kSrcReorderScratchpad] = ScratchpadDesc(l.src_reorder);
      d[kWeightsReorderScratchpad] = ScratchpadDesc(l.weights_reorder);
      d[kDstReorderScratchpad] = ScratchpadDesc(l.dst_reorder);
      descs.insert(descs.end(), d.begin(), d.end());
    }
    p->memories_ = std::make_unique<MemoryPool>(std::move(descs));
    return absl::OkStatus();
  }));
  return std::shared_ptr<const ConvPrimitive>(std::move(p));
}

std::string ConvPrimitive::Describe() const {
  const Layout& l = plan_.kinds[0];
  return absl::StrCat(l.pd.impl_info_str(), l.src_reorder ? " (blocked src)" : "",
                      l.dst_reorder ? " (blocked dst)" : "", packed_.empty() ? "" : " (prepacked)",
                      parts() > 1 ? absl::StrCat(" (", parts(), " parts)") : "");
}

absl::Status ConvPrimitive::Reorder(const dnnl::reorder& r, const MemoryPool::Lease& mem, int from,
                                    int to, int scratch, bool has_scratch,
                                    const NodeLabel& node) const {
  const dnnl_exec_arg_t args[] = {
      {DNNL_ARG_FROM, mem[from]}, {DNNL_ARG_TO, mem[to]}, {DNNL_ARG_SCRATCHPAD, mem[scratch]}};
  return cpu::Execute(r, absl::MakeConstSpan(args, has_scratch ? 3 : 2), 1, node,
                      "reordering for the convolution");
}

absl::Status ConvPrimitive::RunPart(int index, const char* ws, const MemoryPool::Lease& mem,
                                    const NodeLabel& node) const {
  const Part& part = plan_.parts[index];
  const Layout& l = plan_.kinds[part.kind];
  const Primitives& prims = primitives_[part.kind];
  const int b = index * kNumArgs;
  // The slot's workspace region: the scratchpads (all at its start) and the copies in the
  // primitive's layouts.
  if (l.scratch) INFERD_RETURN_IF_ERROR(mem.Bind(b + kScratchpad, ws, node));
  if (l.src_scratch) INFERD_RETURN_IF_ERROR(mem.Bind(b + kSrcReorderScratchpad, ws, node));
  if (l.weights_scratch) {
    INFERD_RETURN_IF_ERROR(mem.Bind(b + kWeightsReorderScratchpad, ws, node));
  }
  if (l.dst_scratch) INFERD_RETURN_IF_ERROR(mem.Bind(b + kDstReorderScratchpad, ws, node));
  if (l.src_reorder) INFERD_RETURN_IF_ERROR(mem.Bind(b + kSrc, ws + l.src_offset, node));
  if (part.packed < 0 && l.weights_reorder) {
    INFERD_RETURN_IF_ERROR(mem.Bind(b + kWeights, ws + l.weights_offset, node));
  }
  if (l.dst_reorder) INFERD_RETURN_IF_ERROR(mem.Bind(b + kDst, ws + l.dst_offset, node));
  int src_arg = kSrcPlain, weights_arg = kWeightsPlain, dst_arg = kDstPlain;
  if (prims.src_reorder) {
    INFERD_RETURN_IF_ERROR(Reorder(*prims.src_reorder, mem, b + kSrcPlain, b + kSrc,
                                   b + kSrcReorderScratchpad, l.src_scratch, node));
    src_arg = kSrc;
  }
  if (part.packed < 0 && prims.weights_reorder) {
    INFERD_RETURN_IF_ERROR(Reorder(*prims.weights_reorder, mem, b + kWeightsPlain, b + kWeights,
                                   b + kWeightsReorderScratchpad, l.weights_scratch, node));
    weights_arg = kWeights;
  }
  if (prims.dst_reorder) dst_arg = kDst;
  dnnl_exec_arg_t args[5];
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, mem[b + src_arg]};
  args[n++] = {DNNL_ARG_WEIGHTS,
               part.packed >= 0 ? packed_[part.packed].get() : mem[b + weights_arg]};
  args[n++] = {DNNL_ARG_DST, mem[b + dst_arg]};
  if (l.plain.bias.get_size() > 0) args[n++] = {DNNL_ARG_BIAS, mem[b + kBias]};
  if (l.scratch) args[n++] = {DNNL_ARG_SCRATCHPAD, mem[b + kScratchpad]};
  INFERD_RETURN_IF_ERROR(
      cpu::Execute(prims.conv, absl::MakeConstSpan(args, n), 1, node, "running the convolution"));
  if (prims.dst_reorder) {
    INFERD_RETURN_IF_ERROR(Reorder(*prims.dst_reorder, mem, b + kDst, b + kDstPlain,
                                   b + kDstReorderScratchpad, l.dst_scratch, node));
  }
  return absl::OkStatus();
}

absl::Status ConvPrimitive::Execute(engine::KernelContext& ctx, const void* src,
                                    const void* weights, const void* bias, void* dst,
                                    const NodeLabel& node) const {
  INFERD_ASSIGN_OR_RETURN(void* workspace, ScratchpadFor(ctx, plan_.workspace, node));
  INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, memories_->Acquire(node));
  // Bind the operands of every part; RunPart binds its slot's workspace.
  INFERD_RETURN_IF_ERROR(BindOperands(mem, plan_.parts,
                                      {kSrcPlain, kWeightsPlain, kBias, kDstPlain, kNumArgs}, src,
                                      weights, bias, dst, node));
  return RunParts(ctx.threads(), parts(), [&](int i, int slot) {
    return RunPart(i, static_cast<const char*>(workspace) + slot * plan_.region, mem, node);
  });
}

}  // namespace inferd::kernels::cpu

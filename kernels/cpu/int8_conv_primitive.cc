#include "kernels/cpu/int8_conv_primitive.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/int8_matmul_primitive.h"

namespace inferd::kernels::cpu {
namespace {

using dt = dnnl::memory::data_type;
using Dims = dnnl::memory::dims;

// A [count, channels, spatial...] view into a tensor of `full_channels` channels, plain
// (N, C, spatial...) or channels-last (N, spatial..., C).
dnnl::memory::desc PlainView(int64_t count, int64_t channels, int64_t full_channels,
                             const std::vector<int64_t>& spatial, dt type, bool channels_last) {
  Dims dims = {count, channels};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  Dims strides(dims.size(), 1);
  const int64_t inner = channels_last ? full_channels : 1;
  if (dims.size() > 2) strides.back() = inner;
  for (size_t d = dims.size() - 1; d-- > 2;) strides[d] = strides[d + 1] * dims[d + 1];
  const int64_t plane = dims.size() > 2 ? strides[2] * dims[2] : inner;  // per image
  strides[1] = channels_last ? 1 : plane;
  strides[0] = channels_last ? plane : full_channels * plane;
  return dnnl::memory::desc(dims, type, strides);
}

dt DstType(Int8ConvSpec::Dst d) {
  switch (d) {
    case Int8ConvSpec::Dst::kU8:
      return dt::u8;
    case Int8ConvSpec::Dst::kS8:
      return dt::s8;
    case Int8ConvSpec::Dst::kS32:
    default:
      return dt::s32;
  }
}

}  // namespace

bool Int8ConvPrimitive::Available() { return Int8MatMulPrimitive::Available(); }

absl::StatusOr<std::shared_ptr<const Int8ConvPrimitive>> Int8ConvPrimitive::Build(
    const Int8ConvSpec& spec, int threads, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  const size_t sd = spec.in.size();
  if (sd < 1 || sd > 3 || spec.kernel.size() != sd || spec.out.size() != sd ||
      spec.strides.size() != sd || spec.dilations.size() != sd || spec.pad_begin.size() != sd ||
      spec.pad_end.size() != sd || spec.weights == nullptr || spec.group < 1 ||
      spec.c % spec.group != 0 || spec.m % spec.group != 0) {
    return node.Internal("an int8 convolution spec that does not hold together");
  }
  const bool eight_bit_dst = spec.dst != Int8ConvSpec::Dst::kS32;
  const bool per_channel = spec.scales.size() > 1;
  if (eight_bit_dst && spec.scales.size() != 1 &&
      spec.scales.size() != static_cast<size_t>(spec.m)) {
    return node.Internal("int8 convolution: 1 or M output scales expected");
  }
  const int64_t cg = spec.c / spec.group, mg = spec.m / spec.group;
  int64_t taps = 1, in_plane = 1, out_plane = 1;
  for (size_t d = 0; d < sd; ++d) {
    taps *= spec.kernel[d];
    in_plane *= spec.in[d];
    out_plane *= spec.out[d];
  }
  const size_t dst_size = eight_bit_dst ? 1 : sizeof(int32_t);

  // pass 1: the split: images, else ranges of groups or of 16-channel blocks (one per thread
  // at most: each such part reorders its own src).
  const double work = 2.0 * static_cast<double>(spec.n) * static_cast<double>(spec.m) *
                      static_cast<double>(out_plane) * static_cast<double>(cg * taps);
  const bool by_images = spec.n > 1;
  const int64_t unit = by_images ? 1 : (spec.group > 1 ? mg : 16);  // output channels per unit
  const int64_t units = by_images ? spec.n : (spec.m + unit - 1) / unit;
  int count = PartCount(threads, work, units);
  if (!by_images) count = std::min(count, std::max(1, threads));

  std::shared_ptr<Int8ConvPrimitive> p(new Int8ConvPrimitive());
  p->runtime_src_zp_ = spec.runtime_src_zp;
  const dt src_type = spec.src_signed ? dt::s8 : dt::u8;
  const dt dst_type = DstType(spec.dst);
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the int8 convolution", [&]() -> absl::Status {
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    Dims strides, dilations, pad_l, pad_r;
    for (size_t d = 0; d < sd; ++d) {
      strides.push_back(spec.strides[d]);
      dilations.push_back(spec.dilations[d] - 1);
      pad_l.push_back(spec.pad_begin[d]);
      pad_r.push_back(spec.pad_end[d]);
    }
    std::vector<int64_t> kind_key;  // by images: the part's image count per kind
    int64_t start = 0;
    for (int i = 0; i < count; ++i) {
      const int64_t size = units / count + (i < units % count ? 1 : 0);
      const int64_t u0 = start, u1 = start + size;
      start = u1;
      // The part: images [i0, i0 + imgs), output channels [o0, o1), src channels [c0, c1).
      const int64_t i0 = by_images ? u0 : 0, imgs = by_images ? size : spec.n;
      const int64_t o0 = by_images ? 0 : u0 * unit;
      const int64_t o1 = by_images ? spec.m : std::min(spec.m, u1 * unit);
      const bool grouped = spec.group > 1;
      const int64_t c0 = grouped ? o0 / mg * cg : 0, c1 = grouped ? o1 / mg * cg : spec.c;
      int kind = -1;
      if (by_images) {
        for (size_t k = 0; k < kind_key.size(); ++k) {
          if (kind_key[k] == imgs) kind = static_cast<int>(k);
        }
      }
      if (kind < 0) {
        Kind kd;
        kd.src_plain = PlainView(imgs, c1 - c0, spec.c, spec.in, src_type, spec.src_channels_last);
        kd.dst_plain = PlainView(imgs, o1 - o0, spec.m, spec.out, dst_type, spec.dst_channels_last);
        Dims wdims;
        if (grouped) {
          wdims = {(o1 - o0) / mg, mg, cg};
        } else {
          wdims = {o1 - o0, cg};
        }
        wdims.insert(wdims.end(), spec.kernel.begin(), spec.kernel.end());
        const dnnl::memory::desc w_plain = PlainDesc(wdims, dt::s8);
        const dnnl::memory::desc any_src(kd.src_plain.dims(), src_type,
                                         dnnl::memory::format_tag::any);
        const dnnl::memory::desc any_w(wdims, dt::s8, dnnl::memory::format_tag::any);
        const dnnl::memory::desc any_dst(kd.dst_plain.dims(), dst_type,
                                         dnnl::memory::format_tag::any);
        dnnl::primitive_attr attr = UserScratchpadAttr();
        if (eight_bit_dst) {
          const std::vector<float> scales =
              per_channel ? std::vector<float>(spec.scales.begin() + o0, spec.scales.begin() + o1)
                          : spec.scales;
          attr.set_output_scales(per_channel ? 2 : 0, scales);
          if (spec.dst_zp != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {spec.dst_zp});
        }
        if (spec.runtime_src_zp) {
          attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
        } else if (spec.src_zp != 0) {
          attr.set_zero_points(DNNL_ARG_SRC, 0, {spec.src_zp});
        }
        const auto fwd = dnnl::prop_kind::forward_inference;
        const auto alg = dnnl::algorithm::convolution_direct;
        const dnnl::convolution_forward::desc desc =
            spec.bias ? dnnl::convolution_forward::desc(
                            fwd, alg, any_src, any_w,
                            dnnl::memory::desc({o1 - o0}, dt::s32, dnnl::memory::format_tag::a),
                            any_dst, strides, dilations, pad_l, pad_r)
                      : dnnl::convolution_forward::desc(fwd, alg, any_src, any_w, any_dst, strides,
                                                        dilations, pad_l, pad_r);
        kd.pd = dnnl::convolution_forward::primitive_desc(desc, attr, *eng);
        const std::string impl = kd.pd.impl_info_str();
        if (absl::StartsWith(impl, "ref")) {
          return node.Unimplemented(absl::StrCat("oneDNN has only ", impl, " for this int8 conv"));
        }
        kd.src_reorder = kd.pd.src_desc() != kd.src_plain;
        kd.dst_reorder = kd.pd.dst_desc() != kd.dst_plain;
        const size_t scratch = kd.pd.scratchpad_desc().get_size();
        kd.scratch = scratch != 0;
        size_t at = AlignUp(scratch);
        kd.src_offset = at;
        if (kd.src_reorder) at += AlignUp(kd.pd.src_desc().get_size());
        kd.dst_offset = at;
        if (kd.dst_reorder) at += AlignUp(kd.pd.dst_desc().get_size());
        p->region_ = std::max(p->region_, at);
        // The part's weights, prepacked (parts by images share them).
        const int64_t w_offset = o0 * cg * taps;
        p->packed_.push_back(
            ReorderWeights(*eng, w_plain, spec.weights + w_offset, kd.pd.weights_desc()));
        kind = static_cast<int>(p->kinds_.size());
        kind_key.push_back(by_images ? imgs : -1);
        p->kinds_.push_back(std::move(kd));
      }
      Part part;
      part.kind = kind;
      part.packed = kind;
      // Channel c of image i: (i * C + c) * plane plain, i * C * plane + c channels-last.
      part.src_offset =
          spec.src_channels_last ? i0 * spec.c * in_plane + c0 : (i0 * spec.c + c0) * in_plane;
      part.dst_offset =
          (spec.dst_channels_last ? i0 * spec.m * out_plane + o0 : (i0 * spec.m + o0) * out_plane) *
          static_cast<int64_t>(dst_size);
      part.bias_offset = o0 * static_cast<int64_t>(sizeof(int32_t));
      p->parts_.push_back(part);
    }
    for (const Kind& kd : p->kinds_) {
      Primitives prims;
      prims.conv = dnnl::convolution_forward(kd.pd);
      if (kd.src_reorder) {
        prims.src_reorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(*eng, kd.src_plain, *eng, kd.pd.src_desc()));
      }
      if (kd.dst_reorder) {
        prims.dst_reorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(*eng, kd.pd.dst_desc(), *eng, kd.dst_plain));
      }
      p->primitives_.push_back(std::move(prims));
    }
    std::vector<dnnl::memory::desc> descs;
    for (const Part& part : p->parts_) {
      const Kind& kd = p->kinds_[part.kind];
      descs.insert(
          descs.end(),
          {kd.src_plain, kd.pd.src_desc(), spec.bias ? kd.pd.bias_desc() : dnnl::memory::desc(),
           kd.pd.dst_desc(), kd.dst_plain, kd.pd.scratchpad_desc(),
           spec.runtime_src_zp ? dnnl::memory::desc({1}, dt::s32, dnnl::memory::format_tag::x)
                               : dnnl::memory::desc()});
    }
    p->memories_ = std::make_unique<MemoryPool>(std::move(descs));
    p->description_ =
        absl::StrCat(p->kinds_[0].pd.impl_info_str(), ", ", count, count == 1 ? " part" : " parts",
                     count == 1 ? "" : (by_images ? " by images" : " by channels"),
                     p->kinds_[0].src_reorder ? ", src reordered" : "",
                     p->kinds_[0].dst_reorder ? ", dst reordered" : "");
    return absl::OkStatus();
  }));
  p->workspace_ = p->region_ * static_cast<size_t>(Slots(threads, count));
  return std::shared_ptr<const Int8ConvPrimitive>(std::move(p));
}

absl::Status Int8ConvPrimitive::Execute(engine::ThreadPool& pool, const void* src,
                                        const int32_t* bias, int32_t src_zp, void* dst,
                                        void* workspace, const NodeLabel& node) const {
  if (workspace_ != 0 && workspace == nullptr) {
    return node.Internal("the int8 convolution's workspace is missing");
  }
  INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, memories_->Acquire(node));
  const auto* s8 = static_cast<const char*>(src);
  const auto* b8 = reinterpret_cast<const char*>(bias);
  auto* d8 = static_cast<char*>(dst);
  for (size_t i = 0; i < parts_.size(); ++i) {
    const Part& part = parts_[i];
    const int base = static_cast<int>(i) * kNumArgs;
    INFERD_RETURN_IF_ERROR(mem.Bind(base + kSrcPlain, s8 + part.src_offset, node));
    INFERD_RETURN_IF_ERROR(mem.Bind(base + kDstPlain, d8 + part.dst_offset, node));
    if (mem[base + kBias] != nullptr) {
      if (bias == nullptr) return node.Internal("the int8 convolution's bias is missing");
      INFERD_RETURN_IF_ERROR(mem.Bind(base + kBias, b8 + part.bias_offset, node));
    }
    if (runtime_src_zp_) INFERD_RETURN_IF_ERROR(mem.Bind(base + kSrcZp, &src_zp, node));
  }
  return RunParts(pool, static_cast<int>(parts_.size()), [&](int i, int slot) -> absl::Status {
    const Part& part = parts_[i];
    const Kind& kind = kinds_[part.kind];
    const Primitives& prims = primitives_[part.kind];
    const int base = i * kNumArgs;
    char* region = static_cast<char*>(workspace) + static_cast<size_t>(slot) * region_;
    if (kind.scratch) INFERD_RETURN_IF_ERROR(mem.Bind(base + kScratch, region, node));
    const int src_arg = kind.src_reorder ? kSrc : kSrcPlain;
    const int dst_arg = kind.dst_reorder ? kDst : kDstPlain;
    if (kind.src_reorder) {
      INFERD_RETURN_IF_ERROR(mem.Bind(base + kSrc, region + kind.src_offset, node));
      const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, mem[base + kSrcPlain]},
                                      {DNNL_ARG_TO, mem[base + kSrc]}};
      INFERD_RETURN_IF_ERROR(
          cpu::Execute(prims.src_reorder, args, 1, node, "reordering the int8 conv's src"));
    }
    if (kind.dst_reorder) {
      INFERD_RETURN_IF_ERROR(mem.Bind(base + kDst, region + kind.dst_offset, node));
    }
    dnnl_exec_arg_t args[6];
    int count = 0;
    args[count++] = {DNNL_ARG_SRC, mem[base + src_arg]};
    args[count++] = {DNNL_ARG_WEIGHTS, packed_[part.packed].get()};
    args[count++] = {DNNL_ARG_DST, mem[base + dst_arg]};
    if (mem[base + kBias] != nullptr) args[count++] = {DNNL_ARG_BIAS, mem[base + kBias]};
    if (kind.scratch) args[count++] = {DNNL_ARG_SCRATCHPAD, mem[base + kScratch]};
    if (runtime_src_zp_) {
      args[count++] = {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, mem[base + kSrcZp]};
    }
    INFERD_RETURN_IF_ERROR(cpu::Execute(prims.conv, absl::MakeConstSpan(args, count), 1, node,
                                        "running the int8 convolution"));
    if (kind.dst_reorder) {
      const dnnl_exec_arg_t rargs[] = {{DNNL_ARG_FROM, mem[base + kDst]},
                                       {DNNL_ARG_TO, mem[base + kDstPlain]}};
      INFERD_RETURN_IF_ERROR(
          cpu::Execute(prims.dst_reorder, rargs, 1, node, "reordering the int8 conv's dst"));
    }
    return absl::OkStatus();
  });
}

}  // namespace inferd::kernels::cpu

#include "kernels/cpu/matmul_primitive.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/cpu/onednn_util.h"

namespace inferd::kernels::cpu {
namespace {

// The view of `d` with dimension `dim` cut to `size` (same strides), unless `d` broadcasts
// there (size 1) or is absent.
dnnl::memory::desc Slice(const dnnl::memory::desc& d, int dim, int64_t size) {
  if (d.get_size() == 0 || d.dims()[dim] == 1) return d;
  dnnl::memory::dims dims = d.dims();
  dims[dim] = size;
  return dnnl::memory::desc(dims, d.data_type(), StridesOf(d));
}

// Byte offset of index `start` along `dim` of `d` (0 where it broadcasts or is absent).
int64_t Offset(const dnnl::memory::desc& d, int dim, int64_t start) {
  if (d.get_size() == 0 || d.dims()[dim] == 1) return 0;
  return start * StridesOf(d)[dim] * static_cast<int64_t>(sizeof(float));
}

enum class Axis { kNone, kBatch, kRows, kCols };

struct MatMulSplit {
  Axis axis = Axis::kNone;
  int dim = 0, count = 1;  // the dst dim split, the number of parts
};

// pass 1 of MakePlan: the axis to split, the one that gives the most parts (batch, then rows, on
// ties).
MatMulSplit ChooseMatMulSplit(const MatMulSpec& spec, int threads) {
  const dnnl::memory::dims dst = spec.dst.dims(), src = spec.src.dims(),
                           weights = spec.weights.dims();
  const int rank = static_cast<int>(dst.size());
  const int64_t m = dst[rank - 2], n = dst[rank - 1], k = src[rank - 1];
  double work = 2.0 * static_cast<double>(k);
  for (dnnl::memory::dim d : dst) work *= static_cast<double>(d);
  // A product of few rows (a decode step: M = 1..8) streams the whole weight matrix for little
  // arithmetic: memory, not FLOPs, sets its time. Each weight counts as kWeightWork FLOPs, about
  // what reading a float from L2 costs next to an AVX-512 FMA, so such a product is split over
  // the threads by columns (it was one part: 2 threads decoded no faster than 1).
  constexpr double kWeightWork = 16.0;
  work = std::max(work, kWeightWork * static_cast<double>(k) * static_cast<double>(n));
  const bool constant = spec.constant_weights != nullptr;
  MatMulSplit split;
  auto consider = [&](Axis a, int d, int64_t max_parts) {
    const int c = PartCount(threads, work, max_parts);
    if (c > split.count) split = MatMulSplit{a, d, c};
  };
  if (rank > 2 && (src[0] == dst[0] || src[0] == 1) &&
      (weights[0] == 1 || (weights[0] == dst[0] && !constant))) {
    consider(Axis::kBatch, 0, dst[0]);
  }
  consider(Axis::kRows, rank - 2, m / 16);
  consider(Axis::kCols, rank - 1, n / 64);
  return split;
}

// The primitive attributes: alpha as the output scale, beta as a sum post-op, then the eltwise
// post-ops.
dnnl::primitive_attr MatMulAttr(const MatMulSpec& spec) {
  dnnl::primitive_attr attr = UserScratchpadAttr();
  if (spec.alpha != 1.0f) attr.set_output_scales(0, {spec.alpha});
  if (spec.beta != 0.0f || !spec.post_ops.empty()) {
    dnnl::post_ops ops;
    if (spec.beta != 0.0f) ops.append_sum(spec.beta);
    AppendPostOps(spec.post_ops, ops);
    attr.set_post_ops(ops);
  }
  return attr;
}

}  // namespace

absl::StatusOr<MatMulPrimitive::Plan> MatMulPrimitive::MakePlan(const MatMulSpec& spec, int threads,
                                                                const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  const MatMulSplit split = ChooseMatMulSplit(spec, threads);
  // Prepacked unless the copies would be per column part of a plan built at run time.
  const bool constant = spec.constant_weights != nullptr &&
                        !(spec.packed_cache != nullptr && split.axis == Axis::kCols);
  const Axis axis = split.axis;
  const int dim = split.dim, count = split.count;
  const int64_t length = axis == Axis::kNone ? 1 : spec.dst.dims()[dim];

  // pass 2: parts of near-equal size (two sizes at most), one kind per size.
  Plan plan;
  plan.prepack_per_part = constant && axis == Axis::kCols;
  std::array<int, 2> kind_of_size = {-1, -1};  // [0]: the larger size, [1]: the smaller
  int64_t start = 0;
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the matmul", [&]() -> absl::Status {
    const dnnl::primitive_attr attr = MatMulAttr(spec);
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    for (int i = 0; i < count; ++i) {
      const int64_t size = length / count + (i < length % count ? 1 : 0);
      int& kind = kind_of_size[size == length / count ? 1 : 0];
      if (kind < 0) {
        Kind kd;
        if (axis == Axis::kNone) {
          kd.src = spec.src, kd.weights = spec.weights, kd.bias = spec.bias, kd.dst = spec.dst;
        } else {
          kd.src = axis == Axis::kCols ? spec.src : Slice(spec.src, dim, size);
          kd.weights = axis == Axis::kRows ? spec.weights : Slice(spec.weights, dim, size);
          kd.bias = axis == Axis::kRows ? spec.bias : Slice(spec.bias, dim, size);
          kd.dst = Slice(spec.dst, dim, size);
        }
        // Prepacked weights take the layout oneDNN prefers; parts of rows or batches then share
        // the first kind's copy when they can use its layout.
        dnnl::memory::desc weights_desc = kd.weights;
        if (constant) {
          weights_desc = plan.kinds.empty() || plan.prepack_per_part
                             ? AnyDesc(kd.weights.dims())
                             : plan.kinds[0].pd.weights_desc();
        }
        try {
          kd.pd = dnnl::matmul::primitive_desc(
              dnnl::matmul::desc(kd.src, weights_desc, kd.bias, kd.dst), attr, *eng);
        } catch (const dnnl::error&) {
          if (!constant || weights_desc.data.format_kind == dnnl_format_kind_any) throw;
          kd.pd = dnnl::matmul::primitive_desc(
              dnnl::matmul::desc(kd.src, AnyDesc(kd.weights.dims()), kd.bias, kd.dst), attr, *eng);
        }
        kd.scratchpad = kd.pd.scratchpad_desc().get_size();
        kind = static_cast<int>(plan.kinds.size());
        plan.kinds.push_back(std::move(kd));
      }
      Part part;
      part.kind = kind;
      if (axis != Axis::kNone) {
        part.src_offset = axis == Axis::kCols ? 0 : Offset(spec.src, dim, start);
        part.weights_offset = axis == Axis::kRows ? 0 : Offset(spec.weights, dim, start);
        part.bias_offset = axis == Axis::kRows ? 0 : Offset(spec.bias, dim, start);
        part.dst_offset = Offset(spec.dst, dim, start);
      }
      plan.region = std::max(plan.region, AlignUp(plan.kinds[kind].scratchpad));
      plan.parts.push_back(part);
      start += size;
    }
    return absl::OkStatus();
  }));
  plan.workspace = plan.region * static_cast<size_t>(Slots(threads, count));
  return plan;
}

MatMulPrimitive::RowProduct MatMulPrimitive::MakeRowProduct(const MatMulSpec& spec, int threads) {
  RowProduct row;
  // Weights prepacked for this plan (shapes known at load) are read as fast by the primitive.
  if (spec.constant_weights != nullptr && spec.packed_cache == nullptr) return row;
  const dnnl::memory::dims dst = spec.dst.dims(), weights = spec.weights.dims();
  const int rank = static_cast<int>(dst.size());
  for (int i = 0; i + 1 < rank; ++i) {
    if (dst[i] != 1) return row;  // more than one row
  }
  for (int i = 0; i + 2 < rank; ++i) {
    if (weights[i] != 1) return row;  // one weight matrix per batch
  }
  const dnnl::memory::dims src_strides = StridesOf(spec.src),
                           weight_strides = StridesOf(spec.weights),
                           dst_strides = StridesOf(spec.dst);
  row.k = weights[rank - 2];
  row.n = weights[rank - 1];
  if (dst_strides[rank - 1] != 1 && row.n > 1) return row;
  // The row as a 1 x K matrix, or (strided) as the transpose of a K x 1 one.
  if (src_strides[rank - 1] == 1 || row.k == 1) {
    row.trans_a = 'N', row.lda = row.k;
  } else {
    row.trans_a = 'T', row.lda = src_strides[rank - 1];
  }
  // The weights K x N row-major, or the transpose of N x K row-major (Gemm's transB).
  const int64_t k_stride = weight_strides[rank - 2], n_stride = weight_strides[rank - 1];
  if ((n_stride == 1 || row.n == 1) && (k_stride >= row.n || row.k == 1)) {
    row.trans_b = 'N', row.ldb = std::max<int64_t>(k_stride, row.n);
  } else if ((k_stride == 1 || row.k == 1) && n_stride >= row.k) {
    row.trans_b = 'T', row.ldb = n_stride;
  } else {
    return row;
  }
  row.has_bias = spec.bias.get_size() != 0;
  if (row.has_bias && StridesOf(spec.bias)[rank - 1] != 1 && row.n > 1) return row;
  row.alpha = spec.alpha;
  row.beta = spec.beta;
  row.post_ops = spec.post_ops;
  // Parts of columns as the primitive would split them but at most one a thread (fewer, longer
  // streams: decode at 2 threads 300 -> 330 tok/s on the 512-wide Llama), their bounds on 16
  // columns (a cache line).
  const MatMulSplit split = ChooseMatMulSplit(spec, threads);
  const int count = split.axis == Axis::kCols ? std::min(split.count, threads) : 1;
  for (int i = 0; i <= count; ++i) {
    const int64_t bound = i == count ? row.n : (row.n * i / count) / 16 * 16;
    if (row.bounds.empty() || bound > row.bounds.back()) row.bounds.push_back(bound);
  }
  row.enabled = true;
  return row;
}

absl::Status MatMulPrimitive::RunRowPart(int part, const float* src, const float* weights,
                                         const float* bias, float* dst,
                                         const NodeLabel& node) const {
  const RowProduct& r = row_;
  const int64_t c0 = r.bounds[part], cols = r.bounds[part + 1] - c0;
  float* y = dst + c0;
  float beta = r.beta;
  if (r.has_bias) {  // y = beta * y + alpha * bias, then the product added to it
    const float* b = bias + c0;
    for (int64_t j = 0; j < cols; ++j) y[j] = (beta != 0.0f ? beta * y[j] : 0.0f) + r.alpha * b[j];
    beta = 1.0f;
  }
  const float* w = weights + (r.trans_b == 'N' ? c0 : c0 * r.ldb);
  dnnl_status_t status;
  {
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    status =
        dnnl_sgemm(r.trans_a, r.trans_b, 1, cols, r.k, r.alpha, src, r.lda, w, r.ldb, beta, y, r.n);
  }
  if (status != dnnl_success) {
    return node.Internal(absl::StrCat("oneDNN sgemm failed (status ", static_cast<int>(status),
                                      ") on a row of ", r.k, " against ", r.k, "x", r.n));
  }
  if (!r.post_ops.empty()) {
    for (int64_t j = 0; j < cols; ++j) y[j] = ApplyPostOps(y[j], r.post_ops);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> MatMulPrimitive::WorkspaceBytes(const MatMulSpec& spec, int threads,
                                                       const NodeLabel& node) {
  if (MakeRowProduct(spec, threads).enabled) return size_t{0};
  INFERD_ASSIGN_OR_RETURN(Plan plan, MakePlan(spec, threads, node));
  return plan.workspace;
}

absl::StatusOr<std::shared_ptr<const MatMulPrimitive>> MatMulPrimitive::Build(
    const MatMulSpec& spec, int threads, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  std::shared_ptr<MatMulPrimitive> p(new MatMulPrimitive());
  p->row_ = MakeRowProduct(spec, threads);
  if (p->row_.enabled) return std::shared_ptr<const MatMulPrimitive>(std::move(p));
  INFERD_ASSIGN_OR_RETURN(p->plan_, MakePlan(spec, threads, node));
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the matmul", [&]() -> absl::Status {
    ScopedOmpThreads scoped(1);
    Plan& plan = p->plan_;
    for (const Kind& kind : plan.kinds) p->primitives_.emplace_back(kind.pd);
    // Prepacking: one copy per part for column parts, else one per distinct layout (from the
    // shared cache for plans built at run time).
    p->packed_shared_ = spec.packed_cache != nullptr;
    if (spec.constant_weights != nullptr) {
      const char* base = static_cast<const char*>(spec.constant_weights);
      for (Part& part : plan.parts) {
        const Kind& kind = plan.kinds[part.kind];
        if (kind.pd.weights_desc() == kind.weights) continue;  // plain is what it wants
        if (!plan.prepack_per_part) {
          for (const Part& other : plan.parts) {
            if (other.packed >= 0 &&
                p->packed_[other.packed].get_desc() == kind.pd.weights_desc()) {
              part.packed = other.packed;
              break;
            }
          }
          if (part.packed >= 0) continue;
        }
        part.packed = static_cast<int>(p->packed_.size());
        const void* at = base + part.weights_offset;
        p->packed_.push_back(
            spec.packed_cache != nullptr
                ? spec.packed_cache->GetOrPack(*eng, kind.weights, at, kind.pd.weights_desc())
                : ReorderWeights(*eng, kind.weights, at, kind.pd.weights_desc()));
      }
    }
    std::vector<dnnl::memory::desc> descs;
    for (const Part& part : plan.parts) {
      const Kind& kind = plan.kinds[part.kind];
      descs.insert(descs.end(), {kind.src, part.packed >= 0 ? dnnl::memory::desc() : kind.weights,
                                 kind.bias, kind.dst, kind.pd.scratchpad_desc()});
    }
    p->memories_ = std::make_unique<MemoryPool>(std::move(descs));
    return absl::OkStatus();
  }));
  return std::shared_ptr<const MatMulPrimitive>(std::move(p));
}

absl::Status MatMulPrimitive::RunPart(int index, const MemoryPool::Lease& mem,
                                      const NodeLabel& node) const {
  const Part& part = plan_.parts[index];
  const Kind& kind = plan_.kinds[part.kind];
  const int base = index * kNumArgs;
  dnnl_exec_arg_t args[kNumArgs];
  int n = 0;
  args[n++] = {DNNL_ARG_SRC, mem[base + kSrc]};
  args[n++] = {DNNL_ARG_WEIGHTS,
               part.packed >= 0 ? packed_[part.packed].get() : mem[base + kWeights]};
  if (kind.bias.get_size() != 0) args[n++] = {DNNL_ARG_BIAS, mem[base + kBias]};
  args[n++] = {DNNL_ARG_DST, mem[base + kDst]};
  if (kind.scratchpad != 0) args[n++] = {DNNL_ARG_SCRATCHPAD, mem[base + kScratchpad]};
  return cpu::Execute(primitives_[part.kind], absl::MakeConstSpan(args, n), 1, node,
                      "running the matmul");
}

absl::Status MatMulPrimitive::Execute(engine::KernelContext& ctx, const void* src,
                                      const void* weights, const void* bias, void* dst,
                                      const NodeLabel& node) const {
  if (row_.enabled) {
    return RunParts(ctx.threads(), parts(), [&](int i, int) {
      return RunRowPart(i, static_cast<const float*>(src), static_cast<const float*>(weights),
                        static_cast<const float*>(bias), static_cast<float*>(dst), node);
    });
  }
  INFERD_ASSIGN_OR_RETURN(void* workspace, ScratchpadFor(ctx, plan_.workspace, node));
  INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, memories_->Acquire(node));
  INFERD_RETURN_IF_ERROR(BindOperands(mem, plan_.parts, {kSrc, kWeights, kBias, kDst, kNumArgs},
                                      src, weights, bias, dst, node));
  return RunParts(ctx.threads(), parts(), [&](int i, int slot) -> absl::Status {
    if (plan_.kinds[plan_.parts[i].kind].scratchpad != 0) {
      INFERD_RETURN_IF_ERROR(mem.Bind(i * kNumArgs + kScratchpad,
                                      static_cast<char*>(workspace) + slot * plan_.region, node));
    }
    return RunPart(i, mem, node);
  });
}

}  // namespace inferd::kernels::cpu

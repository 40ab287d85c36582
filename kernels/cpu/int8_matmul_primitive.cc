#include "kernels/cpu/int8_matmul_primitive.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace inferd::kernels::cpu {
namespace {

using dt = dnnl::memory::data_type;

dnnl::memory::desc Plain3(int64_t b, int64_t rows, int64_t cols, dt type) {
  return dnnl::memory::desc({b, rows, cols}, type, dnnl::memory::format_tag::abc);
}

}  // namespace

bool Int8MatMulPrimitive::Available() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [isa](dnnl_cpu_isa_t want) {
    return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
  };
  return has(dnnl_cpu_isa_avx512_core_vnni) || has(dnnl_cpu_isa_avx2_vnni);
}

absl::StatusOr<std::shared_ptr<const Int8MatMulPrimitive>> Int8MatMulPrimitive::Build(
    const Int8MatMulSpec& spec, int threads, const NodeLabel& node) {
  INFERD_ASSIGN_OR_RETURN(const dnnl::engine* eng, CpuEngine());
  // pass 1: a B shared by the whole batch folds the batch into A's rows.
  int64_t batch = spec.batch, batch_a = spec.batch_a, m = spec.m;
  const int64_t k = spec.k, n = spec.n, batch_b = spec.batch_b;
  if (batch_b == 1 && batch_a == batch) {
    m *= batch;
    batch = batch_a = 1;
  }
  // pass 2: the split, over the batch when there is one, else over the rows.
  const double work = 2.0 * static_cast<double>(batch) * static_cast<double>(m) *
                      static_cast<double>(k) * static_cast<double>(n);
  const bool by_batch = batch > 1;
  const int64_t length = by_batch ? batch : m;
  const int count = PartCount(threads, work, by_batch ? batch : std::max<int64_t>(1, m / 16));
  const dt a_type = spec.a_signed ? dt::s8 : dt::u8;
  const bool constant = spec.constant_b != nullptr;

  std::shared_ptr<Int8MatMulPrimitive> p(new Int8MatMulPrimitive());
  INFERD_RETURN_IF_ERROR(CatchDnnl(node, "creating the int8 matmul", [&]() -> absl::Status {
    ScopedOmpThreads scoped(1);  // parallelism is the parts'
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    int kind_of_size[2] = {-1, -1};  // [0]: the larger size, [1]: the smaller
    int64_t start = 0;
    for (int i = 0; i < count; ++i) {
      const int64_t size = length / count + (i < length % count ? 1 : 0);
      int& kind = kind_of_size[size == length / count ? 1 : 0];
      if (kind < 0) {
        Kind kd;
        const int64_t pb = by_batch ? size : 1, pm = by_batch ? m : size;
        kd.src = Plain3(batch_a == 1 ? 1 : pb, pm, k, a_type);
        kd.weights = Plain3(batch_b == 1 ? 1 : pb, k, n, dt::s8);
        kd.dst = Plain3(pb, pm, n, dt::s32);
        dnnl::memory::desc weights_desc = kd.weights;
        if (constant && batch_b == 1) {
          weights_desc =
              dnnl::memory::desc(kd.weights.dims(), dt::s8, dnnl::memory::format_tag::any);
        }
        kd.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(kd.src, weights_desc, kd.dst), attr,
                                             *eng);
        kd.scratchpad = kd.pd.scratchpad_desc().get_size();
        if (constant) {
          if (kd.pd.weights_desc() == kd.weights) {
            kd.packed = -1;  // plain is what it wants: bind the constant
          } else {
            for (size_t j = 0; j < p->packed_.size(); ++j) {
              if (p->packed_[j].get_desc() == kd.pd.weights_desc()) kd.packed = static_cast<int>(j);
            }
            if (kd.packed < 0) {
              kd.packed = static_cast<int>(p->packed_.size());
              p->packed_.push_back(
                  ReorderWeights(*eng, kd.weights, spec.constant_b, kd.pd.weights_desc()));
            }
          }
        }
        kind = static_cast<int>(p->kinds_.size());
        p->region_ = std::max(p->region_, AlignUp(kd.scratchpad));
        p->kinds_.push_back(std::move(kd));
      }
      Part part;
      part.kind = kind;
      if (by_batch) {
        part.a_offset = batch_a == 1 ? 0 : start * m * k;
        part.b_offset = batch_b == 1 ? 0 : start * k * n;
        part.p_offset = start * m * n * static_cast<int64_t>(sizeof(int32_t));
      } else {
        part.a_offset = start * k;
        part.p_offset = start * n * static_cast<int64_t>(sizeof(int32_t));
      }
      p->parts_.push_back(part);
      start += size;
    }
    for (const Kind& kd : p->kinds_) p->primitives_.emplace_back(kd.pd);
    std::vector<dnnl::memory::desc> descs;
    for (const Part& part : p->parts_) {
      const Kind& kd = p->kinds_[part.kind];
      descs.insert(descs.end(), {kd.src, kd.packed >= 0 ? dnnl::memory::desc() : kd.weights, kd.dst,
                                 kd.pd.scratchpad_desc()});
    }
    p->memories_ = std::make_unique<MemoryPool>(std::move(descs));
    return absl::OkStatus();
  }));
  p->workspace_ = p->region_ * static_cast<size_t>(Slots(threads, count));
  return std::shared_ptr<const Int8MatMulPrimitive>(std::move(p));
}

absl::Status Int8MatMulPrimitive::Execute(engine::ThreadPool& pool, const void* a, const int8_t* b,
                                          int32_t* p, void* scratchpad,
                                          const NodeLabel& node) const {
  if (workspace_ != 0 && scratchpad == nullptr) {
    return node.Internal("the int8 matmul's scratchpad is missing");
  }
  INFERD_ASSIGN_OR_RETURN(MemoryPool::Lease mem, memories_->Acquire(node));
  const auto* a8 = static_cast<const char*>(a);
  const auto* b8 = reinterpret_cast<const char*>(b);
  auto* p8 = reinterpret_cast<char*>(p);
  for (size_t i = 0; i < parts_.size(); ++i) {
    const Part& part = parts_[i];
    const int base = static_cast<int>(i) * kNumArgs;
    INFERD_RETURN_IF_ERROR(mem.Bind(base + kSrc, a8 + part.a_offset, node));
    if (kinds_[part.kind].packed < 0) {
      INFERD_RETURN_IF_ERROR(mem.Bind(base + kWeights, b8 + part.b_offset, node));
    }
    INFERD_RETURN_IF_ERROR(mem.Bind(base + kDst, p8 + part.p_offset, node));
  }
  return RunParts(pool, static_cast<int>(parts_.size()), [&](int i, int slot) -> absl::Status {
    const Part& part = parts_[i];
    const Kind& kind = kinds_[part.kind];
    const int base = i * kNumArgs;
    if (kind.scratchpad != 0) {
      INFERD_RETURN_IF_ERROR(
          mem.Bind(base + kScratchpad, static_cast<char*>(scratchpad) + slot * region_, node));
    }
    dnnl_exec_arg_t args[kNumArgs];
    int count = 0;
    args[count++] = {DNNL_ARG_SRC, mem[base + kSrc]};
    args[count++] = {DNNL_ARG_WEIGHTS,
                     kind.packed >= 0 ? packed_[kind.packed].get() : mem[base + kWeights]};
    args[count++] = {DNNL_ARG_DST, mem[base + kDst]};
    if (kind.scratchpad != 0) args[count++] = {DNNL_ARG_SCRATCHPAD, mem[base + kScratchpad]};
    return cpu::Execute(primitives_[part.kind], absl::MakeConstSpan(args, count), 1, node,
                        "running the int8 matmul");
  });
}

}  // namespace inferd::kernels::cpu
